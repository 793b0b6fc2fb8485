package web

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// FuzzAppendString checks the hand-written JSON string encoder against
// encoding/json, which it must match byte for byte.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "de_dust2", `<script>alert("x")</script>&`, "a\x00b\x1f\n\t\r\\", "bad\xff\xfeutf8", "line\u2028sep\u2029", "émoji 🎮 ünï"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendString(nil, s); !bytes.Equal(got, want) {
			t.Errorf("appendString(%q) = %s, want %s", s, got, want)
		}
	})
}

// TestAppendServerIsJSON checks that a state with every field set, hostile
// strings included, encodes to valid JSON that decodes back.
func TestAppendServerIsJSON(t *testing.T) {
	t.Parallel()
	s := downState("be\"ta<\n>")
	s.Labels = map[string]string{"b": "2", "a": "1&"}
	s.Summary.Map = ptr("bad\xffmap")
	s.Players = nil
	b := appendServer(nil, &s, true)
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if v["name"] != "be\"ta<\n>" || v["summary"].(map[string]any)["map"] != "bad\uFFFDmap" || v["ping_ms"] != 23.0 {
		t.Errorf("%s", b)
	}
	if bytes.Contains(b, []byte("<")) {
		t.Errorf("raw < in %s", b)
	}
	var zero struct{ Since *time.Time }
	json.Unmarshal(appendServer(nil, &pendingState, false), &zero)
	if zero.Since != nil {
		t.Errorf("a zero time is not null")
	}
}

var pendingState = downState("p")

func init() { pendingState.Since = time.Time{} }
