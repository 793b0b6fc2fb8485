package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/ogp"
	"github.com/gsq-project/gsq/ogp/ogptest"
	"github.com/gsq-project/gsq/scan"
	"github.com/gsq-project/gsq/sim"
)

// referenceJSON is the oracle for appendJSON: the same object tree
// encoded by encoding/json (HTML escaping off), with the player and rule
// lists spelled out field by field as the README documents them.
func referenceJSON(t testing.TB, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case object:
			b.WriteByte('{')
			for i, f := range v {
				if i > 0 {
					b.WriteByte(',')
				}
				walk(f.key)
				b.WriteByte(':')
				walk(f.value)
			}
			b.WriteByte('}')
		case []object:
			if v == nil {
				b.WriteString("null")
				return
			}
			b.WriteByte('[')
			for i, o := range v {
				if i > 0 {
					b.WriteByte(',')
				}
				walk(o)
			}
			b.WriteByte(']')
		case playerList:
			list := []object{}
			for _, pl := range v.p.List {
				var o object
				o.set("index", pl.Index)
				o.text("name", pl.Name)
				o.set("score", pl.Score)
				o.set("duration", roundFloat(float64(pl.Duration), 3))
				if v.p.Ship {
					o.set("deaths", pl.Deaths)
					o.set("money", pl.Money)
				}
				list = append(list, o)
			}
			walk(list)
		case ruleList:
			list := []object{}
			for _, r := range v.r.List {
				var o object
				o.text("name", r.Name)
				o.text("value", r.Value)
				list = append(list, o)
			}
			walk(list)
		default:
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(v); err != nil {
				t.Fatal(err)
			}
			b.Truncate(b.Len() - 1) // Encode's newline
		}
	}
	walk(v)
	return b.Bytes()
}

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
		"bad target":       {Target: scan.ParseTarget(3, "nope:x", 27015), Status: scan.StatusFailed, Err: errors.New("scan: bad target")},
		"unresolved name":  {Target: scan.ParseTarget(4, "example.invalid", 27015), Err: errors.New("no such host")},
		"players, no info": res(&scan.A2SResult{Players: players}),
	}
}

func TestScanJSONMatchesReference(t *testing.T) {
	for name, r := range scanResults() {
		got, want := appendScanResult(nil, r), referenceJSON(t, a2sResultOf(r).JSON())
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
}

func BenchmarkScanJSON(b *testing.B) {
	r := scanResults()["full"]
	b.Run("reference", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			referenceJSON(b, a2sResultOf(r).JSON())
		}
	})
	b.Run("scan", func(b *testing.B) {
		var buf []byte
		b.ReportAllocs()
		for b.Loop() {
			buf = appendScanResult(buf[:0], r)
		}
	})
}

func TestAppendJSONMatchesReferenceOGP(t *testing.T) {
	for _, d := range []ogp.Dialect{ogp.V091, ogp.V1} {
		for _, r := range []*OGPResult{
			{Address: "127.0.0.1:1", Dialect: d, Ping: 1500 * time.Microsecond, Answer: ogptest.SampleAnswer(d, 5)},
			{Address: "127.0.0.1:2", Dialect: d, Err: ogp.ErrTimeout},
		} {
			o := r.JSON()
			if got, want := appendJSON(nil, o), referenceJSON(t, o); !bytes.Equal(got, want) {
				t.Errorf("%v:\n got %s\nwant %s", d, got, want)
			}
		}
	}
}
