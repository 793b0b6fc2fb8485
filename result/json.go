package result

import (
	"encoding/base64"
	"math"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/gsq-project/gsq/internal/textenc"
)

// The encoder below writes JSON straight into a byte slice, with no
// reflection and no intermediate tree: a scan encodes thousands of results
// a second, and encoding/json's reflection would then cost more than the
// queries. Its output is what encoding/json produces with SetEscapeHTML
// (false) for the same values (the tests hold it to that).

// object appends the members of one JSON object to b. Keys are constants
// of this package: plain ASCII that needs no escaping.
type object struct {
	b     []byte
	comma bool
}

// beginObject appends '{' to b and returns the object being written.
func beginObject(b []byte) object { return object{b: append(b, '{')} }

// end appends '}' and returns the whole buffer.
func (o *object) end() []byte { return append(o.b, '}') }

// key appends the separator and "k":.
func (o *object) key(k string) {
	if o.comma {
		o.b = append(o.b, ',')
	}
	o.comma = true
	o.b = append(o.b, '"')
	o.b = append(o.b, k...)
	o.b = append(o.b, '"', ':')
}

// anyKey is key for a key that may need escaping.
func (o *object) anyKey(k string) {
	if o.comma {
		o.b = append(o.b, ',')
	}
	o.comma = true
	o.b = append(appendString(o.b, k), ':')
}

func (o *object) str(k, v string) {
	o.key(k)
	o.b = appendString(o.b, v)
}

func (o *object) int(k string, v int64) {
	o.key(k)
	o.b = strconv.AppendInt(o.b, v, 10)
}

func (o *object) uint(k string, v uint64) {
	o.key(k)
	o.b = strconv.AppendUint(o.b, v, 10)
}

func (o *object) bool(k string, v bool) {
	o.key(k)
	o.b = strconv.AppendBool(o.b, v)
}

// float appends v, or leaves the member out when v is not a finite
// number, which JSON cannot hold.
func (o *object) float(k string, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	o.key(k)
	o.b = appendFloat(o.b, v)
}

// text appends a string the server sent as raw bytes: valid UTF-8 as is;
// anything else decoded for display (each stray byte read as Latin-1) and
// followed by a base64 twin, k_b64, holding the exact bytes.
func (o *object) text(k string, raw []byte) {
	o.key(k)
	s := unsafe.String(unsafe.SliceData(raw), len(raw)) // read only, not retained
	if plainASCII(s) {
		o.b = append(o.b, '"')
		o.b = append(o.b, s...)
		o.b = append(o.b, '"')
		return
	}
	if utf8.ValidString(s) {
		o.b = appendString(o.b, s)
		return
	}
	o.b = appendString(o.b, textenc.Decode(raw))
	o.key(k + "_b64")
	o.b = appendBase64(o.b, raw)
}

// appendBase64 appends raw as a base64 JSON string.
func appendBase64(b, raw []byte) []byte {
	b = append(b, '"')
	b = base64.StdEncoding.AppendEncode(b, raw)
	return append(b, '"')
}

// list appends a JSON array of n objects under key k, item writing the
// members of object i.
func (o *object) list(k string, n int, item func(e *object, i int)) {
	o.key(k)
	o.b = appendList(o.b, n, item)
}

// appendList appends a JSON array of n objects, item writing the members
// of object i.
func appendList(b []byte, n int, item func(e *object, i int)) []byte {
	b = append(b, '[')
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		e := beginObject(b)
		item(&e, i)
		b = e.end()
	}
	return append(b, ']')
}

// strings appends a list of strings.
func (o *object) strings(k string, list []string) {
	o.key(k)
	o.b = append(o.b, '[')
	for i, s := range list {
		if i > 0 {
			o.b = append(o.b, ',')
		}
		o.b = appendString(o.b, s)
	}
	o.b = append(o.b, ']')
}

// appendFloat formats f as encoding/json does: the shortest decimal that
// reads back as f, with an exponent only below 1e-6 and from 1e21.
func appendFloat(b []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// Shorten e-09 to e-9, as encoding/json does.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// round rounds f to n decimals, so that float32 noise (123.40000152) and
// nanoseconds do not reach the output.
func round(f float64, n int) float64 {
	p := math.Pow10(n)
	return math.Round(f*p) / p
}

// appendString appends s quoted, escaped as encoding/json does with
// SetEscapeHTML(false): quotes, backslashes, control characters, U+2028
// and U+2029, and each byte of invalid UTF-8 as U+FFFD. JSON on a command
// line is not HTML, so <, > and & stay as they are.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	if plainASCII(s) {
		b = append(b, s...)
		return append(b, '"')
	}
	const hex = "0123456789abcdef"
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonPlain[c] {
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
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// jsonPlain marks the bytes a JSON string holds as they are: printable
// ASCII (and DEL) but for the quote and the backslash.
var jsonPlain = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// plainASCII reports whether s goes into a JSON string unescaped, as most
// names and rules do.
func plainASCII(s string) bool {
	for i := range len(s) {
		if c := s[i]; c >= utf8.RuneSelf || !jsonPlain[c] {
			return false
		}
	}
	return true
}
