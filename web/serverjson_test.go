package web

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/gsq-project/gsq/monitor"
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

// players_hidden is there, true, only for a server that hides who is on.
func TestAppendServerPlayersHidden(t *testing.T) {
	t.Parallel()
	s := downState("mc")
	for _, hidden := range []bool{false, true} {
		s.PlayersHidden = hidden
		var v map[string]any
		if err := json.Unmarshal(appendServer(nil, &s, true), &v); err != nil {
			t.Fatal(err)
		}
		if got, ok := v["players_hidden"]; ok != hidden || hidden && got != true {
			t.Errorf("hidden %v: players_hidden %v (%v)", hidden, got, ok)
		}
	}
}

// TestAppendServerVantages: a fleet's server carries each vantage
// point's view, in order; one process alone has none.
func TestAppendServerVantages(t *testing.T) {
	t.Parallel()
	s := downState("s")
	if b := appendServer(nil, &s, false); bytes.Contains(b, []byte(`"vantages"`)) {
		t.Errorf("vantages without a fleet: %s", b)
	}
	at := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	s.Vantages = []monitor.VantageView{
		{Region: "eu", Status: monitor.StatusUp, At: at, Ping: 12 * time.Millisecond},
		{Region: "us<", Status: monitor.StatusDown, At: at},
	}
	b := appendServer(nil, &s, false)
	var v struct {
		Vantages []struct {
			Region, Status string
			At             time.Time
			PingMS         *float64 `json:"ping_ms"`
		}
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if len(v.Vantages) != 2 || v.Vantages[0].Region != "eu" || v.Vantages[0].Status != "up" || !v.Vantages[0].At.Equal(at) ||
		v.Vantages[0].PingMS == nil || *v.Vantages[0].PingMS != 12 || v.Vantages[1].Region != "us<" || v.Vantages[1].Status != "down" {
		t.Errorf("vantages = %+v\n%s", v.Vantages, b)
	}
}
