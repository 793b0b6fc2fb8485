package monitor

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/minecraft/slp"
	"github.com/gsq-project/gsq/result"
)

// answer is a successful poll's result: a map ("" for none), a player
// count (none when negative) and, unless names is nil, a player list. It
// is the one place the tests build a protocol's answer.
func answer(mapName string, count int, names []string) *result.Result {
	rr := &result.Result{Protocol: "a2s", Ping: 20 * time.Millisecond}
	if count >= 0 {
		rr.Summary.Players = &count
	}
	if mapName != "" {
		rr.Summary.Map = &mapName
	}
	if names != nil {
		players := &a2s.Players{List: []a2s.Player{}}
		for i, name := range names {
			players.List = append(players.List, a2s.Player{Name: a2s.Text(name), Score: int32(i), Duration: 60})
		}
		rr.Detail = &result.A2S{Players: players}
	}
	return rr
}

// step is a poll of a tracker test: at seconds after t0, one of
//
//	"+"                     an answer without a map or a player list
//	"+ map=de_dust2"        an answer with a map
//	"+ players=Alice,Bob"   an answer listing players ("players=" lists nobody)
//	"+ count=12"            an answer with a player count (else the list's length, or none)
//	"-"                     a timeout
//	"c"                     a poll the monitor canceled
//
// and the events it must make besides EventPoll, in order, as eventText
// writes them ("" for none).
type step struct {
	at   float64
	poll string
	want string
}

func parsePoll(t *testing.T, s string) *result.Result {
	t.Helper()
	fields := strings.Fields(s)
	switch fields[0] {
	case "-":
		return &result.Result{Err: errTimeout}
	case "c":
		return &result.Result{Err: &result.Error{Kind: result.KindCanceled}}
	case "+":
	default:
		t.Fatalf("bad poll %q", s)
	}
	var mapName string
	var names []string
	count := -1
	for _, f := range fields[1:] {
		switch k, v, _ := strings.Cut(f, "="); k {
		case "map":
			mapName = v
		case "count":
			if _, err := fmt.Sscan(v, &count); err != nil {
				t.Fatalf("bad poll %q", s)
			}
		case "players":
			names = []string{}
			if v != "" {
				names = strings.Split(v, ",")
			}
			if count < 0 {
				count = len(names)
			}
		default:
			t.Fatalf("bad poll %q", s)
		}
	}
	return answer(mapName, count, names)
}

