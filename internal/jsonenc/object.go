package jsonenc

import (
	"encoding/base64"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/gsq-project/gsq/internal/textenc"
)

// Object appends the members of one JSON object to B, straight into the
// byte slice: no reflection, no intermediate tree. Its strings are escaped
// as encoding/json escapes them, <, > and & included when HTML is set (the
// default of encoding/json, for JSON that may end up inside an HTML page)
// and left as they are otherwise (an Encoder with SetEscapeHTML(false):
// JSON on a command line is not HTML). Every JSON gsq writes by hand goes
// through an Object or the functions below, so that one rule escapes it.
type Object struct {
	B     []byte // the buffer, the object so far
	HTML  bool   // escape <, > and & in strings
	comma bool
}

// Begin appends '{' to b and returns the object being written; html says
// how its strings are escaped (see [Object]).
func Begin(b []byte, html bool) Object { return Object{B: append(b, '{'), HTML: html} }

// Sub begins an object nested in o's buffer, escaped as o is: append
// o.B's member with o.Key, then Sub, fill it, and set o.B to its End.
func (o *Object) Sub() Object { return Begin(o.B, o.HTML) }

// End appends '}' and returns the whole buffer.
func (o *Object) End() []byte { return append(o.B, '}') }

// Key appends the separator and "k":. k must be plain ASCII that needs no
// escaping, as the keys written in code are; see AnyKey for others.
func (o *Object) Key(k string) {
	if o.comma {
		o.B = append(o.B, ',')
	}
	o.comma = true
	o.B = append(o.B, '"')
	o.B = append(o.B, k...)
	o.B = append(o.B, '"', ':')
}

// AnyKey is Key for a key that may need escaping.
func (o *Object) AnyKey(k string) {
	if o.comma {
		o.B = append(o.B, ',')
	}
	o.comma = true
	o.B = append(AppendString(o.B, k, o.HTML), ':')
}

// Str appends the member k with the string v.
func (o *Object) Str(k, v string) {
	o.Key(k)
	o.B = AppendString(o.B, v, o.HTML)
}

// Int appends the member k with the number v.
func (o *Object) Int(k string, v int64) {
	o.Key(k)
	o.B = strconv.AppendInt(o.B, v, 10)
}

// Uint appends the member k with the number v.
func (o *Object) Uint(k string, v uint64) {
	o.Key(k)
	o.B = strconv.AppendUint(o.B, v, 10)
}

// Bool appends the member k with true or false.
func (o *Object) Bool(k string, v bool) {
	o.Key(k)
	o.B = strconv.AppendBool(o.B, v)
}

// Null appends the member k with null.
func (o *Object) Null(k string) {
	o.Key(k)
	o.B = append(o.B, "null"...)
}

// Float appends v, or leaves the member out when v is not a finite
// number, which JSON cannot hold.
func (o *Object) Float(k string, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	o.Key(k)
	o.B = AppendFloat(o.B, v)
}

// Text appends the member k with raw, a string a server sent as raw
// bytes: valid UTF-8 as it is; anything else decoded for display (each
// stray byte read as Latin-1, internal/textenc) and followed by a base64
// twin, k_b64, holding the exact bytes.
func (o *Object) Text(k string, raw []byte) {
	o.Key(k)
	o.B = AppendText(o.B, k, raw, o.HTML)
}

// Strings appends the member k with a list of strings.
func (o *Object) Strings(k string, list []string) {
	o.Key(k)
	o.B = append(o.B, '[')
	for i, s := range list {
		if i > 0 {
			o.B = append(o.B, ',')
		}
		o.B = AppendString(o.B, s, o.HTML)
	}
	o.B = append(o.B, ']')
}

// List appends the member k with a JSON array of n objects, item writing
// the members of object i.
func (o *Object) List(k string, n int, item func(e *Object, i int)) {
	o.Key(k)
	o.B = AppendList(o.B, n, o.HTML, item)
}

// AppendList appends a JSON array of n objects, item writing the members
// of object i; html is as for [Begin].
func AppendList(b []byte, n int, html bool, item func(e *Object, i int)) []byte {
	b = append(b, '[')
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		e := Begin(b, html)
		item(&e, i)
		b = e.End()
	}
	return append(b, ']')
}

// AppendText appends raw, the value of member k, as [Object.Text] does:
// the string, and the member k_b64 after it when raw is not valid UTF-8.
// The encoders of long lists (players, rules) call it with their buffer in
// a local variable, which the garbage collector's write barrier need not
// watch.
func AppendText(b []byte, k string, raw []byte, html bool) []byte {
	s := unsafe.String(unsafe.SliceData(raw), len(raw)) // read only, not retained
	if Plain(s) && !(html && strings.ContainsAny(s, "<>&")) {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	if utf8.ValidString(s) {
		return AppendString(b, s, html)
	}
	b = AppendString(b, textenc.Decode(raw), html)
	b = append(b, ',', '"')
	b = append(b, k...)
	b = append(b, `_b64":`...)
	return AppendBase64(b, raw)
}

// AppendBase64 appends raw as a base64 JSON string.
func AppendBase64(b, raw []byte) []byte {
	b = append(b, '"')
	b = base64.StdEncoding.AppendEncode(b, raw)
	return append(b, '"')
}

// AppendRounded appends f rounded to n decimals (so that float32 noise,
// 123.40000152, and nanoseconds do not reach the output) as encoding/json
// writes that float64, and reports false, appending nothing, when it is
// not a finite number. Below 1e9 it writes the rounded integer q = f*10^n
// with its decimal point set, trailing zeros dropped, sparing strconv's
// search for the shortest decimal: there, neighbouring float64 values are
// less than 1e-6 apart, so no decimal shorter than q's reads back as
// q/10^n (n is at most 6).
func AppendRounded(b []byte, f float64, n int) ([]byte, bool) {
	p := math.Pow10(n)
	q := math.Round(f * p)
	v := q / p
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return b, false
	case v == 0 || math.Abs(v) >= 1e9 || n > 6:
		return AppendFloat(b, v), true // 0 keeps its sign: -0
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
