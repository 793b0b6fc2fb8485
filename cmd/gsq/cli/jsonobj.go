package cli

import (
	"bytes"
	"encoding/json"
)

// object is a small JSON object whose members keep the order they were
// added in, for the command lines' own JSON (rcon --json). Server results
// have their own encoder, in package result.
type object []field

type field struct {
	key   string
	value any
}

// set appends key with value.
func (o *object) set(key string, value any) { *o = append(*o, field{key, value}) }

// MarshalJSON writes the members in order, HTML characters unescaped.
func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	encode := func(v any) error {
		if err := enc.Encode(v); err != nil {
			return err
		}
		b.Truncate(b.Len() - 1) // Encode's newline
		return nil
	}
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := encode(f.key); err != nil {
			return nil, err
		}
		b.WriteByte(':')
		if err := encode(f.value); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
