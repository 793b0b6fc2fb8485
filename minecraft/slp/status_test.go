package slp

import (
	"errors"
	"testing"
)

// The status JSON's variants (field notes §1.4): every shape of the
// description, counts negative, missing or out of range, fake sample
// entries, the favicon with and without line breaks or empty, the chat
// flags.
func TestParseStatusVariants(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, json   string
		text, legacy string
		online, max  *int32
		check        func(t *testing.T, s *Status)
	}{
		{name: "string with codes", json: `{"description":"§aHello §lworld"}`, text: "Hello world", legacy: "§aHello §lworld"},
		{name: "component", json: `{"description":{"text":"Hi ","color":"red","extra":[{"text":"there","bold":true,"color":"#FF8800"}," you"]}}`,
			text: "Hi there you", legacy: "§cHi §x§f§f§8§8§0§0§lthere§c you"},
		{name: "extra only", json: `{"description":{"text":"","extra":[{"text":"A "},{"text":"plugin","italic":true}]}}`,
			text: "A plugin", legacy: "A §r§oplugin"},
		{name: "array", json: `{"description":[{"text":"a"},"b",{"translate":"menu.x","fallback":"c"},{"translate":"key.y"}]}`, text: "abckey.y", legacy: "abckey.y"},
		{name: "no description", json: `{"players":{"online":1,"max":2}}`, text: "", legacy: "", online: ptr(1), max: ptr(2)},
		{name: "negative counts", json: `{"players":{"online":-5,"max":-1}}`, online: ptr(-5), max: ptr(-1)},
		{name: "missing counts", json: `{"players":{"sample":[]}}`},
		{name: "counts out of range and as text", json: `{"players":{"online":1e12,"max":"7"}}`, online: ptr(2147483647), max: ptr(7)},
		{name: "counts of the wrong type", json: `{"players":{"online":true,"max":[1]}}`},
		{name: "fake sample", json: `{"players":{"online":2,"max":9,"sample":[` +
			`{"name":"§6Welcome","id":"00000000-0000-0000-0000-000000000000"},` +
			`{"name":"Steve","id":"00000000-0000-0000-0000-000000000000"},` +
			`{"name":"line","id":"not-a-uuid"},` +
			`{"name":"Alex","id":"ec561538f3fd461daff5086b22154bce"},` +
			`{"name":"Notch","id":"069a79f4-44e9-4726-a5be-fca90e38aaf5"}]}}`,
			online: ptr(2), max: ptr(9), check: func(t *testing.T, s *Status) {
				var fake []bool
				for _, p := range s.Players.Sample {
					fake = append(fake, p.Fake)
				}
				if len(fake) != 5 || !fake[0] || !fake[1] || !fake[2] || fake[3] || fake[4] {
					t.Errorf("fake marks %v, want true true true false false", fake)
				}
			}},
		{name: "favicon with line breaks", json: `{"favicon":"data:image/png;base64,iVBO\nRw0K\nGgo="}`, check: func(t *testing.T, s *Status) {
			if s.Favicon == nil || s.Favicon.Malformed || s.Favicon.Size != 8 || s.Favicon.MIME != "image/png" || s.Favicon.PNG != nil {
				t.Errorf("%+v", s.Favicon)
			}
		}},
		{name: "empty favicon", json: `{"favicon":""}`, check: func(t *testing.T, s *Status) {
			if s.Favicon != nil {
				t.Errorf("%+v", s.Favicon)
			}
		}},
		{name: "favicon not a data URL", json: `{"favicon":"http://x/y.png"}`, check: func(t *testing.T, s *Status) {
			if s.Favicon == nil || !s.Favicon.Malformed || s.Favicon.Size != 14 {
				t.Errorf("%+v", s.Favicon)
			}
		}},
		{name: "chat flags", json: `{"enforcesSecureChat":true,"previewsChat":false,"preventsChatReports":"true","isModded":true}`, check: func(t *testing.T, s *Status) {
			if !*s.EnforcesSecureChat || *s.PreviewsChat || !*s.PreventsChatReports || !*s.IsModded {
				t.Errorf("%+v", s)
			}
		}},
		{name: "version protocol -1", json: `{"version":{"name":"Requires MC 1.8 / 1.21","protocol":-1}}`, check: func(t *testing.T, s *Status) {
			if s.Version.Name != "Requires MC 1.8 / 1.21" || *s.Version.Protocol != -1 {
				t.Errorf("%+v", s.Version)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseStatus([]byte(tc.json), nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Description.Text(); got != tc.text {
				t.Errorf("Text %q, want %q", got, tc.text)
			}
			if got := s.Description.Legacy(); got != tc.legacy {
				t.Errorf("Legacy %q, want %q", got, tc.legacy)
			}
			if tc.online != nil || tc.max != nil {
				if !sameInt(s.Players.Online, tc.online) || !sameInt(s.Players.Max, tc.max) {
					t.Errorf("counts %v %v, want %v %v", s.Players.Online, s.Players.Max, *tc.online, *tc.max)
				}
			} else if s.Players != nil && (s.Players.Online != nil || s.Players.Max != nil) {
				t.Errorf("counts %v %v, want none", s.Players.Online, s.Players.Max)
			}
			if tc.check != nil {
				tc.check(t, s)
			}
		})
	}
	for _, bad := range []string{``, `nope`, `[1]`, `"text"`, `{"a":`, `null`} {
		if _, err := ParseStatus([]byte(bad), nil); !errors.Is(err, ErrMalformed) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func ptr(v int32) *int32 { return &v }

// The vanilla status parses within an allocation budget (it was 99
// before the one-pass reader).
func TestParseStatusAllocs(t *testing.T) {
	json := []byte(`{"version":{"name":"1.21.1","protocol":767},"players":{"max":20,"online":3,"sample":[` +
		`{"name":"thinkofdeath","id":"4566e69f-c907-48ee-8d71-d7ba5aa00d20"}]},` +
		`"description":{"text":"A ","extra":[{"text":"server","color":"gold"}]},"enforcesSecureChat":true}`)
	n := testing.AllocsPerRun(100, func() {
		if _, err := ParseStatus(json, nil); err != nil {
			t.Fatal(err)
		}
	})
	if n > 40 {
		t.Errorf("%v allocations, budget 40", n)
	}
}