// eventText writes the events of one poll, EventPoll left out: "up",
// "down", "map:a>b", "join:Alice", "leave:Bob"; "*" marks a Baseline
// event and "@30" one whose time is not the poll's.
func eventText(evs []Event, polled time.Time) string {
	var out []string
	for _, ev := range evs {
		var s string
		switch ev.Kind {
		case EventPoll:
			continue
		case EventMap:
			s = "map:" + ev.Previous + ">" + ev.Detail
		case EventJoin, EventLeave:
			s = string(ev.Kind) + ":" + ev.Detail
		default:
			s = string(ev.Kind)
		}
		if ev.Baseline {
			s += "*"
		}
		if !ev.Time.Equal(polled) {
			s += fmt.Sprintf("@%g", ev.Time.Sub(t0).Seconds())
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

func testServer(playerData bool) *Server {
	q := QueryPlayers
	if !playerData {
		q = QueryInfo
	}
	return &Server{Name: "s", Address: "127.0.0.1:27015", Protocol: DefaultProtocol, Interval: 30 * time.Second, PlayerData: playerData, Query: q}
}

// play feeds the steps to tr and checks each poll's events; it returns
// the last state.
func play(t *testing.T, tr *Tracker, steps []step) ServerState {
	t.Helper()
	var st ServerState
	for i, s := range steps {
		at := t0.Add(time.Duration(s.at * float64(time.Second)))
		var evs []Event
		st, evs = tr.Observe(Poll{Start: at.Add(-50 * time.Millisecond), End: at, Result: parsePoll(t, s.poll)})
		if got := eventText(evs, at); got != s.want {
			t.Errorf("step %d (%g %q): events %q, want %q", i, s.at, s.poll, got, s.want)
		}
		for _, ev := range evs {
			if ev.Server != "s" || ev.State == nil || !reflect.DeepEqual(*ev.State, st) {
				t.Errorf("step %d: event %+v lacks the server or the new state", i, ev)
			}
		}
		if s.poll != "c" && (len(evs) == 0 || evs[len(evs)-1].Kind != EventPoll) {
			t.Errorf("step %d: the last event is not the poll's", i)
		}
	}
	return st
}

func TestTracker(t *testing.T) {
	t.Parallel()
	defaults := Policy{Players: true}
	tests := []struct {
		name   string
		policy Policy
		steps  []step
		status Status
	}{
		{"up on the first answer, once", defaults, []step{{0, "+", "up"}, {30, "+", ""}}, StatusUp},
		{"one lost datagram is no flap", defaults, []step{{0, "+", "up"}, {30, "-", ""}, {60, "+", ""}}, StatusUp},
		{"flapping never goes down", defaults, []step{
			{0, "+", "up"}, {30, "-", ""}, {60, "-", ""}, {90, "+", ""}, {120, "-", ""}, {150, "-", ""}, {180, "+", ""},
		}, StatusUp},
		{"three failures over a minute: down once, then up", defaults, []step{
			{0, "+", "up"}, {30, "-", ""}, {60, "-", ""}, {90, "-", "down"}, {120, "-", ""}, {150, "+", "up"},
		}, StatusUp},
		{"failures faster than down_after wait for it", Policy{Health: HealthPolicy{Failures: 2, DownAfter: time.Minute}}, []step{
			{0, "+", "up"}, {10, "-", ""}, {20, "-", ""}, {60, "-", ""}, {70, "-", "down"},
		}, StatusDown},
		{"a server that never answers stays pending through the grace", Policy{Health: HealthPolicy{Grace: 100 * time.Second}}, []step{
			{0, "-", ""}, {30, "-", ""}, {60, "-", ""}, {90, "-", ""}, {120, "-", "down"},
		}, StatusDown},
		{"a canceled poll says nothing", defaults, []step{
			{0, "+", "up"}, {30, "-", ""}, {60, "c", ""}, {90, "-", ""}, {120, "c", ""}, {150, "-", "down"},
		}, StatusDown},

		{"players: a baseline, then a multiset of names", defaults, []step{
			{0, "+ players=Alice,Player,Player", "up join:Alice* join:Player* join:Player*"},
			{30, "+ players=Alice,Player", "leave:Player"},
			{60, "+ players=Player,Alice,Player,Player,", "join:Player join:Player"},
			{90, "+ players=Bob", "leave:Alice leave:Player leave:Player leave:Player join:Bob"},
			{120, "+ players=", "leave:Bob"},
			{150, "+ players=Bob", "join:Bob"},
		}, StatusUp},
		{"players: a failed poll and an answer without a list change nothing", defaults, []step{
			{0, "+ players=Alice", "up join:Alice*"},
			{30, "-", ""},
			{60, "+", ""},
			{90, "+ players=Alice", ""},
		}, StatusUp},
		{"players: a server gone down loses them when last listed; back, a baseline", defaults, []step{
			{0, "+ players=Alice,Bob", "up join:Alice* join:Bob*"},
			{30, "+ players=Alice,Bob", ""},
			{60, "-", ""}, {90, "-", ""},
			{120, "-", "down leave:Alice*@30 leave:Bob*@30"},
			{150, "-", ""},
			{180, "+ players=Bob", "up join:Bob*"},
		}, StatusUp},
		{"players: unlisted past the session gap, short of down", Policy{Players: true, SessionGap: time.Minute, Health: HealthPolicy{Failures: 100}}, []step{
			{0, "+ players=Alice", "up join:Alice*"},
			{30, "-", ""}, {60, "-", ""},
			{91, "-", "leave:Alice*@0"},
			{120, "+ players=Alice", "join:Alice*"},
		}, StatusUp},
		{"players: a list after the gap starts afresh", Policy{Players: true, SessionGap: time.Minute}, []step{
			{0, "+ players=Alice", "up join:Alice*"},
			{30, "+", ""},
			{90, "+ players=Alice", "leave:Alice*@0 join:Alice*"},
		}, StatusUp},
		{"players not followed: no list, no events", Policy{}, []step{
			{0, "+ players=Alice map=a", "up"}, {30, "+ players=Bob map=a", ""},
		}, StatusUp},
		{"players: nameless entries are no one", defaults, []step{
			{0, "+ players=,,Alice", "up join:Alice*"}, {30, "+ players=,Alice", ""},
		}, StatusUp},

		{"map: the first is known, a change is news", defaults, []step{
			{0, "+ map=de_dust2", "up"},
			{30, "+ map=de_dust2", ""},
			{60, "+ map=de_inferno", "map:de_dust2>de_inferno"},
			{90, "-", ""},
			{120, "+", ""}, // no map: no change
			{150, "+ map=de_inferno", ""},
		}, StatusUp},
		{"map: kept across an outage", defaults, []step{
			{0, "+ map=a", "up"}, {30, "-", ""}, {60, "-", ""}, {90, "-", "down"}, {120, "+ map=b", "up map:a>b"},
		}, StatusUp},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tr := NewTracker(testServer(tt.policy.Players), tt.policy, t0)
			st := play(t, tr, tt.steps)
			if st.Status != tt.status {
				t.Errorf("status %s, want %s", st.Status, tt.status)
			}
		})
	}
}

// TestTrackerState checks what the state carries besides the events:
// the poll's figures, the failures, and the players online.
func TestTrackerState(t *testing.T) {
	t.Parallel()
	tr := NewTracker(testServer(true), Policy{Players: true}, t0)
	st := play(t, tr, []step{{0, "+ map=a players=Alice,Bob", "up join:Alice* join:Bob*"}, {30, "-", ""}, {60, "-", ""}})
	if st.Status != StatusUp || st.ConsecutiveFailures != 2 || !st.FailingSince.Equal(t0.Add(30*time.Second)) ||
		st.LastError == nil || !st.LastSuccess.Equal(t0) || !st.LastPoll.Equal(t0.Add(time.Minute)) {
		t.Errorf("after two failures: %+v", st)
	}
	if len(st.Players) != 2 || st.Players[1].Name != "Bob" || st.Players[1].Score != 1 || st.Players[1].Duration != time.Minute {
		t.Errorf("a failing server keeps its last list: %+v", st.Players)
	}
	if st.Summary.Map == nil || *st.Summary.Map != "a" || st.Ping != 20*time.Millisecond || st.QueryDuration != 50*time.Millisecond {
		t.Errorf("the last answer's figures: %+v", st)
	}
	if st.Queries["ok"] != 1 || st.Queries["timeout"] != 2 {
		t.Errorf("queries %v", st.Queries)
	}
	st, _ = tr.Observe(Poll{Start: t0.Add(90 * time.Second), End: t0.Add(90 * time.Second), Result: &result.Result{Err: errTimeout}})
	if st.Status != StatusDown || st.Players != nil {
		t.Errorf("a server down has nobody on: %s, %+v", st.Status, st.Players)
	}
	if tr.State().Queries["timeout"] != 3 || st.Queries["timeout"] != 3 {
		t.Error("State is not the last state")
	}
}

// TestTrackerPlayerDataOff: a reload that stops following the players
// ends their presence at the next poll; turning it on again starts from
// a baseline.
func TestTrackerPlayerDataOff(t *testing.T) {
	t.Parallel()
	on, off := Policy{Players: true}, Policy{}
	tr := NewTracker(testServer(true), on, t0)
	play(t, tr, []step{{0, "+ players=Alice", "up join:Alice*"}})
	tr.Reconfigure(testServer(false), off)
	st := play(t, tr, []step{{30, "+ players=Alice", "leave:Alice*@0"}})
	if st.Players != nil {
		t.Errorf("players %+v with the player data off", st.Players)
	}
	tr.Reconfigure(testServer(true), on)
	play(t, tr, []step{{60, "+ players=Alice", "join:Alice*"}})
}

// TestTrackerResumePlayers: a monitor that restarts carries the stored
// sessions on within the session gap, and ends them past it.
func TestTrackerResumePlayers(t *testing.T) {
	t.Parallel()
	p := Policy{Players: true, SessionGap: 5 * time.Minute}
	tr := NewTracker(testServer(true), p, t0)
	tr.ResumePlayers([]string{"Alice", "Player", "Player"}, t0.Add(-time.Minute))
	play(t, tr, []step{{0, "+ players=Alice,Player,Bob", "up leave:Player join:Bob"}})

	stale := NewTracker(testServer(true), p, t0)
	stale.ResumePlayers([]string{"Alice"}, t0.Add(-time.Hour))
	play(t, stale, []step{{0, "+ players=Alice", "up leave:Alice*@-3600 join:Alice*"}})

	// The player data was turned off while the monitor was stopped.
	off := NewTracker(testServer(false), Policy{}, t0)
	off.ResumePlayers([]string{"Alice"}, t0.Add(-time.Minute))
	play(t, off, []step{{0, "- ", "leave:Alice*@-60"}, {30, "+ players=Alice", "up"}})
}

// TestTrackerSnapshot: a tracker restored from a snapshot that went
// through JSON carries on exactly as the one it was taken from.
func TestTrackerSnapshot(t *testing.T) {
	t.Parallel()
	p := Policy{Players: true}
	first := []step{{0, "+ map=a players=Alice,Player,Player", "up join:Alice* join:Player* join:Player*"}, {30, "-", ""}, {60, "-", ""}}
	rest := []string{"-", "-", "+ map=b players=Bob", "+ map=b players=Bob,Bob", "-", "+ map=c players="}
	a := NewTracker(testServer(true), p, t0)
	play(t, a, first)
	b, err := json.Marshal(a.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	var snap Snapshot
	if err := json.Unmarshal(b, &snap); err != nil {
		t.Fatal(err)
	}
	c := RestoreTracker(testServer(true), p, snap)
	for i, poll := range rest {
		at := t0.Add(time.Duration(90+30*i) * time.Second)
		sa, ea := a.Observe(Poll{Start: at, End: at, Result: parsePoll(t, poll)})
		sc, ec := c.Observe(Poll{Start: at, End: at, Result: parsePoll(t, poll)})
		if !reflect.DeepEqual(sa, sc) || eventText(ea, at) != eventText(ec, at) {
			t.Fatalf("poll %q: the restored tracker says\n%+v %s\nthe original\n%+v %s", poll, sc, eventText(ec, at), sa, eventText(ea, at))
		}
	}
}

// TestTrackerUpWithoutStatus: a Minecraft server that takes the
// connection and closes it without a status (enable-status=false, or
// still starting) is up, not down, however many polls it answers so.
func TestTrackerUpWithoutStatus(t *testing.T) {
	t.Parallel()
	noStatus := func() *result.Result {
		rr := &result.Result{Protocol: "minecraft"}
		rr.SetMinecraft(nil, slp.ErrNoStatus)
		return rr
	}
	if rr := noStatus(); rr.Err == nil || !rr.UpWithoutAnswer() {
		t.Fatalf("a closed status: err %v, up without answer %v", rr.Err, rr.UpWithoutAnswer())
	}
	tr := NewTracker(testServer(true), Policy{Players: true}, t0)
	var kinds []EventKind
	for i := range 6 {
		at := t0.Add(time.Duration(i) * 30 * time.Second)
		_, evs := tr.Observe(Poll{Start: at, End: at, Result: noStatus()})
		for _, ev := range evs {
			if ev.Kind != EventPoll {
				kinds = append(kinds, ev.Kind)
			}
		}
	}
	if st := tr.State(); st.Status != StatusUp || len(kinds) != 1 || kinds[0] != EventUp || st.ConsecutiveFailures != 0 || st.LastError == nil {
		t.Errorf("status %s, events %v, %d failures", st.Status, kinds, st.ConsecutiveFailures)
	}
	// A timeout is still a failure.
	at := t0.Add(3 * time.Minute)
	if st, _ := tr.Observe(Poll{Start: at, End: at, Result: &result.Result{Err: errTimeout}}); st.ConsecutiveFailures != 1 {
		t.Errorf("a timeout after: %+v", st)
	}
}
