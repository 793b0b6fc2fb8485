package result

import (
	"encoding/base64"
	"math"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/gsq-project/gsq/internal/jsonenc"
	"github.com/gsq-project/gsq/internal/textenc"
)

// The encoder below writes JSON straight into a byte slice, with no
// reflection and no intermediate tree: a scan encodes thousands of results
// a second, and encoding/json's reflection would then cost more than the
// queries. Its strings and numbers are what encoding/json writes with
// SetEscapeHTML(false) (internal/jsonenc, whose tests hold it to that).

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
	o.b = jsonenc.AppendFloat(o.b, v)
}

// text appends a string the server sent as raw bytes: valid UTF-8 as is;
// anything else decoded for display (each stray byte read as Latin-1) and
// followed by a base64 twin, k_b64, holding the exact bytes.
func (o *object) text(k string, raw []byte) {
	o.key(k)
	o.b = appendText(o.b, k, raw)
}

// appendText appends raw, the value of member k, as text does: the string,
// and the member k_b64 after it when raw is not valid UTF-8. The encoders
// of long lists (players, rules) call it with their buffer in a local
// variable, which the garbage collector's write barrier need not watch.
func appendText(b []byte, k string, raw []byte) []byte {
	s := unsafe.String(unsafe.SliceData(raw), len(raw)) // read only, not retained
	if jsonenc.Plain(s) {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	if utf8.ValidString(s) {
		return appendString(b, s)
	}
	b = appendString(b, textenc.Decode(raw))
	b = append(b, ',', '"')
	b = append(b, k...)
	b = append(b, `_b64":`...)
	return appendBase64(b, raw)
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

// appendRounded appends f rounded to n decimals (so that float32 noise,
// 123.40000152, and nanoseconds do not reach the output) as encoding/json
// writes that float64,
// and reports false, appending nothing, when it is not a finite number.
// Below 1e9 it writes the rounded integer q = f*10^n with its decimal point
// set, trailing zeros dropped, sparing strconv's search for the shortest
// decimal: there, neighbouring float64 values are less than 1e-6 apart, so
// no decimal shorter than q's reads back as q/10^n (n is at most 6).
func appendRounded(b []byte, f float64, n int) ([]byte, bool) {
	p := math.Pow10(n)
	q := math.Round(f * p)
	v := q / p
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return b, false
	case v == 0 || math.Abs(v) >= 1e9 || n > 6:
		return jsonenc.AppendFloat(b, v), true // 0 keeps its sign: -0
	}
	i := int64(q)
	if i < 0 {
		b = append(b, '-')
		i = -i
	}
	unit := int64(p)
	b = strconv.AppendInt(b, i/unit, 10)
	frac := i % unit
	if frac == 0 {
		return b, true
	}
	b = append(b, '.')
	var digits [6]byte
	for k := n - 1; k >= 0; k-- {
		digits[k] = byte('0' + frac%10)
		frac /= 10
	}
	last := n
	for digits[last-1] == '0' {
		last--
	}
	return append(b, digits[:last]...), true
}

// appendString appends s as a JSON string, <, > and & unescaped (JSON on
// a command line is not HTML).
func appendString(b []byte, s string) []byte { return jsonenc.AppendString(b, s, false) }
