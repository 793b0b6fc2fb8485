package slp

import (
	"encoding/json"
	"strings"

	"github.com/gsq-project/gsq/rcon/mctext"
)

// Description is the MOTD as the server sent it: a string, a chat
// component (text, colour and style, nested extra), an array of
// components, or a component whose text is empty and whose words are all
// in extra, as plugins send it. Raw keeps it whole; Legacy and Text
// flatten it.
type Description struct {
	Raw json.RawMessage // nil when the server sent none
}

// TextDescription is a description of plain text, which may carry §
// codes.
func TextDescription(s string) Description {
	raw, _ := json.Marshal(s) // a string always marshals
	return Description{Raw: raw}
}

// Legacy flattens the description into one string with § codes, as the
// client of 1.7 and before showed it: each component's colour and styles
// become codes before its text (a hex colour becomes §x§R§R§G§G§B§B),
// translated components their fallback or key.
func (d Description) Legacy() string {
	if len(d.Raw) == 0 {
		return ""
	}
	var v any
	if json.Unmarshal(d.Raw, &v) != nil {
		return ""
	}
	var f flattener
	f.walk(v, style{}, 0)
	return f.sb.String()
}

// Text is the description as plain text: Legacy with the § codes
// stripped (rcon/mctext's rule).
func (d Description) Text() string { return mctext.Strip(d.Legacy()) }

// style is a component's colour and formats.
type style struct {
	color   string // the § codes of the colour, "" for the default
	formats string // the § codes of the formats, in the order k l m n o
}

type flattener struct {
	sb   strings.Builder
	last style // the style of the text written last
}

var colorCodes = map[string]byte{
	"black": '0', "dark_blue": '1', "dark_green": '2', "dark_aqua": '3', "dark_red": '4', "dark_purple": '5',
	"gold": '6', "gray": '7', "dark_gray": '8', "blue": '9', "green": 'a', "aqua": 'b', "red": 'c',
	"light_purple": 'd', "yellow": 'e', "white": 'f',
}

var formatKeys = [...]struct {
	key  string
	code byte
}{{"obfuscated", 'k'}, {"bold", 'l'}, {"strikethrough", 'm'}, {"underlined", 'n'}, {"italic", 'o'}}

// colorCode is the § codes of a component's colour: a name, or #RRGGBB.
func colorCode(c string) (string, bool) {
	if code, ok := colorCodes[c]; ok {
		return "§" + string(code), true
	}
	if c == "reset" {
		return "", true
	}
	if len(c) == 7 && c[0] == '#' {
		var sb strings.Builder
		sb.WriteString("§x")
		for _, h := range strings.ToLower(c[1:]) {
			if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f') {
				return "", false
			}
			sb.WriteString("§")
			sb.WriteRune(h)
		}
		return sb.String(), true
	}
	return "", false
}

// walk writes component v in the style it inherits.
func (f *flattener) walk(v any, inherited style, depth int) {
	if depth > maxJSONDepth {
		return
	}
	switch v := v.(type) {
	case string:
		f.text(v, inherited)
	case float64, bool:
		f.text(strings.TrimSpace(mustJSON(v)), inherited)
	case []any:
		for _, e := range v {
			f.walk(e, inherited, depth+1)
		}
	case map[string]any:
		st := inherited
		if c, ok := v["color"].(string); ok {
			if code, ok := colorCode(c); ok {
				st.color = code
				if c == "reset" {
					st.formats = ""
				}
			}
		}
		formats := []byte(nil)
		for _, fk := range formatKeys {
			on := strings.Contains(inherited.formats, "§"+string(fk.code))
			switch x := v[fk.key].(type) {
			case bool:
				on = x
			case string:
				on = x == "true"
			}
			if on {
				formats = append(formats, "§"...)
				formats = append(formats, fk.code)
			}
		}
		st.formats = string(formats)
		switch {
		case v["text"] != nil:
			f.walk(v["text"], st, depth+1)
		case v["translate"] != nil:
			if fb, ok := v["fallback"].(string); ok {
				f.text(fb, st)
			} else if key, ok := v["translate"].(string); ok {
				f.text(key, st)
			}
		}
		if extra, ok := v["extra"].([]any); ok {
			for _, e := range extra {
				f.walk(e, st, depth+1)
			}
		}
	}
}

// text writes s after the codes that switch to st from the style written
// last.
func (f *flattener) text(s string, st style) {
	if s == "" {
		return
	}
	if st != f.last {
		if st.color == "" {
			f.sb.WriteString("§r")
		} else {
			f.sb.WriteString(st.color) // a colour resets the formats
		}
		f.sb.WriteString(st.formats)
		f.last = st
	}
	f.sb.WriteString(s)
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
