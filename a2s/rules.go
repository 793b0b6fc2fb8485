package a2s

import (
	"bytes"
	"fmt"
	"math"

	"github.com/gsq-project/gsq/internal/wire"
)

// Rule is one name/value pair of an A2S_RULES reply. Both are raw bytes:
// Arma 3 and DayZ send binary values under 2-byte binary names.
type Rule struct {
	Name  Text
	Value Text
}

// Rules is an A2S_RULES reply.
type Rules struct {
	Count uint16 // the count as sent; it may disagree with len(List)
	List  []Rule // in packet order, duplicates kept
	// Raw is a copy of the bytes after the count: the rule entries exactly
	// as sent. The Name and Value slices point into it.
	Raw []byte
}

// ParseRules parses an A2S_RULES reply (b includes the 0xFFFFFFFF header).
// Entries are read to the end of the packet, whatever Count says. If the
// packet ends inside an entry (servers truncate rules at the MTU), the
// entries before it are returned together with a *ParseError wrapping
// ErrTruncated; the partial Rules is nil only when the header itself is
// bad. The result does not alias b.
func ParseRules(b []byte) (*Rules, error) { return parseRules(b, false) }

// ParseRulesOwned is ParseRules for a buffer the caller hands over, such
// as a reply returned by [Reassembler.Add]: Raw, and the names and values,
// alias b instead of a copy of it, so b must not be modified afterwards.
func ParseRulesOwned(b []byte) (*Rules, error) { return parseRules(b, true) }

// parseRules is ParseRules; when owned, Raw aliases b instead of a copy of
// it.
func parseRules(b []byte, owned bool) (*Rules, error) {
	r, _, err := openSimple(b, "rules", string(TypeRulesReply))
	if err != nil {
		return nil, err
	}
	count, err := r.Uint16()
	if err != nil {
		return nil, parseErr("rules", r.Offset(), err)
	}
	const bodyOff = 7 // header, type, count
	rs := &Rules{Count: count, Raw: r.Rest()}
	if !owned {
		rs.Raw = bytes.Clone(rs.Raw)
	}
	d := decoder{r: wire.NewReader(rs.Raw), packet: "rules"}
	// Each entry needs at least two NULs; count them to size List once.
	rs.List = make([]Rule, 0, min(int(count), bytes.Count(rs.Raw, []byte{0})/2))
	for d.r.Len() > 0 {
		name := d.text()
		value := d.text()
		if d.err != nil {
			pe := d.err.(*ParseError)
			pe.Offset += bodyOff
			return rs, pe
		}
		rs.List = append(rs.List, Rule{Name: name, Value: value})
	}
	return rs, nil
}

// Get returns the value of the first rule named name.
func (r *Rules) Get(name string) (Text, bool) {
	for _, rl := range r.List {
		if string(rl.Name) == name {
			return rl.Value, true
		}
	}
	return nil, false
}

// AppendBinary appends the reply, header included, from List (Raw is not
// used). The count is Count, or len(List) when Count is 0. Names and values
// must not contain NUL bytes.
func (r *Rules) AppendBinary(b []byte) ([]byte, error) {
	count := r.Count
	if count == 0 {
		if len(r.List) > math.MaxUint16 {
			return b, fmt.Errorf("%w: %d rules", ErrTooLarge, len(r.List))
		}
		count = uint16(len(r.List))
	}
	e := encoder{b: wire.AppendUint32(b, HeaderSimple)}
	e.u8(TypeRulesReply)
	e.u16(count)
	for _, rl := range r.List {
		e.text(rl.Name)
		e.text(rl.Value)
	}
	return e.result(b)
}
