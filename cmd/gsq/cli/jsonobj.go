package cli

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"unicode/utf8"
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
func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(f.key)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(f.value)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
