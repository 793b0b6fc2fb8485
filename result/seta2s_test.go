package result

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/internal/sim"
)

// TestSetA2S checks the one conversion from an A2S conversation's result,
// which gsq query and the scan engine share: every section where the
// contract puts it, and the JSON valid.
func TestSetA2S(t *testing.T) {
	t.Parallel()
	c := sim.FleetContent(7)
	info, players, rules := c.A2S(27015)
	odd := &a2s.Players{Ship: true, List: []a2s.Player{
		{Index: 1, Name: a2s.Text("bad\xff\xfe utf8 \"quoted\" \\ \x01\t\n"), Score: -5, Duration: 12.3456789, Deaths: 3, Money: 900},
		{Index: 2, Name: a2s.Text("line\u2028sep\u2029 <html> & ü"), Duration: float32(math.Inf(1))},
		{Index: 3, Name: nil, Duration: -1},
	}}
	oddRules := &a2s.Rules{List: []a2s.Rule{
		{Name: a2s.Text("\x01\x02binary"), Value: a2s.Text("\x00\xff")},
		{Name: a2s.Text("tiny"), Value: a2s.Text("1e-9")},
		{Name: a2s.Text(`plain "quoted" \ <b> & ascii`), Value: a2s.Text("sv_tags")},
	}}
	gold := &a2s.Info{Format: a2s.TypeInfoReplyGoldSource, Name: a2s.Text("gold"), Address: a2s.Text("1.2.3.4:27015"),
		Mod: &a2s.ModInfo{Link: a2s.Text("http://x")}}
	timeout := fmt.Errorf("wrapped: %w", a2s.ErrTimeout)
	bad := &a2s.ParseError{Packet: "rules", Offset: 9, Err: a2s.ErrTruncated}
	for _, tc := range []struct {
		name     string
		res      a2s.Result
		sections []string // in the JSON
		errors   []string // in "errors"
		err      Kind
	}{
		{"full", a2s.Result{RTT: 1234567 * time.Nanosecond, Info: info, Players: players, Rules: rules},
			[]string{"info", "players", "rules"}, nil, ""},
		{"info failed", a2s.Result{InfoErr: timeout, Players: players, Rules: rules},
			[]string{"players", "rules"}, []string{"info"}, ""},
		{"players failed", a2s.Result{Info: info, PlayersErr: bad, Rules: rules},
			[]string{"info", "rules"}, []string{"players"}, ""},
		{"rules failed", a2s.Result{Info: info, Players: players, RulesErr: bad},
			[]string{"info", "players"}, []string{"rules"}, ""},
		{"only lists", a2s.Result{Players: odd, Rules: oddRules}, []string{"players", "rules"}, nil, ""},
		{"all timed out", a2s.Result{InfoErr: timeout, PlayersErr: timeout, RulesErr: timeout},
			nil, []string{"info", "players", "rules"}, KindTimeout},
		{"goldsource", a2s.Result{Info: gold, GoldSource: gold, Players: &a2s.Players{}, Rules: &a2s.Rules{}},
			[]string{"info", "players", "rules"}, nil, ""},
		{"players, not asked the rest", a2s.Result{Players: players}, []string{"players"}, nil, ""},
		{"ping only", a2s.Result{PingErr: timeout}, nil, nil, ""},
	} {
		r := New("as written", testAddr, "a2s")
		r.SetA2S(&tc.res)
		var got map[string]any
		if err := json.Unmarshal(r.AppendJSON(nil), &got); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for _, s := range []string{"info", "players", "rules"} {
			if _, in := got[s]; in != slices.Contains(tc.sections, s) {
				t.Errorf("%s: %s in the JSON: %v", tc.name, s, in)
			}
			if _, in := got["errors"].(map[string]any)[s]; in != slices.Contains(tc.errors, s) {
				t.Errorf("%s: %s in errors: %v", tc.name, s, in)
			}
		}
		if r.Err == nil && tc.err != "" || r.Err != nil && r.Err.Kind != tc.err {
			t.Errorf("%s: Err %v, want kind %q", tc.name, r.Err, tc.err)
		}
		if tc.res.Info != nil && (r.Ping != tc.res.RTT || r.Summary.Name == nil) {
			t.Errorf("%s: ping %v, summary %+v", tc.name, r.Ping, r.Summary)
		}
		if got["target"] != "as written" {
			t.Errorf("%s: target %v", tc.name, got["target"])
		}
	}
}
