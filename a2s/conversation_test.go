package a2s

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// convTest drives a Conversation on a fake clock: no socket, no timer.
type convTest struct {
	t   *testing.T
	c   Conversation
	now time.Time
}

var convAddr = netip.MustParseAddrPort("192.0.2.1:27015")

func startConv(t *testing.T, q *Options, chal uint32, known bool) *convTest {
	t.Helper()
	ct := &convTest{t: t, now: time.Unix(1_000_000, 0)}
	ct.c.Start(q, convAddr, chal, known)
	return ct
}

// send takes every request ready and returns them as "T-", "U1234"...:
// the type, then the challenge or "-" when the request carries none.
func (ct *convTest) send() string {
	ct.t.Helper()
	var out []string
	for {
		b, ok := ct.c.AppendRequest(nil, ct.now)
		if !ok {
			return strings.Join(out, " ")
		}
		r, err := ParseRequest(b)
		if err != nil {
			ct.t.Fatalf("request %x: %v", b, err)
		}
		c := "-"
		if r.HasChallenge {
			c = fmt.Sprintf("%x", r.Challenge)
		}
		out = append(out, string(r.Type)+c)
	}
}

func (ct *convTest) recv(b ...[]byte) {
	for _, d := range b {
		ct.c.Receive(d, ct.now)
	}
}

// wait moves the clock to the conversation's next timer and ticks.
func (ct *convTest) wait() time.Duration {
	ct.t.Helper()
	w := ct.c.Wake()
	if w.IsZero() {
		ct.t.Fatal("no timer to wait for")
	}
	d := w.Sub(ct.now)
	ct.now = w
	ct.c.Tick(ct.now)
	return d
}

func (ct *convTest) expect(want string) {
	ct.t.Helper()
	if got := ct.send(); got != want {
		ct.t.Fatalf("sent %q, want %q", got, want)
	}
}

var (
	convInfo    = &Info{Format: TypeInfoReply, Name: Text("conv"), Map: Text("de_dust2"), Players: 2}
	convPlayers = &Players{List: []Player{
		{Name: Text("alice, whose name is long enough"), Score: 3},
		{Name: Text("bob, whose name is long enough too, to split the reply")},
		{Name: Text("carol, who makes it three fragments of sixty-four bytes")},
	}}
	convRules = func() *Rules {
		r := &Rules{}
		for i := range 40 {
			r.List = append(r.List, Rule{Name: Text(fmt.Sprintf("rule_%02d", i)), Value: Text(fmt.Sprint(i))})
		}
		return r
	}()
)

func (ct *convTest) encode(m appender) []byte { return mustAppend(ct.t, m) }

func (ct *convTest) checkAnswered() {
	ct.t.Helper()
	r := ct.c.Result()
	if !ct.c.Done() || r.InfoErr != nil || r.PlayersErr != nil || r.RulesErr != nil {
		ct.t.Fatalf("done %v, errors %v, %v, %v", ct.c.Done(), r.InfoErr, r.PlayersErr, r.RulesErr)
	}
	if string(r.Info.Name) != "conv" || len(r.Players.List) != 3 || len(r.Rules.List) != 40 {
		ct.t.Fatalf("result %+v", r)
	}
}

func TestConversationChallengeThenAllAtOnce(t *testing.T) {
	t.Parallel()
	ct := startConv(t, &Options{}, 0, false)
	ct.expect("T-")
	ct.recv(AppendChallenge(nil, 0x1234))
	ct.expect("T1234 U1234 V1234")
	ct.recv(AppendChallenge(nil, 0x1234)) // a copy: nothing new
	ct.expect("")
	ct.recv(ct.encode(convRules), ct.encode(convInfo), ct.encode(convPlayers))
	ct.checkAnswered()
	if c, ok := ct.c.Challenge(); !ok || c != 0x1234 {
		t.Errorf("challenge %x, %v", c, ok)
	}
	if !ct.c.Wake().IsZero() {
		t.Error("a timer after the end")
	}
}

