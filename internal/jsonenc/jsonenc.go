// Package jsonenc is gsq's one JSON encoder for the output it writes by
// hand: objects ([Object]), strings and numbers appended to a byte slice
// exactly as encoding/json writes them, without reflection, for the
// encoders that write thousands of objects a second (package result's,
// the monitor's web API). Strings are escaped one way or the other,
// chosen where an object begins: HTML characters as they are (the JSON of
// gsq query and gsq scan), or escaped (JSON served to a browser). It uses
// the standard library only.
package jsonenc

import (
	"encoding/binary"
	"math"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// AppendString appends s as a JSON string, escaped as encoding/json
// escapes it: quotes, backslashes, control characters, U+2028 and U+2029,
// and each byte of invalid UTF-8 as U+FFFD. With escapeHTML, <, > and &
// are escaped too (\u003c, \u003e, \u0026), as encoding/json does by
// default so that the JSON is safe inside HTML; without, as an Encoder
// with SetEscapeHTML(false) writes them.
func AppendString(b []byte, s string, escapeHTML bool) []byte {
	plain := &plainText
	if escapeHTML {
		plain = &plainHTML
	}
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if plain[c] {
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

// AppendBytes is AppendString for text held in a byte slice, without
// copying it into a string first (AppendString does not retain s).
func AppendBytes(b, s []byte, escapeHTML bool) []byte {
	return AppendString(b, unsafe.String(unsafe.SliceData(s), len(s)), escapeHTML)
}

const hex = "0123456789abcdef"

// plainText and plainHTML mark the ASCII bytes a JSON string holds as
// they are: printable ASCII (and DEL) but the quote and the backslash,
// and for HTML not <, > and & either.
var plainText, plainHTML = func() (text, html [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		text[c] = c != '"' && c != '\\'
		html[c] = text[c] && c != '<' && c != '>' && c != '&'
	}
	return text, html
}()

// Plain reports whether s is printable ASCII without quotes or
// backslashes, as most names are: such a string goes into JSON as it is
// (escapeHTML off). It is a fast path; other strings may need no escaping
// either. It reads 8 bytes at a time.
func Plain(s string) bool {
	for len(s) >= 8 {
		if !plain8(binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s), 8))) {
			return false
		}
		s = s[8:]
	}
	for i := range len(s) {
		if c := s[i]; c >= utf8.RuneSelf || !plainText[c] {
			return false
		}
	}
	return true
}

// plain8 reports whether each of the 8 bytes of x is plain: from 0x20 to
// 0x7F, and neither '"' nor '\\'. It tests every byte at once, with the
// classic "has a zero byte" bit trick on x, x^'"' and x^'\\'.
func plain8(x uint64) bool {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	// A byte below 0x20: subtracting 0x20 borrows into its high bit,
	// which x itself lacks; a byte of 0x80 and up has its high bit set.
	below := (x - 0x20*ones) &^ x & highs
	quote := x ^ '"'*ones
	backslash := x ^ '\\'*ones
	zero := func(v uint64) uint64 { return (v - ones) &^ v & highs }
	return (below | x&highs | zero(quote) | zero(backslash)) == 0
}

// AppendFloat appends f as encoding/json writes a float64: the shortest
// decimal that reads back as f, with an exponent only below 1e-6 and from
// 1e21. f must be finite: JSON has no NaN or infinity.
func AppendFloat(b []byte, f float64) []byte {
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
