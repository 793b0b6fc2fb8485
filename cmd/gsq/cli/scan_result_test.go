package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"testing"
	"time"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/internal/sim"
	"github.com/gsq-project/gsq/ogp"
	"github.com/gsq-project/gsq/ogp/ogptest"
	"github.com/gsq-project/gsq/result"
	"github.com/gsq-project/gsq/scan"
)

func scanResults() map[string]*scan.Result {
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
	addr := scan.ParseTarget(1, "127.0.0.1:27015", 27015)
	timeout := fmt.Errorf("wrapped: %w", a2s.ErrTimeout)
	bad := &a2s.ParseError{Packet: "rules", Offset: 9, Err: a2s.ErrTruncated}
	res := func(a *scan.A2SResult) *scan.Result {
		return &scan.Result{Target: addr, Addr: addr.Addr, A2S: a}
	}
	return map[string]*scan.Result{
		"full":             res(&scan.A2SResult{Ping: 1234567 * time.Nanosecond, Info: info, Players: players, Rules: rules}),
		"info failed":      res(&scan.A2SResult{InfoErr: timeout, Players: players, Rules: rules}),
		"players failed":   res(&scan.A2SResult{Info: info, PlayersErr: bad, Rules: rules}),
		"rules failed":     res(&scan.A2SResult{Info: info, Players: players, RulesErr: bad}),
		"only lists":       res(&scan.A2SResult{Players: odd, Rules: oddRules}),
		"all timed out":    res(&scan.A2SResult{InfoErr: timeout, PlayersErr: timeout, RulesErr: timeout}),
		"goldsource":       res(&scan.A2SResult{Info: gold, GoldSource: gold, Players: &a2s.Players{}, Rules: &a2s.Rules{}}),
		"bad target":       {Target: scan.ParseTarget(3, "nope:x", 27015), Status: scan.StatusFailed, Err: fmt.Errorf("%w: line 3", scan.ErrBadTarget)},
		"unresolved name":  {Target: scan.ParseTarget(4, "example.invalid", 27015), Err: &net.DNSError{Err: "no such host", Name: "example.invalid", IsNotFound: true}},
		"players, no info": res(&scan.A2SResult{Players: players}),
	}
}

// TestScanResult checks the one conversion from the scan engine's result:
// every section where the contract puts it, and the JSON valid.
func TestScanResult(t *testing.T) {
	t.Parallel()
	q := &scanQuery{protocol: result.A2SProtocol}
	want := map[string]struct {
		sections []string // in the JSON
		errors   []string // in "errors"
		err      result.Kind
	}{
		"full":             {[]string{"info", "players", "rules"}, nil, ""},
		"info failed":      {[]string{"players", "rules"}, []string{"info"}, ""},
		"players failed":   {[]string{"info", "rules"}, []string{"players"}, ""},
		"rules failed":     {[]string{"info", "players"}, []string{"rules"}, ""},
		"only lists":       {[]string{"players", "rules"}, nil, ""},
		"all timed out":    {nil, []string{"info", "players", "rules"}, result.KindTimeout},
		"goldsource":       {[]string{"info", "players", "rules"}, nil, ""},
		"bad target":       {nil, nil, result.KindInvalid},
		"unresolved name":  {nil, nil, result.KindUnreachable},
		"players, no info": {[]string{"players"}, nil, ""},
	}
	for name, sr := range scanResults() {
		r := q.result(sr, "as written")
		var got map[string]any
		if err := json.Unmarshal(r.AppendJSON(nil), &got); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		w := want[name]
		for _, s := range []string{"info", "players", "rules"} {
			if _, in := got[s]; in != contains(w.sections, s) {
				t.Errorf("%s: %s in the JSON: %v", name, s, in)
			}
			if _, in := got["errors"].(map[string]any)[s]; in != contains(w.errors, s) {
				t.Errorf("%s: %s in errors: %v", name, s, in)
			}
		}
		if r.Err == nil && w.err != "" || r.Err != nil && r.Err.Kind != w.err {
			t.Errorf("%s: Err %v, want kind %q", name, r.Err, w.err)
		}
		if got["target"] != "as written" {
			t.Errorf("%s: target %v", name, got["target"])
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestScanResultOGP(t *testing.T) {
	t.Parallel()
	q := &scanQuery{protocol: result.OGPProtocol, dialect: ogp.V1, asked: ogp.RequestServerInfo | ogp.RequestPlayers}
	addr := scan.ParseTarget(1, "127.0.0.1:7000", 0)
	r := q.result(&scan.Result{Target: addr, Addr: addr.Addr, OGP: &scan.OGPResult{Ping: time.Millisecond, Answer: ogptest.SampleAnswer(ogp.V1, 3)}}, "x")
	if r.Err != nil || r.OGP.Answer == nil || r.Summary.Name == nil || r.Ping != time.Millisecond {
		t.Errorf("answer: %+v", r)
	}
	r = q.result(&scan.Result{Target: addr, Addr: addr.Addr, OGP: &scan.OGPResult{Err: ogp.ErrTimeout}}, "x")
	if r.Err == nil || r.Err.Kind != result.KindTimeout || len(r.Errors) != 2 || !errors.Is(r.Err, ogp.ErrTimeout) {
		t.Errorf("timeout: %+v", r)
	}
}

// BenchmarkScanJSON measures what `gsq scan` does per server it prints:
// the conversion from the engine's result and the JSON encoding.
func BenchmarkScanJSON(b *testing.B) {
	sr := scanResults()["full"]
	q := &scanQuery{protocol: result.A2SProtocol}
	b.Run("scan", func(b *testing.B) {
		var buf []byte
		b.ReportAllocs()
		for b.Loop() {
			buf = q.result(sr, "127.0.0.1:27015").AppendJSON(buf[:0])
		}
	})
}
