package monitor

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// ruleTest drives a server "s" through a Tracker, as the poller does, and
// hands every event the tracker makes to a rule engine: the rules see
// exactly what production gives them.
type ruleTest struct {
	t       *testing.T
	cfg     *Config
	tracker *Tracker
	engine  *ruleEngine
	got     []string
	alerts  []*Alert
}

// quickDown is a down rule for the status tests: one failure is down.
const quickDown = "failures: 1\ndown_after: 0s\ngrace: 0s\n"

func ruleConfig(t *testing.T, global, address, rules string) *Config {
	t.Helper()
	cfg, err := Parse([]byte(global+"servers:\n  - name: s\n    address: "+address+"\n    alerts: "+rules+"\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func newRuleTest(t *testing.T, global, rules string) *ruleTest {
	t.Helper()
	cfg := ruleConfig(t, global, "127.0.0.1:27015", rules)
	srv := cfg.Server("s")
	return &ruleTest{t: t, cfg: cfg, tracker: NewTracker(srv, cfg.Policy(srv), t0), engine: newRuleEngine(cfg)}
}

// poll plays a poll (as parsePoll reads it) at sec seconds after t0 and
// records the alerts its events raise, one string each: "kind@seconds
// detail".
func (rt *ruleTest) poll(sec float64, poll string) {
	rt.t.Helper()
	at := t0.Add(time.Duration(sec * float64(time.Second)))
	_, evs := rt.tracker.Observe(Poll{Start: at, End: at, Result: parsePoll(rt.t, poll)})
	for _, ev := range evs {
		rt.send(ev)
	}
}

func (rt *ruleTest) send(ev Event) {
	for _, a := range rt.engine.handle(ev) {
		s := fmt.Sprintf("%s@%g", a.Kind, a.Time.Sub(t0).Seconds())
		switch a.Kind {
		case AlertPlayers:
			s += fmt.Sprintf(" %s %d", a.Direction, *a.Players)
		case AlertMap:
			s += " " + a.PreviousMap + ">" + a.Map
		case AlertJoin, AlertLeave:
			s += " " + a.Player
		}
		if a.Delayed {
			s += " delayed"
		}
		rt.got = append(rt.got, s)
		rt.alerts = append(rt.alerts, a)
	}
}

// polls plays one poll per 30 s from sec on: '+' an answer, '-' a
// timeout.
func (rt *ruleTest) polls(sec float64, outcomes string) {
	rt.t.Helper()
	for i := range len(outcomes) {
		rt.poll(sec+float64(30*i), outcomes[i:i+1])
	}
}

func (rt *ruleTest) want(alerts ...string) {
	rt.t.Helper()
	if got, want := strings.Join(rt.got, ", "), strings.Join(alerts, ", "); got != want {
		rt.t.Errorf("alerts:\n got [%s]\nwant [%s]", got, want)
	}
}

func TestRulesDownUpOnce(t *testing.T) {
	t.Parallel()
	rt := newRuleTest(t, "", "[down, up]")
	rt.polls(0, "++---") // the first answer: no news; down at the third failure, a minute after the first
	rt.polls(150, "-++")
	rt.want("down@120", "up@180")
	down, up := rt.alerts[0], rt.alerts[1]
	if down.Failures != 3 || down.Since == nil || !down.Since.Equal(t0.Add(30*time.Second)) || down.Error == nil {
		t.Errorf("down alert %+v", down)
	}
	if want := "s is down: 3 polls in a row failed, no answer for 1m30s (timeout: no answer)"; down.describe(oneLine) != want {
		t.Errorf("down text %q, want %q", down.describe(oneLine), want)
	}
	if up.DowntimeSeconds != 150 {
		t.Errorf("up alert %+v", up)
	}
}

func TestRulesFlappingNone(t *testing.T) {
	t.Parallel()
	rt := newRuleTest(t, "", "[down, up]")
	rt.polls(0, "+-+-+--+-+--+--+-+-+--+")
	rt.want()
	rt.polls(30*23, "---")
	rt.want(fmt.Sprintf("down@%d", 30*25))
}

// TestRulesDownAtStartUp: a server that never answered is news once the
// grace ends, and its alert says since when it has not answered.
func TestRulesDownAtStartUp(t *testing.T) {
	t.Parallel()
	rt := newRuleTest(t, "", "[down, up]")
	rt.polls(0, "-----") // the grace (2m) holds it pending until 120 s
	rt.poll(200, "+")
	rt.want("down@120", "up@200")
	down := rt.alerts[0]
	if down.Since == nil || !down.Since.Equal(t0) || down.Summary != nil {
		t.Errorf("down alert %+v", down)
	}
	if want := "s is down: 5 polls in a row failed, never answered in 2m (timeout: no answer)"; down.describe(oneLine) != want {
		t.Errorf("down text %q, want %q", down.describe(oneLine), want)
	}
}

func TestRulesDownCooldown(t *testing.T) {
	t.Parallel()
	rt := newRuleTest(t, quickDown, "[{on: down, cooldown: 5m}, up]")
	rt.poll(0, "+")
	rt.poll(60, "-")  // sent
	rt.poll(120, "+") // answers the down: sent at once
	rt.poll(240, "-") // 3 minutes after the last down: held
	rt.poll(300, "-") // still within the cooldown
	rt.poll(360, "-") // the cooldown has ended: sent, delayed
	rt.poll(390, "-")
	rt.poll(420, "+")
	rt.want("down@60", "up@120", "down@360 delayed", "up@420")
}

func TestRulesDownCooldownFlapResolved(t *testing.T) {
	t.Parallel()
	rt := newRuleTest(t, quickDown, "[{on: down, cooldown: 5m}, up]")
	rt.poll(0, "+")
	rt.poll(60, "-")
	rt.poll(120, "+")
	rt.poll(200, "-") // held
	rt.poll(260, "+") // back before the cooldown ended: nothing to say
	rt.poll(400, "+")
	rt.poll(430, "+")
	rt.want("down@60", "up@120")
}

func TestRulesOnlyUp(t *testing.T) {
	t.Parallel()
	rt := newRuleTest(t, quickDown, "[up]")
	rt.polls(0, "+-+")
	rt.want("up@60")
}

func TestRulesPlayersHysteresis(t *testing.T) {
	t.Parallel()
	rt := newRuleTest(t, "", "[{on: players, threshold: 20, cooldown: 0}]") // hysteresis 2
	for i, n := range []int{10, 19, 20, 19, 20, 19, 20, 18, 19, 20, 25, 3} {
		rt.poll(float64(i*30), fmt.Sprintf("+ count=%d", n))
	}
	// Hovering at 19-20 alerts once; 18 is low again.
	rt.want("players@60 rising 20", "players@210 falling 18", "players@270 rising 20", "players@330 falling 3")
}

func TestRulesPlayersFirstCount(t *testing.T) {
	t.Parallel()
	// A server first seen with 19 players is below 20: reaching 20 is news.
	rt := newRuleTest(t, "", "[{on: players, threshold: 20}]")
	rt.poll(0, "+ count=19")
	rt.poll(30, "+ count=20")
	rt.want("players@30 rising 20")
	// A server first seen at 25 is above: nothing to say until it falls.
	rt2 := newRuleTest(t, "", "[{on: players, threshold: 20}]")
	rt2.poll(0, "+ count=25")
	rt2.poll(30, "+ count=21")
	rt2.want()
}

func TestRulesPlayersDirection(t *testing.T) {
	t.Parallel()
	rt := newRuleTest(t, "", "[{on: players, threshold: 1, direction: falling, cooldown: 0}]") // hysteresis 1
	for i, n := range []int{0, 1, 2, 0, 1, 0} {
		rt.poll(float64(i*30), fmt.Sprintf("+ count=%d", n))
	}
	rt.want("players@90 falling 0", "players@150 falling 0")
}

func TestRulesPlayersCooldown(t *testing.T) {
	t.Parallel()
	rt := newRuleTest(t, "", "[{on: players, threshold: 10, cooldown: 5m}]")
	for _, p := range []struct {
		at float64
		n  int
	}{
		{0, 0},
		{30, 12},  // rising: sent
		{60, 2},   // falling: held
		{90, 12},  // high again: what was announced; nothing held
		{120, 2},  // held
		{330, 2},  // the cooldown has ended: falling, delayed
		{360, 12}, // within the cooldown of the falling alert: held
		{660, 12}, // sent
	} {
		rt.poll(p.at, fmt.Sprintf("+ count=%d", p.n))
	}
	rt.want("players@30 rising 12", "players@330 falling 2 delayed", "players@660 rising 12 delayed")
}

func TestRulesMap(t *testing.T) {
	t.Parallel()
	rt := newRuleTest(t, "", "[{on: map, cooldown: 5m}]")
	rt.poll(0, "+ map=de_dust2") // known, not news
	rt.poll(30, "+ map=de_dust2")
	rt.poll(60, "+ map=de_inferno")
	rt.poll(90, "-")               // a failed poll knows no map
	rt.poll(120, "+ map=de_nuke")  // held
	rt.poll(200, "+ map=de_dust2") // held
	rt.poll(360, "+ map=de_dust2") // the cooldown has ended
	rt.poll(400, "+")              // no map is no change
	rt.want("map@60 de_dust2>de_inferno", "map@360 de_inferno>de_dust2 delayed")
}

func TestRulesJoinLeave(t *testing.T) {
	t.Parallel()
	rt := newRuleTest(t, "", "[{on: join, player: '^Al', cooldown: 5m}, {on: leave, player: '^Alice$', cooldown: 0}]")
	rt.poll(0, "+ players=Alfred,Bob")              // the baseline: online, not news
	rt.poll(30, "+ players=Alfred,Bob,Alice")       // Alice joined
	rt.poll(60, "+ players=Alfred,Bob,Carol")       // Alice left; no rule matches Carol
	rt.poll(90, "+ players=Alfred,Bob,Carol,Alice") // rejoined within the join cooldown: held
	rt.poll(120, "+ players=Alfred,Bob,Carol")      // left: the leave rule has no cooldown
	rt.poll(150, "+ players=Alfred,Bob,Carol,Alice")
	rt.poll(340, "+ players=Alfred,Bob,Carol,Alice") // the cooldown has ended: still on
	rt.poll(370, "+ players=Bob")                    // Alfred left: no leave rule for him
	rt.want("join@30 Alice", "leave@60 Alice", "leave@120 Alice", "join@340 Alice delayed", "leave@370 Alice")
}

// TestRulesJoinLeaveSameName: two players of one name are two joins and,
// when one goes, one leave, as the page and the sessions count them; a
// server going down and coming back is no news of its players.
func TestRulesJoinLeaveSameName(t *testing.T) {
	t.Parallel()
	rt := newRuleTest(t, quickDown, "[{on: join, player: '^Alice$', cooldown: 0}, {on: leave, player: '^Alice$', cooldown: 0}]")
	rt.poll(0, "+ players=Bob")
	rt.poll(30, "+ players=Bob,Alice,Alice")
	rt.poll(60, "+ players=Alice,Bob")
	rt.poll(90, "-")
	rt.poll(120, "+ players=Alice")
	rt.poll(150, "+ players=")
	rt.want("join@30 Alice", "join@30 Alice", "leave@60 Alice", "leave@150 Alice")
}

func TestRulesFailedPollKeepsPlayers(t *testing.T) {
	t.Parallel()
	rt := newRuleTest(t, "", "[{on: leave, player: x, cooldown: 0}, {on: players, threshold: 1, cooldown: 0}]")
	rt.poll(0, "+ players=x")
	rt.poll(30, "-")
	rt.poll(60, "+") // info without counts
	rt.poll(90, "+ players=x")
	rt.want()
}

func TestRulesReloadKeepsAnnounced(t *testing.T) {
	t.Parallel()
	rt := newRuleTest(t, quickDown, "[down, up, {on: map}]")
	rt.poll(0, "+ map=a")
	rt.poll(60, "-")
	rt.engine.reload(ruleConfig(t, quickDown, "127.0.0.1:27015", "[down, up, {on: map, cooldown: 1m}]"))
	rt.poll(90, "-")        // the same down: not again
	rt.poll(120, "+ map=a") // answers the down announced before the reload; the same map
	moved := ruleConfig(t, quickDown, "127.0.0.1:27016", "[down, up, {on: map}]")
	rt.engine.reload(moved)
	rt.tracker = NewTracker(moved.Server("s"), moved.Policy(moved.Server("s")), at(150)) // a new server behind the name
	rt.poll(150, "+ map=b")                                                              // its map is not a change
	rt.send(Event{Kind: EventDown, Server: "nobody", Time: at(160)})
	rt.want("down@60", "up@120")
}

func at(sec float64) time.Time { return t0.Add(time.Duration(sec * float64(time.Second))) }

// TestAlertTextSingular: one failed poll, one player, one alert are said
// in the singular ("1 polls" was a user's complaint).
func TestAlertTextSingular(t *testing.T) {
	t.Parallel()
	same := func(s string) string { return s }
	one := 1
	for _, c := range []struct {
		alert Alert
		want  string
	}{
		{Alert{Kind: AlertDown, Server: "eu-1", Failures: 1}, "eu-1 is down: 1 poll in a row failed"},
		{Alert{Kind: AlertPlayers, Server: "eu-1", Players: &one, Threshold: 1, Direction: Rising}, "eu-1 has 1 player (threshold 1 reached)"},
	} {
		if got := c.alert.describe(same); !strings.HasPrefix(got, c.want) {
			t.Errorf("%q, want it to start %q", got, c.want)
		}
	}
	if got := what([]item{{alert: &Alert{Kind: AlertDown, Server: "a"}}, {alert: &Alert{Kind: AlertUp, Server: "b"}}}); !strings.HasPrefix(got, "2 alerts") {
		t.Errorf("what = %q", got)
	}
}
