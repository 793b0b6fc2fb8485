package slp

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
)

// Status is the status JSON a server sends, read leniently: every field is
// optional, and a field of an unexpected type is left out rather than
// failing the whole status, since servers, proxies and plugins send every
// shape (wiki.vg "Server List Ping"; the variants in the field notes).
type Status struct {
	Version     *Version
	Players     *Players
	Description Description // the MOTD
	Favicon     *Favicon    // nil when absent or ""
	// The chat flags: enforcesSecureChat (1.19.1+), previewsChat
	// (1.19-1.19.2) and preventsChatReports (the No Chat Reports mod);
	// nil when not sent.
	EnforcesSecureChat  *bool
	PreviewsChat        *bool
	PreventsChatReports *bool
	// IsModded is NeoForge's flag; nil when not sent.
	IsModded *bool
	// Mods is the mod list of a Forge server (modinfo or forgeData); nil
	// when the server sent none.
	Mods *Mods
}

// Version is the server's version as it reports it.
type Version struct {
	Name string
	// Protocol is the protocol number the server reports: its own, or the
	// client's when it accepts several (proxies), or -1 to refuse every
	// client. nil when not sent.
	Protocol *int32
}

// Players is the player count and sample. Counts are int32, and may be
// negative: plugins set what they like.
type Players struct {
	Online *int32 // nil when not sent
	Max    *int32 // nil when not sent
	// Sample is the sample the server shows in the client's hover list:
	// vanilla sends at most 12 of the players online, plugins send lines
	// of text. It is not the full list (Query gives that).
	Sample []Player
}

// Player is an entry of the sample.
type Player struct {
	Name string
	ID   string // the UUID as sent
	// Fake marks an entry that is not a player: a line of hover text that
	// plugins (ServerListPlus and the like) send with a zero or made-up
	// UUID. It is set when the UUID is the nil UUID or not a UUID, or the
	// name is empty or carries § codes.
	Fake bool
}

// ParseOptions says what ParseStatus keeps. The zero value keeps the
// favicon's hash and size but not the image.
type ParseOptions struct {
	// KeepFavicon keeps the favicon's PNG bytes in Favicon.PNG.
	KeepFavicon bool
}

// maxJSONDepth bounds how deep ParseStatus descends into a component.
const maxJSONDepth = 64

