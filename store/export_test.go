package store

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode"
)

func TestExport(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engine) {
		ctx := context.Background()
		st := e.open(t)
		syncNames(t, st, "a", "b")
		hostile := up("b", t0.Add(30*time.Second), 2)
		hostile.Map = `=HYPERLINK("x"),"quoted"`
		hostile.Ping = 1500 * time.Microsecond
		hostile.Vantage = "eu" // polled by a fleet's worker of region eu
		noCount := up("a", t0.Add(60*time.Second), -1)
		must(t, st.Write(ctx, []Sample{up("a", t0, 3), down("b", t0)}))
		must(t, st.Write(ctx, []Sample{hostile, noCount}))
		var buf bytes.Buffer
		must(t, Export(ctx, st, &buf, ExportOptions{Format: "csv", Level: LevelRaw}))
		want := `time,server,up,players,max_players,bots,map,version,ping_ms,vantage
2026-03-02T00:00:00Z,a,true,3,32,0,de_dust2,1.0,20.000,
2026-03-02T00:00:00Z,b,false,,,,,,,
2026-03-02T00:00:30Z,b,true,2,32,0,"'=HYPERLINK(""x""),""quoted""",1.0,1.500,eu
2026-03-02T00:01:00Z,a,true,,32,0,de_dust2,1.0,20.000,
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
		if obj["map"] != hostile.Map || obj["vantage"] != "eu" || obj["ping_ms"] != 1.5 || obj["players"] != 2.0 || obj["time"] != "2026-03-02T00:00:30Z" {
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
		if n := strings.Count(buf.String(), "\n"); n != 30+1 {
			t.Errorf("%d minute buckets exported, want 31 (30 of a, the last one not rolled up yet, and 1 of b)", n)
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

// TestExportGivesTheAPIsFigures: `gsq monitor export --level minute`
// (and hour, day) writes, bucket for bucket, what History, and so the
// API, answers for the same span, the minutes not rolled up yet
// included. It used to leave the last 7 to 10 minutes out.
func TestExportGivesTheAPIsFigures(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engine) {
		ctx := context.Background()
		st := e.open(t)
		syncNames(t, st, "a", "b")
		// 2 h 10 min of polls every 20 s; maintenance (and so rollups)
		// up to 2 h 5 min.
		last := 130*time.Minute - 20*time.Second
		for at := time.Duration(0); at <= last; at += 20 * time.Second {
			n := int(at/time.Minute) % 7
			a, b := up("a", t0.Add(at), n), up("b", t0.Add(at+7*time.Second), 2*n)
			switch {
			case at/time.Minute%11 == 3:
				a = down("a", a.Time)
			case at/time.Minute%13 == 5:
				b.Players = -1 // counted no players
			}
			must(t, st.Write(ctx, []Sample{a, b}))
			if at == 125*time.Minute {
				must(t, st.Maintain(ctx, t0.Add(at)))
			}
		}
		type line struct {
			Server string `json:"server"`
			Level  string `json:"level"`
			Point
		}
		for _, span := range []Span{
			{},
			{Server: "a"},
			{Server: "b", From: t0.Add(30*time.Minute + 30*time.Second), To: t0.Add(127*time.Minute + 10*time.Second)},
			{From: t0.Add(121 * time.Minute), To: t0.Add(2 * time.Hour)},
		} {
			for _, level := range []Level{LevelMinute, LevelHour, LevelDay} {
				var buf bytes.Buffer
				must(t, Export(ctx, st, &buf, ExportOptions{Format: "jsonl", Level: level, Span: span}))
				exported := map[string][]Point{}
				dec := json.NewDecoder(&buf)
				for dec.More() {
					var l line
					must(t, dec.Decode(&l))
					exported[l.Server] = append(exported[l.Server], l.Point)
				}
				for _, server := range []string{"a", "b"} {
					if span.Server != "" && span.Server != server {
						continue
					}
					from, to := span.From, span.To
					if from.IsZero() {
						from = t0
					}
					if to.IsZero() {
						to = t0.Add(last + 8*time.Second)
					}
					all, err := st.History(ctx, server, from, to, level.Bucket())
					must(t, err)
					var want []Point
					for _, p := range all {
						if p.Samples > 0 {
							want = append(want, p)
						}
					}
					got := exported[server]
					if len(got) != len(want) {
						t.Errorf("%v of %s over %v..%v: %d buckets exported, History has %d", level, server, span.From, span.To, len(got), len(want))
						continue
					}
					for i := range want {
						if !got[i].Time.Equal(want[i].Time) || got[i].Samples != want[i].Samples || got[i].Uptime != want[i].Uptime ||
							got[i].MinPlayers != want[i].MinPlayers || got[i].AvgPlayers != want[i].AvgPlayers ||
							got[i].MaxPlayers != want[i].MaxPlayers || got[i].Capacity != want[i].Capacity || got[i].Up != want[i].Up {
							t.Errorf("%v of %s, bucket %d: exported %+v, History %+v", level, server, i, got[i], want[i])
						}
					}
				}
			}
		}
	})
}

// TestExportReadsServersInChunks: an export of more servers than one
// statement names reads them in chunks, and still writes each server's
// buckets, rolled up or not, by server then time.
func TestExportReadsServersInChunks(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engine) {
		ctx := context.Background()
		st := e.open(t)
		names := make([]string, maxServersAtOnce+20)
		for i := range names {
			names[i] = fmt.Sprintf("s%04d", i)
		}
		syncNames(t, st, names...)
		for m := range 15 {
			round := make([]Sample, len(names))
			for i, name := range names {
				round[i] = up(name, min_(m).Add(time.Duration(i%50)*time.Second), i%9)
			}
			must(t, st.Write(ctx, round))
			if m == 12 {
				must(t, st.Maintain(ctx, min_(m)))
			}
		}
		var got []string
		must(t, st.EachPoint(ctx, LevelMinute, Span{}, func(server string, p Point) error {
			got = append(got, fmt.Sprintf("%s %d %d", server, p.Time.Sub(t0)/time.Minute, p.MaxPlayers))
			return nil
		}))
		var want []string
		for i, name := range names {
			for m := range 15 {
				want = append(want, fmt.Sprintf("%s %d %d", name, m, i%9))
			}
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%d buckets exported, want %d, by server then time", len(got), len(want))
		}
	})
}

// TestExportCSVCellsCarryNoControlCharacter: a game server that puts
// escape sequences, line breaks and tabs in its map name gets none of
// them into a CSV cell: each becomes U+FFFD (JSON lines keep them,
// escaped).
func TestExportCSVCellsCarryNoControlCharacter(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engine) {
		ctx := context.Background()
		st := e.open(t)
		syncNames(t, st, "s")
		smp := up("s", t0, 1)
		smp.Map = "\x1b[31mred\x1b[0m\r\nline\ttab\x7f\u0085\u009b2J"
		smp.Version = "\t=cmd|' /C calc'!A0"
		must(t, st.Write(ctx, []Sample{smp}))
		must(t, st.Maintain(ctx, t0.Add(time.Hour)))
		for _, level := range []Level{LevelRaw, LevelMinute} {
			var buf bytes.Buffer
			must(t, Export(ctx, st, &buf, ExportOptions{Format: "csv", Level: level}))
			body := strings.TrimSuffix(buf.String(), "\n")
			if i := strings.IndexFunc(strings.ReplaceAll(body, "\n", ""), unicode.IsControl); i >= 0 {
				t.Errorf("%v CSV carries a control character: %q", level, body)
			}
			if level == LevelRaw && !strings.Contains(body, ",\uFFFD[31mred\uFFFD[0m\uFFFD\uFFFDline\uFFFDtab\uFFFD\uFFFD\uFFFD2J,\uFFFD=cmd|' /C calc'!A0,") {
				t.Errorf("raw CSV: %q", body)
			}
		}
		var buf bytes.Buffer
		must(t, Export(ctx, st, &buf, ExportOptions{Format: "jsonl"}))
		var obj struct{ Map, Version string }
		must(t, json.Unmarshal(buf.Bytes(), &obj))
		if obj.Map != smp.Map || obj.Version != smp.Version {
			t.Errorf("JSON lines changed the texts: %q %q", obj.Map, obj.Version)
		}
	})
}

// FuzzExportRecord writes a sample of any texts as a CSV record and a
// JSON line and reads them back: the CSV is one record of 10 cells with
// no control character and no formula, each the text with its control
// characters replaced; the JSON line gives back every text the store
// keeps.
func FuzzExportRecord(f *testing.F) {
	f.Add("eu-1", "de_dust2", "1.0")
	f.Add("=1+1", "\x1b[2J\r\n", "\t@SUM(A1)")
	f.Add("a,b\"c", "é\u0085\xff", "-")
	f.Fuzz(func(t *testing.T, server, mapName, version string) {
		smp := up(clean(server, maxNameText), t0, 3)
		smp.Map, smp.Version = clean(mapName, maxText), clean(version, maxText)
		var buf bytes.Buffer
		w := csv.NewWriter(&buf)
		must(t, w.Write(sampleRecord(smp)))
		w.Flush()
		if i := strings.IndexFunc(strings.TrimSuffix(buf.String(), "\n"), unicode.IsControl); i >= 0 {
			t.Fatalf("a control character in %q", buf.String())
		}
		recs, err := csv.NewReader(&buf).ReadAll()
		if err != nil || len(recs) != 1 || len(recs[0]) != 10 {
			t.Fatalf("read back %d records (%v): %q", len(recs), err, recs)
		}
		// The rule the docs state: a control character becomes U+FFFD,
		// then a formula gets a leading quote.
		for i, text := range map[int]string{1: smp.Server, 6: smp.Map, 7: smp.Version} {
			want := strings.Map(func(r rune) rune {
				if unicode.IsControl(r) {
					return '\uFFFD'
				}
				return r
			}, text)
			if want != "" && strings.Contains("=+-@", want[:1]) {
				want = "'" + want
			}
			if got := recs[0][i]; got != want || got != "" && strings.Contains("=+-@", got[:1]) {
				t.Fatalf("cell %q of %q, want %q", got, text, want)
			}
		}
		b, err := json.Marshal(sampleObject(smp))
		must(t, err)
		var back sampleJSON
		must(t, json.Unmarshal(b, &back))
		if back.Server != smp.Server || back.Map != smp.Map || back.Version != smp.Version {
			t.Fatalf("JSON gave back %q %q %q for %q %q %q", back.Server, back.Map, back.Version, smp.Server, smp.Map, smp.Version)
		}
	})
}

func TestServerTextIsStoredSafely(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engine) {
		ctx := context.Background()
		st := e.open(t)
		syncNames(t, st, "s")
		smp := withPlayers("s", t0, "bad\xff\x00name:1", strings.Repeat("é", 300)+":2")
		smp = changes(smp, "+bad\xff\x00name", "+"+strings.Repeat("é", 300))
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
