package serverlist

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// Bounds of a filter, checked by [Parse] before anything grows: a filter
// is a few dozen bytes in practice, and a partitioned Web API request a
// few hundred.
const (
	MaxFilterLen = 4096 // bytes
	MaxTerms     = 256  // conditions, operators included
	MaxDepth     = 16   // operators inside operators
)

// Errors of [Parse] and [Filter.Check], inside a [*ParseError].
var (
	// ErrSyntax means the text is not a run of `\key\value` pairs: it
	// does not start with a backslash, or a key has no value.
	ErrSyntax = errors.New("serverlist: not a \\key\\value filter")
	// ErrTooLarge means the filter is longer than MaxFilterLen, has more
	// than MaxTerms conditions or nests deeper than MaxDepth.
	ErrTooLarge = errors.New("serverlist: filter too large")
	// ErrShortGroup means a `\nor\N` or `\nand\N` is followed by fewer
	// than N conditions, or N is not a count.
	ErrShortGroup = errors.New("serverlist: operator without its conditions")
	// ErrNUL means the filter holds a NUL byte, which ends it on the wire
	// (trailing NULs, a carry-over of the UDP format, are trimmed).
	ErrNUL = errors.New("serverlist: NUL byte in filter")
	// ErrUnknownKey means [Filter.Check] met a key this package does not
	// know. A list may know it (filters are advisory); a typo is likelier.
	ErrUnknownKey = errors.New("serverlist: unknown filter key")
	// ErrBadValue means [Filter.Check] met a value its key cannot take:
	// an appid that is not a number, a flag that is not 0 or 1.
	ErrBadValue = errors.New("serverlist: bad filter value")
)

// ParseError reports a filter that does not read, or that [Filter.Check]
// rejects: where, and why.
type ParseError struct {
	Offset int   // byte offset in the filter text
	Err    error // the cause, one of the sentinels above
}

// Error returns "serverlist: parse filter at offset N: <cause>".
func (e *ParseError) Error() string {
	return fmt.Sprintf("serverlist: parse filter at offset %d: %s", e.Offset, strings.TrimPrefix(e.Err.Error(), "serverlist: "))
}

// Unwrap returns the cause.
func (e *ParseError) Unwrap() error { return e.Err }

// Operators: keys whose value counts the conditions after them.
const (
	KeyNor  = "nor"  // none of the next N conditions holds
	KeyNand = "nand" // not all of the next N conditions hold
)

// Filter is a parsed filter: every Term must hold. The zero value matches
// every server.
type Filter struct {
	Terms []Term
}

// Term is one condition of a filter: Key and Value (`\map\de_dust2`), or
// an operator (Key KeyNor or KeyNand) over Terms, whose count its value
// states on the wire.
type Term struct {
	Key   string // lower case
	Value string // for an operator, ignored: the count of Terms is written
	Terms []Term // an operator's conditions
	off   int    // where the key starts in the parsed text, for Check
}

// Cond returns the condition `\key\value`. The key's ASCII letters are
// lower-cased.
func Cond(key, value string) Term { return Term{Key: lowerASCII(key), Value: value} }

// Nor returns the condition that none of terms holds: `\nor\N` and terms.
func Nor(terms ...Term) Term { return Term{Key: KeyNor, Terms: terms} }

// Nand returns the condition that not all of terms hold: `\nand\N` and
// terms.
func Nand(terms ...Term) Term { return Term{Key: KeyNand, Terms: terms} }

// IsOperator reports whether t is a `\nor\` or a `\nand\`.
func (t Term) IsOperator() bool { return t.Key == KeyNor || t.Key == KeyNand }

// And returns a filter holding f's terms and then terms, f unchanged.
func (f Filter) And(terms ...Term) Filter {
	out := make([]Term, 0, len(f.Terms)+len(terms))
	return Filter{Terms: append(append(out, f.Terms...), terms...)}
}

