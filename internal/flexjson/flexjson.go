// Package flexjson holds lenient JSON field types for the HTTP APIs gsq
// reads (the Steam Web API, FiveM's info.json): APIs that write a number
// as a string in one release and as a number in the next, or leave a
// field out. Each type reads what it can and never fails a whole
// document for one odd field: what does not read is the zero value. It
// uses the standard library only.
package flexjson

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// Int reads a JSON number, or a string holding one; anything else (a
// fraction, a bool, null, text, an object) reads as 0. A uint64 beyond
// int64 (a steamid) keeps its bits.
type Int int64

// UnmarshalJSON reads b leniently.
func (v *Int) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		*v = Int(n)
	} else if u, err := strconv.ParseUint(s, 10, 64); err == nil {
		*v = Int(u)
	} else {
		*v = 0
	}
	return nil
}

// Bool reads true, false, 1, 0, "true", "1"...; anything else is false.
type Bool bool

// UnmarshalJSON reads b leniently.
func (v *Bool) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	*v = s == "true" || s == "1"
	return nil
}

// String reads a JSON string, or any other scalar as its text; null, an
// object and an array read as empty.
type String string

// UnmarshalJSON reads b leniently.
func (v *String) UnmarshalJSON(b []byte) error {
	if len(b) >= 2 && b[0] == '"' && bytes.IndexByte(b[1:len(b)-1], '\\') < 0 {
		*v = String(b[1 : len(b)-1]) // no escape: the text as it is
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*v = String(s)
		return nil
	}
	if string(b) == "null" || len(b) > 0 && (b[0] == '{' || b[0] == '[') {
		*v = ""
		return nil
	}
	*v = String(b)
	return nil
}
