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
	s := unsafe.String(unsafe.SliceData(raw), len(raw)) // read only, not retained
	if jsonenc.Plain(s) {
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

// round rounds f to n decimals, so that float32 noise (123.40000152) and
// nanoseconds do not reach the output.
func round(f float64, n int) float64 {
	p := math.Pow10(n)
	return math.Round(f*p) / p
}

// appendString appends s as a JSON string, <, > and & unescaped (JSON on
// a command line is not HTML).
func appendString(b []byte, s string) []byte { return jsonenc.AppendString(b, s, false) }