func TestConversationKnownChallenge(t *testing.T) {
	t.Parallel()
	ct := startConv(t, &Options{}, 0x77, true)
	ct.expect("T77 U77 V77")
	// The challenge went stale: each section earns the new one, which
	// asks every section again, once.
	ct.recv(AppendChallenge(nil, 0x88), AppendChallenge(nil, 0x88), AppendChallenge(nil, 0x88))
	ct.expect("T88 U88 V88")
	ct.recv(ct.encode(convInfo), ct.encode(convPlayers), ct.encode(convRules))
	ct.checkAnswered()
}

func TestConversationNoChallengeServer(t *testing.T) {
	t.Parallel()
	// A server that answers without challenges: INFO answered freely says
	// nothing of PLAYER, which goes alone; once it is answered without a
	// challenge, RULES follows without one.
	ct := startConv(t, &Options{}, 0, false)
	ct.expect("T-")
	ct.recv(ct.encode(convInfo))
	ct.expect("U-")
	ct.recv(ct.encode(convPlayers))
	ct.expect("V-")
	ct.recv(ct.encode(convRules))
	ct.checkAnswered()
}

func TestConversationSplitReplies(t *testing.T) {
	t.Parallel()
	ct := startConv(t, &Options{Sections: SectionPlayers | SectionRules}, 5, true)
	ct.expect("U5 V5")
	rules, err := SplitWriter{Size: 200}.AppendFragments(nil, 0x200, ct.encode(convRules))
	if err != nil || len(rules) < 3 {
		t.Fatalf("%d fragments, %v", len(rules), err)
	}
	players, _ := SplitWriter{Size: 64}.AppendFragments(nil, 0x100, ct.encode(convPlayers))
	if len(players) < 3 {
		t.Fatalf("players in %d fragments", len(players))
	}
	// interleaved, out of order, one duplicated
	ct.recv(rules[2], players[1], rules[0], players[0], rules[0])
	ct.recv(players[2:]...)
	ct.recv(rules[1])
	ct.recv(rules[3:]...)
	r := ct.c.Result()
	if !ct.c.Done() || len(r.Players.List) != 3 || len(r.Rules.List) != 40 || r.InfoErr != nil || r.Info != nil {
		t.Fatalf("done %v, result %+v", ct.c.Done(), r)
	}
}

func TestConversationRetriesAndSilence(t *testing.T) {
	t.Parallel()
	// A silent server: INFO is sent 1+Retries times, 1s then 1.5s then
	// 2.25s apart, and PLAYER and RULES are never asked.
	ct := startConv(t, &Options{Retries: 2, Deadline: -1}, 0, false)
	ct.expect("T-")
	var waits []time.Duration
	for !ct.c.Done() {
		waits = append(waits, ct.wait())
		ct.send()
	}
	if fmt.Sprint(waits) != "[1s 1.5s 2.25s]" {
		t.Errorf("waits %v", waits)
	}
	r := ct.c.Result()
	for name, err := range map[string]error{"info": r.InfoErr, "players": r.PlayersErr, "rules": r.RulesErr} {
		var op *OpError
		if !errors.Is(err, ErrTimeout) || !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &op) || op.Addr != convAddr.String() || !op.Timeout() {
			t.Errorf("%s: %v", name, err)
		}
	}
	if !strings.Contains(r.InfoErr.Error(), "a2s: info 192.0.2.1:27015: no answer (timeout)") {
		t.Errorf("message %q", r.InfoErr)
	}
}

func TestConversationRetryCounts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		retries int
		sends   int
	}{{-1, 1}, {0, 3}, {1, 2}, {4, 5}} {
		ct := startConv(t, &Options{Sections: SectionInfo, Retries: tc.retries, Deadline: -1}, 0, false)
		sends := 0
		for {
			sends += len(strings.Fields(ct.send()))
			if ct.c.Done() {
				break
			}
			ct.wait()
		}
		if sends != tc.sends {
			t.Errorf("Retries %d: %d sends, want %d", tc.retries, sends, tc.sends)
		}
	}
}

