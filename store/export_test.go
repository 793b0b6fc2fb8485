package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestExport(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engine) {
		ctx := context.Background()
		st := e.open(t)
		syncNames(t, st, "a", "b")
		hostile := up("b", t0.Add(30*time.Second), 2)
		hostile.Map = `=HYPERLINK("x"),"quoted"`
		hostile.Ping = 1500 * time.Microsecond
		noCount := up("a", t0.Add(60*time.Second), -1)
		must(t, st.Write(ctx, []Sample{up("a", t0, 3), down("b", t0)}))
		must(t, st.Write(ctx, []Sample{hostile, noCount}))
		var buf bytes.Buffer
		must(t, Export(ctx, st, &buf, ExportOptions{Format: "csv", Level: LevelRaw}))
		want := `time,server,up,players,max_players,bots,map,version,ping_ms
2026-03-02T00:00:00Z,a,true,3,32,0,de_dust2,1.0,20.000
2026-03-02T00:00:00Z,b,false,,,,,,
2026-03-02T00:00:30Z,b,true,2,32,0,"'=HYPERLINK(""x""),""quoted""",1.0,1.500
2026-03-02T00:01:00Z,a,true,,32,0,de_dust2,1.0,20.000
`
		if buf.String() != want {
			t.Errorf("CSV:\n%s\nwant\n%s", buf.String(), want)
		}
		buf.Reset()
		must(t, Export(ctx, st, &buf, ExportOptions{Format: "jsonl", Level: LevelRaw, Span: Span{Server: "b", From: t0.Add(time.Second)}}))
		var obj map[string]any
		lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
		if len(lines) != 1 {
			t.Fatalf("JSON lines of b from 1 s: %q", buf.String())
		}
		must(t, json.Unmarshal([]byte(lines[0]), &obj))
		if obj["map"] != hostile.Map || obj["ping_ms"] != 1.5 || obj["players"] != 2.0 || obj["time"] != "2026-03-02T00:00:30Z" {
			t.Errorf("JSON line %s", lines[0])
		}
		// Rollups: stored buckets only.
		for m := 2; m < 30; m++ {
			must(t, st.Write(ctx, []Sample{up("a", min_(m), m)}))
		}
		must(t, st.Maintain(ctx, min_(30)))
		buf.Reset()
		must(t, Export(ctx, st, &buf, ExportOptions{Format: "csv", Level: LevelMinute, Span: Span{Server: "a", To: min_(3)}}))
		want = `time,server,level,samples,uptime,up,min_players,avg_players,max_players,capacity
2026-03-02T00:00:00Z,a,minute,1,1.0000,true,3,3.00,3,32
2026-03-02T00:01:00Z,a,minute,1,1.0000,true,,,,32
2026-03-02T00:02:00Z,a,minute,1,1.0000,true,2,2.00,2,32
`
		if buf.String() != want {
			t.Errorf("minute CSV:\n%s\nwant\n%s", buf.String(), want)
		}
		buf.Reset()
		must(t, Export(ctx, st, &buf, ExportOptions{Format: "jsonl", Level: LevelMinute}))
		if n := strings.Count(buf.String(), "\n"); n != 29+1 {
			t.Errorf("%d minute buckets exported, want 30 (29 of a rolled up a minute after they end, 1 of b)", n)
		}
		if err := Export(ctx, st, &buf, ExportOptions{Format: "xml"}); err == nil {
			t.Error("Export as xml: no error")
		}
		if err := Export(ctx, st, &buf, ExportOptions{Format: "csv", Span: Span{Server: "nope"}}); !errors.Is(err, ErrUnknownServer) {
			t.Errorf("Export of an unknown server: %v", err)
		}
		// An error from the callback stops the stream and comes back.
		stop := errors.New("stop")
		calls := 0
		err := st.EachSample(ctx, Span{}, func(Sample) error { calls++; return stop })
		if !errors.Is(err, stop) || calls != 1 {
			t.Errorf("EachSample after an error: %v, %d calls", err, calls)
		}
	})
}

func TestServerTextIsStoredSafely(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engine) {
		ctx := context.Background()
		st := e.open(t)
		syncNames(t, st, "s")
		smp := withPlayers("s", t0, "bad\xff\x00name:1", strings.Repeat("é", 300)+":2")
		smp.Map = "de_\x00dust\xfe"
		smp.Name = "<script>alert(1)</script>\xc3"
		must(t, st.Write(ctx, []Sample{smp}))
		var got Sample
		must(t, st.EachSample(ctx, Span{}, func(s Sample) error { got = s; return nil }))
		if got.Map != "de_dust\uFFFD" {
			t.Errorf("map %q", got.Map)
		}
		sessions, err := st.Sessions(ctx, SessionQuery{})
		must(t, err)
		for _, s := range sessions {
			if s.Player != "bad\uFFFDname" && (len(s.Player) > maxText || !strings.HasPrefix(s.Player, "éé")) {
				t.Errorf("player %q", s.Player)
			}
		}
		list, err := st.Servers(ctx)
		must(t, err)
		if list[0].Announced != "<script>alert(1)</script>\uFFFD" {
			t.Errorf("announced name %q", list[0].Announced)
		}
	})
}