// ForApp returns f with `\appid\id` in front, the condition that picks a
// game's servers; ok is false, and f unchanged, when f has an appid
// condition of its own (at its top: one inside an operator is the
// caller's to mean).
func (f Filter) ForApp(id uint32) (_ Filter, ok bool) {
	for _, t := range f.Terms {
		if t.Key == "appid" {
			return f, false
		}
	}
	return Filter{}.And(append([]Term{Cond("appid", strconv.FormatUint(uint64(id), 10))}, f.Terms...)...), true
}

// String writes the filter as a list takes it: `\appid\730\empty\1`, an
// operator's count being its number of Terms. The zero Filter is "".
func (f Filter) String() string {
	var b strings.Builder
	appendTerms(&b, f.Terms)
	return b.String()
}

func appendTerms(b *strings.Builder, terms []Term) {
	for _, t := range terms {
		b.WriteByte('\\')
		b.WriteString(t.Key)
		b.WriteByte('\\')
		if t.IsOperator() {
			b.WriteString(strconv.Itoa(len(t.Terms)))
			appendTerms(b, t.Terms)
		} else {
			b.WriteString(t.Value)
		}
	}
}

// Parse reads a filter. Trailing NUL bytes are trimmed (the UDP format
// ends the filter with one, and a Web API request must not carry it), a
// trailing backslash that would start a key is ignored (`\appid\730\`),
// and keys are lower-cased. Parse
// checks the syntax and the bounds only: a key it does not know still
// reads, for a list may know it; [Filter.Check] is the stricter test a
// client runs before sending. The empty string is the filter that matches
// every server.
func Parse(s string) (Filter, error) {
	s = strings.TrimRight(s, "\x00")
	if len(s) > MaxFilterLen {
		return Filter{}, &ParseError{Offset: MaxFilterLen, Err: fmt.Errorf("%w: %d bytes, the limit is %d", ErrTooLarge, len(s), MaxFilterLen)}
	}
	if i := strings.IndexByte(s, 0); i >= 0 {
		return Filter{}, &ParseError{Offset: i, Err: ErrNUL}
	}
	if s == "" {
		return Filter{}, nil
	}
	if s[0] != '\\' {
		return Filter{}, &ParseError{Offset: 0, Err: ErrSyntax}
	}
	if len(s) == 1 {
		return Filter{}, nil
	}
	body := s[1:]
	if strings.Count(body, `\`)%2 == 0 && strings.HasSuffix(body, `\`) {
		body = body[:len(body)-1] // an odd token, empty: a trailing backslash
	}
	p := parser{s: `\` + body + `\`, pos: 1}
	var terms []Term
	for p.pos < len(p.s) {
		t, err := p.term(0)
		if err != nil {
			return Filter{}, err
		}
		terms = append(terms, t)
	}
	return Filter{Terms: terms}, nil
}

// parser reads s, which ends with a backslash, from pos (just past a
// backslash).
type parser struct {
	s     string
	pos   int
	terms int
}

// token returns the text up to the next backslash, and moves past it.
func (p *parser) token() (tok string, at int, ok bool) {
	if p.pos >= len(p.s) {
		return "", p.pos, false
	}
	at = p.pos
	i := strings.IndexByte(p.s[at:], '\\')
	tok, p.pos = p.s[at:at+i], at+i+1
	return tok, at, true
}

// term reads one condition, an operator with its conditions, at depth.
func (p *parser) term(depth int) (Term, error) {
	if depth > MaxDepth {
		return Term{}, &ParseError{Offset: p.pos, Err: fmt.Errorf("%w: operators nested deeper than %d", ErrTooLarge, MaxDepth)}
	}
	if p.terms++; p.terms > MaxTerms {
		return Term{}, &ParseError{Offset: p.pos, Err: fmt.Errorf("%w: more than %d conditions", ErrTooLarge, MaxTerms)}
	}
	key, at, _ := p.token()
	value, vat, ok := p.token()
	if !ok {
		return Term{}, &ParseError{Offset: at, Err: fmt.Errorf("%w: key %q has no value", ErrSyntax, key)}
	}
	t := Term{Key: lowerASCII(key), Value: value, off: at}
	if !t.IsOperator() {
		return t, nil
	}
	n, err := strconv.Atoi(value)
	if err != nil || n < 0 || n > MaxTerms {
		return Term{}, &ParseError{Offset: vat, Err: fmt.Errorf("%w: %q is not a count", ErrShortGroup, value)}
	}
	t.Terms = make([]Term, 0, min(n, 8))
	for range n {
		if p.pos >= len(p.s) {
			return Term{}, &ParseError{Offset: at, Err: fmt.Errorf("%w: \\%s\\%d is followed by %d", ErrShortGroup, t.Key, n, len(t.Terms))}
		}
		sub, err := p.term(depth + 1)
		if err != nil {
			return Term{}, err
		}
		t.Terms = append(t.Terms, sub)
	}
	t.Value = strconv.Itoa(n)
	return t, nil
}

// A key's kind says which values it takes.
type keyKind uint8

const (
	kindText  keyKind = iota + 1 // any text
	kindFlag                     // 0 or 1
	kindAppID                    // a number
	kindAddr                     // an IP address, with or without a port
	kindType                     // d, l or p
	kindOp                       // a count (checked by Parse)
)

// keys are the keys this package knows (ValvePython/steam
// steam/game_servers.py's table; `\type\` from older docs, which qstat
// still sends; `\addr\` from the Web API's users), with their kinds.
var keys = map[string]keyKind{
	"appid": kindAppID, "napp": kindAppID,
	"gamedir": kindText, "map": kindText, "gametype": kindText, "gamedata": kindText, "gamedataor": kindText,
	"name_match": kindText, "version_match": kindText,
	"dedicated": kindFlag, "secure": kindFlag, "linux": kindFlag, "password": kindFlag, "proxy": kindFlag,
	"white": kindFlag, "empty": kindFlag, "full": kindFlag, "noplayers": kindFlag, "collapse_addr_hash": kindFlag,
	"gameaddr": kindAddr, "addr": kindAddr,
	"type": kindType,
	KeyNor: kindOp, KeyNand: kindOp,
}

// Keys returns the keys [Filter.Check] accepts, sorted.
func Keys() []string {
	out := make([]string, 0, len(keys))
	for k := range keys {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Check reports the first condition whose key this package does not know
// ([ErrUnknownKey]) or whose value its key cannot take ([ErrBadValue]),
// as a [*ParseError] with the key's offset in the parsed text (0 for
// terms built in code). A client checks a user's filter before sending
// it, so that a typo fails at once instead of listing every server.
func (f Filter) Check() error { return checkTerms(f.Terms) }

func checkTerms(terms []Term) error {
	for _, t := range terms {
		kind, ok := keys[t.Key]
		if !ok {
			return &ParseError{Offset: t.off, Err: fmt.Errorf("%w %q (known: %s)", ErrUnknownKey, t.Key, strings.Join(Keys(), ", "))}
		}
		if !validValue(kind, t.Value) {
			return &ParseError{Offset: t.off, Err: fmt.Errorf("%w: \\%s\\%s", ErrBadValue, t.Key, t.Value)}
		}
		if err := checkTerms(t.Terms); err != nil {
			return err
		}
	}
	return nil
}

func validValue(kind keyKind, v string) bool {
	switch kind {
	case kindFlag:
		return v == "0" || v == "1"
	case kindAppID:
		_, err := strconv.ParseUint(v, 10, 32)
		return err == nil
	case kindAddr:
		_, _, ok := parseAddr(v)
		return ok
	case kindType:
		return v == "d" || v == "l" || v == "p"
	}
	return true
}

// parseAddr reads "ip" or "ip:port"; port is 0 when absent.
func parseAddr(v string) (netip.Addr, uint16, bool) {
	if ap, err := netip.ParseAddrPort(v); err == nil {
		return ap.Addr().Unmap(), ap.Port(), true
	}
	a, err := netip.ParseAddr(v)
	return a.Unmap(), 0, err == nil
}

// lowerASCII lower-cases the ASCII letters of s, and only them: a key's
// other bytes stay as they are, so its length does not change.
func lowerASCII(s string) string {
	for i := range len(s) {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				b[j] = lower(b[j])
			}
			return string(b)
		}
	}
	return s
}