func TestConversationDeadline(t *testing.T) {
	t.Parallel()
	// INFO comes back, PLAYER and RULES never do: the deadline ends them,
	// whatever the retries would have allowed.
	ct := startConv(t, &Options{Timeout: time.Second, Retries: 10, Deadline: 3 * time.Second}, 9, true)
	start := ct.now
	ct.expect("T9 U9 V9")
	ct.recv(ct.encode(convInfo))
	for !ct.c.Done() {
		ct.wait()
		ct.send()
	}
	r := ct.c.Result()
	if ct.now.Sub(start) != 3*time.Second || r.Info == nil || !errors.Is(r.PlayersErr, ErrTimeout) || !errors.Is(r.RulesErr, ErrTimeout) {
		t.Fatalf("after %v: %+v", ct.now.Sub(start), r)
	}
}

func TestConversationSectionTimesOutAlone(t *testing.T) {
	t.Parallel()
	// RULES is never answered: it alone uses its retries and fails; the
	// others stand.
	ct := startConv(t, &Options{Retries: 1, Deadline: -1}, 0, false)
	ct.expect("T-")
	ct.recv(AppendChallenge(nil, 3))
	ct.expect("T3 U3 V3")
	ct.recv(ct.encode(convInfo), ct.encode(convPlayers))
	ct.wait()
	ct.expect("V3")
	ct.wait()
	ct.expect("")
	r := ct.c.Result()
	if !ct.c.Done() || r.Info == nil || r.Players == nil || !errors.Is(r.RulesErr, ErrTimeout) {
		t.Fatalf("%+v", r)
	}
}

func TestConversationGarbageIsNotSilence(t *testing.T) {
	t.Parallel()
	ct := startConv(t, &Options{Retries: 1, Deadline: -1}, 0, false)
	ct.expect("T-")
	ct.recv([]byte("hello, world"), []byte{0xFF, 0xFF})
	if ct.c.Done() {
		t.Fatal("garbage ended the conversation at once")
	}
	ct.wait()
	ct.expect("T-")
	ct.wait()
	r := ct.c.Result()
	var pe *ParseError
	if !ct.c.Done() || !errors.Is(r.InfoErr, ErrNotA2S) || errors.Is(r.InfoErr, ErrTimeout) || !errors.As(r.InfoErr, &pe) {
		t.Fatalf("info error %v", r.InfoErr)
	}
	if !errors.Is(r.RulesErr, ErrNotA2S) {
		t.Errorf("rules error %v", r.RulesErr)
	}
	if !strings.Contains(r.InfoErr.Error(), "answered, but not with A2S") {
		t.Errorf("message %q", r.InfoErr)
	}
}

func TestConversationBadSplitFailsAtOnce(t *testing.T) {
	t.Parallel()
	// A split reply that announces 255 fragments fails the one section
	// waiting at once, with the reassembler's error.
	ct := startConv(t, &Options{Sections: SectionRules, Deadline: -1}, 1, true)
	ct.expect("V1")
	f := Fragment{ID: 7, Total: 255, Number: 0, Size: 1248, Payload: ct.encode(convRules), Format: SplitSource}
	ct.recv(ct.encode(f))
	r := ct.c.Result()
	if !ct.c.Done() || !errors.Is(r.RulesErr, ErrTooManyFragments) {
		t.Fatalf("done %v, rules error %v", ct.c.Done(), r.RulesErr)
	}
}

func TestConversationBanned(t *testing.T) {
	t.Parallel()
	ct := startConv(t, &Options{}, 0, false)
	ct.expect("T-")
	ban, _ := AppendBanned(nil, Text("You have been banned"))
	ct.recv(ban)
	r := ct.c.Result()
	for _, err := range []error{r.InfoErr, r.PlayersErr, r.RulesErr} {
		var be *BannedError
		if !errors.As(err, &be) || string(be.Message) != "You have been banned" {
			t.Errorf("error %v", err)
		}
	}
	if !ct.c.Done() || ct.send() != "" {
		t.Error("asked again after a ban")
	}
}

