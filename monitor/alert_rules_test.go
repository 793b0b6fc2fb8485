package monitor

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/result"
)

// ruleTest drives a rule engine for one server, "s", with events at
// times given in seconds after t0.
type ruleTest struct {
	t      *testing.T
	engine *ruleEngine
	got    []string
}

func newRuleTest(t *testing.T, rules string) *ruleTest {
	t.Helper()
	cfg, err := Parse([]byte("servers:\n  - name: s\n    address: 127.0.0.1:27015\n    alerts: "+rules+"\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return &ruleTest{t: t, engine: newRuleEngine(cfg)}
}

func at(sec float64) time.Time { return t0.Add(time.Duration(sec * float64(time.Second))) }

// send hands the engine an event and records its alerts, one string
// each: "kind@seconds detail".
func (rt *ruleTest) send(ev Event) {
	if ev.Server == "" {
		ev.Server = "s"
	}
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
	}
}

func (rt *ruleTest) status(sec float64, kind EventKind) {
	st := &ServerState{Status: StatusUp, LastSuccess: at(sec)}
	if kind == EventDown {
		st = &ServerState{Status: StatusDown, ConsecutiveFailures: 3, LastError: errTimeout, LastSuccess: at(0), Since: at(sec)}
	}
	rt.send(Event{Kind: kind, Time: at(sec), State: st})
}

// poll sends a successful poll's event: the count, the map, and when
// names is not nil, the player list.
func (rt *ruleTest) poll(sec float64, players int, mapName string, names ...string) {
	st := &ServerState{Status: StatusUp, LastSuccess: at(sec), Summary: result.Summary{Players: &players, Map: &mapName}}
	if names != nil {
		st.Players = []Player{}
		for _, n := range names {
			st.Players = append(st.Players, Player{Name: n})
		}
	}
	rt.send(Event{Kind: EventPoll, Time: at(sec), State: st})
}

// failedPoll sends the event of a failed poll of a server in status.
func (rt *ruleTest) failedPoll(sec float64, status Status) {
	rt.send(Event{Kind: EventPoll, Time: at(sec), State: &ServerState{Status: status, LastError: errTimeout, LastSuccess: at(0)}})
}

func (rt *ruleTest) want(alerts ...string) {
	rt.t.Helper()
	if got, want := strings.Join(rt.got, ", "), strings.Join(alerts, ", "); got != want {
		rt.t.Errorf("alerts:\n got [%s]\nwant [%s]", got, want)
	}
}

func TestRulesDownUpOnce(t *testing.T) {
	t.Parallel()
	rt := newRuleTest(t, "[down, up]")
	rt.status(0, EventUp) // the first answer: no news
	rt.poll(30, 5, "a")
	rt.failedPoll(60, StatusUp)
	rt.failedPoll(90, StatusUp)
	rt.status(120, EventDown)
	rt.failedPoll(120, StatusDown) // the same poll's state: nothing new
	rt.failedPoll(150, StatusDown)
	rt.status(180, EventUp)
	rt.poll(180, 5, "a")
	rt.poll(210, 5, "a")
	rt.want("down@120", "up@180")
}

func TestRulesDownAtStartUp(t *testing.T) {
	t.Parallel()
	rt := newRuleTest(t, "[down, up]")
	rt.failedPoll(0, StatusPending)
	rt.status(120, EventDown) // after the grace: news
	rt.status(200, EventUp)
	rt.want("down@120", "up@200")
}

func TestRulesDownCooldown(t *testing.T) {
	t.Parallel()
	rt := newRuleTest(t, "[{on: down, cooldown: 5m}, up]")
	rt.status(0, EventUp)
	rt.status(60, EventDown)       // sent
	rt.status(120, EventUp)        // answers the down: sent at once
	rt.status(240, EventDown)      // 3 minutes after the last down: held
	rt.failedPoll(300, StatusDown) // still within the cooldown
	rt.failedPoll(360, StatusDown) // the cooldown has ended: sent, delayed
	rt.failedPoll(390, StatusDown)
	rt.status(420, EventUp)
	rt.want("down@60", "up@120", "down@360 delayed", "up@420")
}

func TestRulesDownCooldownFlapResolved(t *testing.T) {
	t.Parallel()
	rt := newRuleTest(t, "[{on: down, cooldown: 5m}, up]")
	rt.status(0, EventUp)
	rt.status(60, EventDown)
	rt.status(120, EventUp)
	rt.status(200, EventDown) // held
	rt.status(260, EventUp)   // back before the cooldown ended: nothing to say
	rt.poll(400, 1, "a")
	rt.poll(430, 1, "a")
	rt.want("down@60", "up@120")
}

func TestRulesOnlyUp(t *testing.T) {
	t.Parallel()
	rt := newRuleTest(t, "[up]")
	rt.status(0, EventUp)
	rt.status(60, EventDown)
	rt.status(120, EventUp)
	rt.want("up@120")
}

func TestRulesPlayersHysteresis(t *testing.T) {
	t.Parallel()
	rt := newRuleTest(t, "[{on: players, threshold: 20, cooldown: 0}]") // hysteresis 2
	for i, n := range []int{10, 19, 20, 19, 20, 19, 20, 18, 19, 20, 25, 3} {
		rt.poll(float64(i*30), n, "a")
	}
	// Hovering at 19-20 alerts once; 18 is low again.
	rt.want("players@60 rising 20", "players@210 falling 18", "players@270 rising 20", "players@330 falling 3")
}

func TestRulesPlayersFirstCount(t *testing.T) {
	t.Parallel()
	// A server first seen with 19 players is below 20: reaching 20 is news.
	rt := newRuleTest(t, "[{on: players, threshold: 20}]")
	rt.poll(0, 19, "a")
	rt.poll(30, 20, "a")
	// A server first seen at 25 is above: nothing to say until it falls.
	rt2 := newRuleTest(t, "[{on: players, threshold: 20}]")
	rt2.poll(0, 25, "a")
	rt2.poll(30, 21, "a")
	rt.want("players@30 rising 20")
	rt2.want()
}

func TestRulesPlayersDirection(t *testing.T) {
	t.Parallel()
	rt := newRuleTest(t, "[{on: players, threshold: 1, direction: falling, cooldown: 0}]") // hysteresis 1
	for i, n := range []int{0, 1, 2, 0, 1, 0} {
		rt.poll(float64(i*30), n, "a")
	}
	rt.want("players@90 falling 0", "players@150 falling 0")
}

func TestRulesPlayersCooldown(t *testing.T) {
	t.Parallel()
	rt := newRuleTest(t, "[{on: players, threshold: 10, cooldown: 5m}]")
	rt.poll(0, 0, "a")
	rt.poll(30, 12, "a")  // rising: sent
	rt.poll(60, 2, "a")   // falling: held
	rt.poll(90, 12, "a")  // high again: what was announced; nothing held
	rt.poll(120, 2, "a")  // held
	rt.poll(330, 2, "a")  // the cooldown has ended: falling, delayed
	rt.poll(360, 12, "a") // within the cooldown of the falling alert: held
	rt.poll(660, 12, "a") // sent
	rt.want("players@30 rising 12", "players@330 falling 2 delayed", "players@660 rising 12 delayed")
}

func TestRulesMap(t *testing.T) {
	t.Parallel()
	rt := newRuleTest(t, "[{on: map, cooldown: 5m}]")
	rt.poll(0, 1, "de_dust2") // known, not news
	rt.poll(30, 1, "de_dust2")
	rt.send(Event{Kind: EventMap, Time: at(60), Detail: "de_inferno"})
	rt.poll(60, 1, "de_inferno") // the same change, seen by the poll
	rt.failedPoll(90, StatusUp)  // a failed poll knows no map
	rt.poll(120, 1, "de_nuke")   // held
	rt.poll(200, 1, "de_dust2")  // held
	rt.poll(360, 1, "de_dust2")  // the cooldown has ended
	rt.poll(400, 1, "")          // an empty map is no map
	rt.want("map@60 de_dust2>de_inferno", "map@360 de_inferno>de_dust2 delayed")
}

func TestRulesJoinLeave(t *testing.T) {
	t.Parallel()
	rt := newRuleTest(t, "[{on: join, player: '^Al', cooldown: 5m}, {on: leave, player: '^Alice$', cooldown: 0}]")
	rt.send(Event{Kind: EventJoin, Time: at(0), Detail: "Alfred"}) // before the first player list: unknown
	rt.poll(0, 2, "a", "Alfred", "Bob")                            // the baseline: online, not news
	rt.poll(30, 3, "a", "Alfred", "Bob", "Alice")                  // Alice joined
	rt.send(Event{Kind: EventJoin, Time: at(45), Detail: "Carol"}) // no rule matches Carol
	rt.send(Event{Kind: EventLeave, Time: at(50), Detail: "Alice"})
	rt.poll(60, 3, "a", "Alfred", "Bob", "Carol")
	rt.poll(90, 4, "a", "Alfred", "Bob", "Carol", "Alice")  // rejoined within the join cooldown: held
	rt.poll(120, 3, "a", "Alfred", "Bob", "Carol")          // left: the leave rule has no cooldown
	rt.poll(150, 4, "a", "Alfred", "Bob", "Carol", "Alice") // held again
	rt.poll(340, 4, "a", "Alfred", "Bob", "Carol", "Alice") // the cooldown has ended: still on
	rt.poll(370, 1, "a", "Bob")                             // Alfred left: no leave rule for him
	rt.want("join@30 Alice", "leave@50 Alice", "leave@120 Alice", "join@340 Alice delayed", "leave@370 Alice")
}

func TestRulesFailedPollKeepsPlayers(t *testing.T) {
	t.Parallel()
	rt := newRuleTest(t, "[{on: leave, player: x, cooldown: 0}, {on: players, threshold: 1, cooldown: 0}]")
	rt.poll(0, 1, "a", "x")
	rt.failedPoll(30, StatusUp)
	rt.send(Event{Kind: EventPoll, Time: at(60), State: &ServerState{Status: StatusUp, LastSuccess: at(60)}}) // info without counts
	rt.poll(90, 1, "a", "x")
	rt.want()
}

func TestRulesReloadKeepsAnnounced(t *testing.T) {
	t.Parallel()
	rt := newRuleTest(t, "[down, up, {on: map}]")
	rt.poll(0, 1, "a")
	rt.status(60, EventDown)
	cfg, err := Parse([]byte("servers:\n  - name: s\n    address: 127.0.0.1:27015\n    alerts: [down, up, {on: map, cooldown: 1m}]\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rt.engine.reload(cfg)
	rt.status(60, EventDown) // the same down: not again
	rt.poll(120, 1, "a")     // the same map: not news after the reload
	rt.status(120, EventUp)  // answers the down announced before the reload
	moved, err := Parse([]byte("servers:\n  - name: s\n    address: 127.0.0.1:27016\n    alerts: [down, up, {on: map}]\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rt.engine.reload(moved)
	rt.poll(150, 1, "b") // a new server behind the name: its map is not a change
	rt.send(Event{Kind: EventDown, Server: "nobody", Time: at(160)})
	rt.want("down@60", "up@120")
}
