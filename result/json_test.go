package result

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// reference encodes v as encoding/json does with HTML escaping off, the
// oracle of the encoder.
func reference(t testing.TB, v any) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// TestTextTwin checks the base64 twin of a string that is not UTF-8, and
// its absence otherwise.
func TestTextTwin(t *testing.T) {
	t.Parallel()
	o := beginObject(nil)
	o.text("ok", []byte("plain"))
	o.text("utf8", []byte("Zoë"))
	o.text("name", []byte{'d', 0xe9, 'j', 0xe0})
	got := string(o.end())
	want := `{"ok":"plain","utf8":"Zoë","name":"déjà","name_b64":"ZOlq4A=="}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if !utf8.ValidString(got) {
		t.Fatal("output is not UTF-8")
	}
}

func TestSummaryJSONMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	name, players, password := "n\xff\"", 0, false
	// plainSummary is Summary without its methods: encoding/json encodes
	// it by reflection, from the struct tags.
	type plainSummary Summary
	for _, s := range []Summary{{}, {Name: &name}, {Players: &players, Password: &password}, fullSummary()} {
		want := reference(t, plainSummary(s))
		if got := string(s.AppendJSON(nil)); got != want {
			t.Errorf("AppendJSON: got  %s\nwant %s", got, want)
		}
		if got := reference(t, s); got != want {
			t.Errorf("MarshalJSON: got  %s\nwant %s", got, want)
		}
	}
}

func fullSummary() Summary {
	s, n, b := "x", 3, true
	return Summary{Name: &s, Map: &s, Game: &s, Players: &n, MaxPlayers: &n, Bots: &n, Password: &b, Version: &s, Connect: &s}
}

func TestErrorJSONMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	e := &Error{Kind: KindTimeout, Message: `a2s: info "x": no answer`}
	if got, want := string(e.appendJSON(nil)), reference(t, e); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