func TestConversationTooManyChallenges(t *testing.T) {
	t.Parallel()
	ct := startConv(t, &Options{Sections: SectionInfo | SectionPlayers, MaxChallenges: 2}, 0, false)
	ct.expect("T-")
	ct.recv(AppendChallenge(nil, 1))
	ct.expect("T1 U1")
	ct.recv(AppendChallenge(nil, 3))
	ct.expect("T3 U3")
	ct.recv(AppendChallenge(nil, 5))
	r := ct.c.Result()
	if !ct.c.Done() || !errors.Is(r.InfoErr, ErrTooManyChallenges) || !errors.Is(r.PlayersErr, ErrTooManyChallenges) {
		t.Fatalf("%+v", r)
	}
}

func TestConversationGoldSourceGrace(t *testing.T) {
	t.Parallel()
	gold := &Info{Format: TypeInfoReplyGoldSource, Name: Text("gold"), Address: Text("1.2.3.4:27015")}
	t.Run("both", func(t *testing.T) {
		ct := startConv(t, &Options{Sections: SectionInfo}, 0, false)
		ct.expect("T-")
		ct.recv(ct.encode(gold))
		if ct.c.Done() || ct.c.Ended() != 0 {
			t.Fatalf("done (ended %v) before the grace for an 'I' reply", ct.c.Ended())
		}
		ct.recv(ct.encode(convInfo))
		r := ct.c.Result()
		if !ct.c.Done() || ct.c.Ended() != SectionInfo || string(r.Info.Name) != "conv" || string(r.GoldSource.Name) != "gold" {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("m only", func(t *testing.T) {
		ct := startConv(t, &Options{Sections: SectionInfo}, 0, false)
		ct.expect("T-")
		ct.recv(ct.encode(gold))
		if d := ct.wait(); d != DefaultGoldSourceGrace || !ct.c.Done() {
			t.Fatalf("waited %v, done %v", d, ct.c.Done())
		}
		if r := ct.c.Result(); r.Info != r.GoldSource || string(r.Info.Name) != "gold" {
			t.Fatalf("%+v", r)
		}
	})
}

func TestConversationUnreachable(t *testing.T) {
	t.Parallel()
	ct := startConv(t, &Options{}, 0, false)
	ct.expect("T-")
	ct.c.Unreachable(syscall.ECONNREFUSED)
	r := ct.c.Result()
	for _, err := range []error{r.InfoErr, r.PlayersErr, r.RulesErr} {
		if !errors.Is(err, ErrUnreachable) || !errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, ErrTimeout) {
			t.Errorf("error %v", err)
		}
	}
	if !ct.c.Done() {
		t.Error("not done")
	}
}

func TestConversationSerial(t *testing.T) {
	t.Parallel()
	ct := startConv(t, &Options{Serial: true}, 4, true)
	ct.expect("T4")
	ct.recv(ct.encode(convInfo))
	ct.expect("U4")
	ct.recv(ct.encode(convPlayers))
	ct.expect("V4")
	ct.recv(ct.encode(convRules))
	ct.checkAnswered()
}

func TestConversationPadAndLegacy(t *testing.T) {
	t.Parallel()
	ct := startConv(t, &Options{PadInfo: true, LegacyChallenge: true, Sections: SectionInfo | SectionRules}, 0, false)
	b, ok := ct.c.AppendRequest(nil, ct.now)
	if !ok || len(b) != PaddedInfoSize {
		t.Fatalf("INFO request of %d bytes, want %d", len(b), PaddedInfoSize)
	}
	ct.recv(ct.encode(convInfo)) // answered without a challenge
	// RULES gets its challenge with the padded legacy request.
	b, _ = ct.c.AppendRequest(nil, ct.now)
	if r, err := ParseRequest(b); err != nil || r.Type != TypeChallengeRequestLegacy || len(b) != 9 {
		t.Fatalf("request %x: %+v, %v", b, r, err)
	}
	ct.recv(AppendChallenge(nil, 0x99))
	ct.expect("V99")
}

func TestConversationRTT(t *testing.T) {
	t.Parallel()
	ct := startConv(t, &Options{Sections: SectionInfo}, 0, false)
	ct.expect("T-")
	ct.now = ct.now.Add(30 * time.Millisecond)
	ct.recv(AppendChallenge(nil, 1))
	if rtt, clean := ct.c.RoundTrip(); rtt != 30*time.Millisecond || !clean {
		t.Errorf("round trip %v, clean %v", rtt, clean)
	}
	// A round trip timed across a resend is kept, but does not time the
	// network.
	ct = startConv(t, &Options{Sections: SectionInfo}, 0, false)
	ct.expect("T-")
	ct.wait()
	ct.expect("T-")
	ct.now = ct.now.Add(10 * time.Millisecond)
	ct.recv(ct.encode(convInfo))
	if rtt, clean := ct.c.RoundTrip(); rtt != 10*time.Millisecond || clean || ct.c.Result().RTT != rtt {
		t.Errorf("round trip %v, clean %v", rtt, clean)
	}
}

func TestConversationReuse(t *testing.T) {
	t.Parallel()
	// A conversation started again forgets the last one, half-done split
	// replies included.
	ct := startConv(t, &Options{Sections: SectionRules}, 1, true)
	ct.expect("V1")
	rules, _ := SplitWriter{Size: 200}.AppendFragments(nil, 0x300, ct.encode(convRules))
	ct.recv(rules[0])
	ct.c.Start(&Options{Sections: SectionRules}, convAddr, 1, true)
	ct.expect("V1")
	ct.recv(rules[1:]...)
	if ct.c.Done() {
		t.Fatal("completed a reply with a fragment of the previous conversation")
	}
	ct.recv(rules[0])
	if r := ct.c.Result(); !ct.c.Done() || len(r.Rules.List) != 40 {
		t.Fatalf("%+v", r)
	}
}

func TestConversationChallengeRestartsTimeout(t *testing.T) {
	t.Parallel()
	// The request resent after a challenge is a new request: it waits a
	// whole Timeout of its own, however long the challenge took to come.
	ct := startConv(t, &Options{Sections: SectionInfo, Retries: -1, Deadline: -1}, 0, false)
	ct.expect("T-")
	ct.now = ct.now.Add(600 * time.Millisecond)
	ct.recv(AppendChallenge(nil, 9))
	ct.expect("T9")
	if d := ct.c.Wake().Sub(ct.now); d != DefaultTimeout {
		t.Fatalf("the resent request waits %v, want %v", d, DefaultTimeout)
	}
	ct.now = ct.now.Add(600 * time.Millisecond)
	ct.recv(ct.encode(convInfo))
	if r := ct.c.Result(); !ct.c.Done() || r.InfoErr != nil {
		t.Fatalf("%+v", r)
	}
}

// A reply whose split fragments never all come is a timeout still, but
// one that says the server answered in part: ErrIncomplete, with the
// number of fragments of unfinished replies, so that nobody is sent to
// look for the query port of a server that answered.
func TestConversationIncompleteSplit(t *testing.T) {
	t.Parallel()
	ct := startConv(t, &Options{Sections: SectionRules, Retries: -1, Deadline: -1}, 5, true)
	ct.expect("V5")
	rules, err := SplitWriter{Size: 200}.AppendFragments(nil, 0x200, ct.encode(convRules))
	if err != nil || len(rules) < 3 {
		t.Fatalf("%d fragments, %v", len(rules), err)
	}
	ct.recv(rules[0], rules[2], rules[0]) // a duplicate counts once
	for !ct.c.Done() {
		ct.wait()
		ct.send()
	}
	err = ct.c.Result().RulesErr
	var ne interface{ Timeout() bool }
	if !errors.Is(err, ErrIncomplete) || !errors.Is(err, ErrTimeout) || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("%v: want ErrIncomplete and a timeout", err)
	}
	if want := "a2s: rules 192.0.2.1:27015: no complete answer (timeout): part of a split reply came, not all (2 fragments)"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	// A reply that did complete leaves no such note.
	ct = startConv(t, &Options{Sections: SectionRules | SectionPlayers, Retries: -1, Deadline: -1}, 5, true)
	ct.expect("U5 V5")
	ct.recv(rules...)
	for !ct.c.Done() {
		ct.wait()
		ct.send()
	}
	if err := ct.c.Result().PlayersErr; errors.Is(err, ErrIncomplete) || !errors.Is(err, ErrTimeout) {
		t.Errorf("players after a whole rules reply: %v", err)
	}
}