// ParseStatus reads a status JSON. Only JSON that does not parse, or is
// not an object, fails, with a *ParseError wrapping ErrMalformed; opts may
// be nil.
func ParseStatus(b []byte, opts *ParseOptions) (*Status, error) {
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return nil, parseErr("status", 0, detail(ErrMalformed, "the status JSON is not an object"))
	}
	// One pass: the lenient types take what they can and never fail, and a
	// field of another type than its Go type is left out (json goes on
	// after an UnmarshalTypeError), so only bad syntax fails.
	var w struct {
		Version *struct {
			Name     text  `json:"name"`
			Protocol count `json:"protocol"`
		} `json:"version"`
		Players *struct {
			Online count `json:"online"`
			Max    count `json:"max"`
			Sample []struct {
				Name text `json:"name"`
				ID   text `json:"id"`
			} `json:"sample"`
		} `json:"players"`
		Description         json.RawMessage `json:"description"`
		Favicon             string          `json:"favicon"`
		EnforcesSecureChat  flag            `json:"enforcesSecureChat"`
		PreviewsChat        flag            `json:"previewsChat"`
		PreventsChatReports flag            `json:"preventsChatReports"`
		IsModded            flag            `json:"isModded"`
		ModInfo             *modInfoJSON    `json:"modinfo"`
		ForgeData           *forgeDataJSON  `json:"forgeData"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) {
			off := 0
			var se *json.SyntaxError
			if errors.As(err, &se) {
				off = int(se.Offset)
			}
			return nil, parseErr("status", off, detail(ErrMalformed, "status JSON: %v", err))
		}
	}
	s := &Status{
		EnforcesSecureChat:  w.EnforcesSecureChat.v,
		PreviewsChat:        w.PreviewsChat.v,
		PreventsChatReports: w.PreventsChatReports.v,
		IsModded:            w.IsModded.v,
		Mods:                parseMods(w.ModInfo, w.ForgeData),
	}
	if v := w.Version; v != nil {
		s.Version = &Version{Name: v.Name.s, Protocol: v.Protocol.v}
	}
	if p := w.Players; p != nil {
		s.Players = &Players{Online: p.Online.v, Max: p.Max.v}
		for _, e := range p.Sample {
			if !e.Name.ok && !e.ID.ok {
				continue // not an entry
			}
			pl := Player{Name: e.Name.s, ID: e.ID.s}
			pl.Fake = fakePlayer(pl)
			s.Players.Sample = append(s.Players.Sample, pl)
		}
	}
	if !isNull(w.Description) {
		s.Description.Raw = w.Description
	}
	if w.Favicon != "" {
		s.Favicon = parseFavicon(w.Favicon, opts != nil && opts.KeepFavicon)
	}
	return s, nil
}

// count is a lenient JSON count (see int32Of); v is nil when it does not
// read.
type count struct{ v *int32 }

// UnmarshalJSON never fails.
func (c *count) UnmarshalJSON(b []byte) error { c.v = int32Of(b); return nil }

// flag is a lenient JSON bool (see boolOf).
type flag struct{ v *bool }

// UnmarshalJSON never fails.
func (f *flag) UnmarshalJSON(b []byte) error { f.v = boolOf(b); return nil }

// text is a JSON string; ok is false for a value of another type.
type text struct {
	s  string
	ok bool
}

// UnmarshalJSON never fails.
func (t *text) UnmarshalJSON(b []byte) error { t.s, t.ok = stringOf(b); return nil }

func isNull(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }

// stringOf is raw as a string, when it is one.
func stringOf(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// boolOf is raw as a bool, when it is one (or the string "true" or
// "false").
func boolOf(raw json.RawMessage) *bool {
	var v bool
	switch string(raw) {
	case "true", `"true"`:
		v = true
	case "false", `"false"`:
	default:
		return nil
	}
	return &v
}

// int32Of is raw as an int32, when it is a number (or a string holding
// one). A number beyond int32 is clamped to its range, a fraction cut.
func int32Of(raw json.RawMessage) *int32 {
	text := string(raw)
	if s, ok := stringOf(raw); ok {
		text = strings.TrimSpace(s)
	}
	var v int32
	if i, err := strconv.ParseInt(text, 10, 64); err == nil {
		v = int32(max(math.MinInt32, min(math.MaxInt32, i)))
	} else if f, err := strconv.ParseFloat(text, 64); err == nil && !math.IsNaN(f) {
		v = int32(max(math.MinInt32, min(math.MaxInt32, f)))
	} else {
		return nil
	}
	return &v
}

// fakePlayer reports whether a sample entry is hover text rather than a
// player: a nil or malformed UUID, or a name that is empty or formatted.
func fakePlayer(p Player) bool {
	if p.Name == "" || strings.ContainsRune(p.Name, '§') {
		return true
	}
	hex := strings.ReplaceAll(p.ID, "-", "")
	if len(hex) != 32 || (len(p.ID) != 32 && len(p.ID) != 36) {
		return true
	}
	zero := true
	for _, c := range hex {
		switch {
		case c == '0':
		case '1' <= c && c <= '9', 'a' <= c && c <= 'f', 'A' <= c && c <= 'F':
			zero = false
		default:
			return true
		}
	}
	return zero
}

// AppendJSON appends s as a status JSON, as a server sends it. The mod
// list is not written: a server that plays a modded one sends JSON of its
// own (see [AppendForgeData]). A Description whose Raw is not valid JSON
// fails.
func (s *Status) AppendJSON(b []byte) ([]byte, error) {
	type sample struct {
		Name string `json:"name"`
		ID   string `json:"id"`
	}
	type players struct {
		Max    *int32   `json:"max,omitempty"`
		Online *int32   `json:"online,omitempty"`
		Sample []sample `json:"sample,omitempty"`
	}
	type version struct {
		Name     string `json:"name"`
		Protocol *int32 `json:"protocol,omitempty"`
	}
	var w struct {
		Version             *version        `json:"version,omitempty"`
		Players             *players        `json:"players,omitempty"`
		Description         json.RawMessage `json:"description,omitempty"`
		Favicon             string          `json:"favicon,omitempty"`
		EnforcesSecureChat  *bool           `json:"enforcesSecureChat,omitempty"`
		PreviewsChat        *bool           `json:"previewsChat,omitempty"`
		PreventsChatReports *bool           `json:"preventsChatReports,omitempty"`
		IsModded            *bool           `json:"isModded,omitempty"`
	}
	if s.Version != nil {
		w.Version = &version{Name: s.Version.Name, Protocol: s.Version.Protocol}
	}
	if s.Players != nil {
		w.Players = &players{Max: s.Players.Max, Online: s.Players.Online}
		for _, p := range s.Players.Sample {
			w.Players.Sample = append(w.Players.Sample, sample{Name: p.Name, ID: p.ID})
		}
	}
	w.Description = s.Description.Raw
	if s.Favicon != nil && s.Favicon.PNG != nil {
		w.Favicon = s.Favicon.DataURL()
	}
	w.EnforcesSecureChat, w.PreviewsChat, w.PreventsChatReports, w.IsModded = s.EnforcesSecureChat, s.PreviewsChat, s.PreventsChatReports, s.IsModded
	out, err := json.Marshal(&w)
	if err != nil {
		return b, detail(ErrMalformed, "status JSON: %v", err)
	}
	return append(b, out...), nil
}
