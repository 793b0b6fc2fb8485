package cli

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/gsq-project/gsq/a2s"
)

// object is a JSON object whose keys keep the order they were added in,
// so the output matches the documented field order of DESIGN.md and reads
// the same on every run. Fields a server did not send are simply not added.
type object []field

type field struct {
	key   string
	value any
}

// set appends key with value.
func (o *object) set(key string, value any) { *o = append(*o, field{key, value}) }

// text adds a string the server sent as raw bytes. Valid UTF-8 goes out as
// is; anything else goes out as a lossy UTF-8 string plus a base64 twin
// (key_b64) that keeps the exact bytes.
func (o *object) text(key string, raw []byte) {
	if utf8.Valid(raw) {
		o.set(key, string(raw))
		return
	}
	o.set(key, string(bytes.ToValidUTF8(raw, []byte("\uFFFD"))))
	o.set(key+"_b64", base64.StdEncoding.EncodeToString(raw))
}

// MarshalJSON writes the fields in order.
func (o object) MarshalJSON() ([]byte, error) { return appendJSON(nil, o), nil }

// appendJSON appends v as json.Marshal would (which is what
// object.MarshalJSON produces), without reflection for the types the result objects
// hold: at thousands of results a second, object.MarshalJSON's
// marshal-per-field and re-compaction of nested objects cost more than
// the queries.
func appendJSON(b []byte, v any) []byte {
	switch v := v.(type) {
	case object:
		b = append(b, '{')
		for i, f := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, f.key)
			b = append(b, ':')
			b = appendJSON(b, f.value)
		}
		return append(b, '}')
	case []object:
		if v == nil {
			return append(b, "null"...)
		}
		b = append(b, '[')
		for i, o := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSON(b, o)
		}
		return append(b, ']')
	case string:
		return appendJSONString(b, v)
	case playerList:
		return appendPlayers(b, v.p)
	case ruleList:
		return appendRules(b, v.r)
	case bool:
		return strconv.AppendBool(b, v)
	case nil:
		return append(b, "null"...)
	case int:
		return strconv.AppendInt(b, int64(v), 10)
	case int32:
		return strconv.AppendInt(b, int64(v), 10)
	case uint8:
		return strconv.AppendUint(b, uint64(v), 10)
	case uint16:
		return strconv.AppendUint(b, uint64(v), 10)
	case uint32:
		return strconv.AppendUint(b, uint64(v), 10)
	case uint64:
		return strconv.AppendUint(b, v, 10)
	case float64:
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			return appendJSONFloat(b, v)
		}
	}
	data, err := json.Marshal(v)
	if err != nil {
		return appendJSONString(b, err.Error())
	}
	return append(b, data...)
}

// appendJSONFloat formats as encoding/json does: plain decimals, and an
// exponent only for very small or very large magnitudes.
func appendJSONFloat(b []byte, f float64) []byte {
	abs := math.Abs(f)
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		data, _ := json.Marshal(f) // rare: keep encoding/json's exponent format
		return append(b, data...)
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64)
}

// appendJSONString appends s quoted, escaping as encoding/json does with
// SetEscapeHTML(false): quotes, backslashes, control characters, U+2028
// and U+2029, and invalid UTF-8 as U+FFFD. A command line's JSON is not
// HTML, so <, > and & stay as they are.
func appendJSONString(b []byte, s string) []byte {
	if plainASCII(s) {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// playerList and ruleList are lists that appendJSON encodes straight
// from the replies, into the output buffer.
type (
	playerList struct{ p *a2s.Players }
	ruleList   struct{ r *a2s.Rules }
)

// appendPlayers encodes the list as playersJSON builds it.
func appendPlayers(b []byte, p *a2s.Players) []byte {
	b = append(b, '[')
	for i, pl := range p.List {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"index":`...)
		b = strconv.AppendUint(b, uint64(pl.Index), 10)
		b = appendTextField(b, ",", "name", pl.Name)
		b = append(b, `,"score":`...)
		b = strconv.AppendInt(b, int64(pl.Score), 10)
		b = append(b, `,"duration":`...)
		b = appendJSON(b, roundFloat(float64(pl.Duration), 3))
		if p.Ship {
			b = append(b, `,"deaths":`...)
			b = strconv.AppendInt(b, int64(pl.Deaths), 10)
			b = append(b, `,"money":`...)
			b = strconv.AppendInt(b, int64(pl.Money), 10)
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendRules encodes the list as rulesJSON builds it.
func appendRules(b []byte, r *a2s.Rules) []byte {
	b = append(b, '[')
	for i, rule := range r.List {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendTextField(b, "{", "name", rule.Name)
		b = appendTextField(b, ",", "value", rule.Value)
		b = append(b, '}')
	}
	return append(b, ']')
}

// jsonPlain marks the bytes a JSON string holds as they are: printable
// ASCII but for the quote and the backslash.
var jsonPlain = func() (t [256]bool) {
	for c := 0x20; c < 0x7F; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// plainASCII reports whether s goes into a JSON string unescaped (most
// names and rules do).
func plainASCII(s string) bool {
	for i := range len(s) {
		if !jsonPlain[s[i]] {
			return false
		}
	}
	return true
}

// appendTextField appends sep and the field key: raw as object.text
// does: the string, plus a base64 twin when raw is not UTF-8.
func appendTextField(b []byte, sep, key string, raw []byte) []byte {
	b = append(b, sep...)
	b = appendJSONString(b, key)
	b = append(b, ':')
	if s := unsafe.String(unsafe.SliceData(raw), len(raw)); plainASCII(s) {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	if utf8.Valid(raw) {
		return appendJSONBytes(b, raw)
	}
	b = appendJSONBytes(b, bytes.ToValidUTF8(raw, []byte("\uFFFD")))
	b = append(b, ',')
	b = appendJSONString(b, key+"_b64")
	b = append(b, ':', '"')
	b = base64.StdEncoding.AppendEncode(b, raw)
	return append(b, '"')
}

// appendJSONBytes is appendJSONString for a byte slice, without copying
// it to a string.
func appendJSONBytes(b []byte, s []byte) []byte {
	return appendJSONString(b, unsafe.String(unsafe.SliceData(s), len(s)))
}
