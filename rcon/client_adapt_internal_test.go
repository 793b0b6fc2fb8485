package rcon

import (
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/console"
)

// The client's own Terminator, rule by rule, without a server: what it
// decides from what it knows, and what it learns. The conversations that
// show each rule against a server are in client_adapt_test.go.

// newTestAdaptive is the adaptive Terminator of a client with opts, and
// the notes it takes.
func newTestAdaptive(t *testing.T, opts Options) (*adaptive, *[]string) {
	t.Helper()
	p, err := LookupProfile(opts.Profile)
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	a := newAdaptive(p, &opts, func(format string, args ...any) { notes = append(notes, format) })
	return a, &notes
}

func TestAdaptiveMinecraftFragments(t *testing.T) {
	t.Parallel()
	a, _ := newTestAdaptive(t, Options{Dialect: DialectMinecraft})
	var x console.Exchange
	if a.Start(&x) != console.StepContinue {
		t.Fatal("Minecraft must not get the probe with the command")
	}
	full := []byte(strings.Repeat("a", 4096))
	x.Messages = 1
	if a.Message(&x, full) != console.StepMark || a.Message(&x, full[:4095]) != console.StepDone {
		t.Fatal("a 4096-byte fragment must be probed, a shorter one ends the answer")
	}
	// A fragment cut at 4096 bytes inside a UTF-8 sequence has fewer
	// than 4096 units but may be followed by more.
	cut := append([]byte(strings.Repeat("é", 2047)), 0xc3, 0xa9)[:4096]
	cut[4095] = 0xe2 // the first byte of "€"
	if a.Message(&x, cut) != console.StepMark {
		t.Fatal("a 4096-byte fragment ending inside a UTF-8 sequence was taken as the last")
	}
	if x.Wait != 0 {
		t.Errorf("Wait %v: Minecraft's marker is answered, nothing to time", x.Wait)
	}
}

// An unknown Source server: the first answer is probed after its first
// packet, and the probe's fate decides what is learned.
func TestAdaptiveLearnsFromTheProbe(t *testing.T) {
	t.Parallel()
	t.Run("mirrored", func(t *testing.T) {
		t.Parallel()
		a, notes := newTestAdaptive(t, Options{})
		var x console.Exchange
		if a.Start(&x) != console.StepContinue {
			t.Fatal("an unknown server got the probe with the command")
		}
		x.Messages = 1
		if a.Message(&x, []byte("out")) != console.StepMark || x.Wait != minProbeWait {
			t.Fatalf("first packet: want a probe and the probe wait, got Wait %v", x.Wait)
		}
		x.Marked = true
		if a.Marker(&x, nil) != console.StepDone || a.traits().probe != yes {
			t.Fatal("a mirrored probe did not end the answer, or was not learned")
		}
		// Next command: the probe goes with it, and its reply teaches that
		// the server takes it there.
		x = console.Exchange{}
		if a.Start(&x) != console.StepMark {
			t.Fatal("a server that mirrors probes did not get one with the command")
		}
		x.Marked, x.MarkedWithCommand, x.Messages = true, true, 1
		a.Message(&x, []byte("out"))
		if x.Wait != minProbeWait {
			t.Fatalf("Wait %v while the probe with the command is on trial", x.Wait)
		}
		a.Marker(&x, nil)
		if a.traits().backToBack != yes || len(*notes) != 2 {
			t.Fatalf("backToBack %v, notes %q", a.traits().backToBack, *notes)
		}
	})
	t.Run("unanswered", func(t *testing.T) {
		t.Parallel()
		a, _ := newTestAdaptive(t, Options{})
		x := console.Exchange{Messages: 1, Marked: true, LastSize: 100}
		if a.Silence(&x) != console.StepDone || a.traits().probe != no || !a.traits().single {
			t.Fatal("an unanswered probe did not end the answer at one packet")
		}
		// The reply comes after all: probes are answered.
		x.Ended = true
		a.Marker(&x, nil)
		if a.traits().probe != yes || a.traits().single {
			t.Fatal("a late reply did not put probes back")
		}
	})
	t.Run("slow after a full fragment", func(t *testing.T) {
		t.Parallel()
		a, _ := newTestAdaptive(t, Options{})
		x := console.Exchange{Messages: 1, Marked: true, LastSize: DefaultSourceSplitSize}
		if a.Silence(&x) != console.StepContinue || a.traits().probe != unknown {
			t.Fatal("a stall after a full SRCDS fragment was taken for an unanswered probe")
		}
	})
	t.Run("dropped with the command", func(t *testing.T) {
		t.Parallel()
		a, _ := newTestAdaptive(t, Options{Profile: "srcds"})
		x := console.Exchange{Messages: 1, Marked: true, MarkedWithCommand: true, Wait: time.Second}
		if a.Silence(&x) != console.StepRemark || a.traits().backToBack != no || x.Wait != 0 {
			t.Fatal("a probe dropped with the command was not sent again alone")
		}
		if a.Start(&console.Exchange{}) != console.StepContinue {
			t.Fatal("the probe still goes with the command")
		}
	})
	t.Run("answered Unknown request 0", func(t *testing.T) {
		t.Parallel()
		a, _ := newTestAdaptive(t, Options{})
		x := console.Exchange{Messages: 1, Marked: true}
		a.Marker(&x, []byte("Unknown request 0"))
		if !a.traits().minecraftRules() || a.canPipeline() {
			t.Fatal("a Minecraft server was not recognised")
		}
	})
	t.Run("hung up on the probe", func(t *testing.T) {
		t.Parallel()
		a, _ := newTestAdaptive(t, Options{})
		x := console.Exchange{Messages: 2, Marked: true}
		if !a.Lost(&x) || !a.traits().execMarker {
			t.Fatal("go-mc's hang-up on the probe did not leave the answer whole")
		}
		if a.Lost(&console.Exchange{Messages: 2}) {
			t.Fatal("a loss with no probe out left the answer whole")
		}
	})
}

func TestAdaptiveProfilesSeed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		opts  Options
		start console.Step
		first console.Step // the step after a first packet
	}{
		{Options{Profile: "srcds"}, console.StepMark, console.StepMark},
		{Options{Profile: "factorio"}, console.StepContinue, console.StepDone},
		{Options{Profile: "palworld"}, console.StepContinue, console.StepDone},
		{Options{Profile: "ark"}, console.StepContinue, console.StepMark},
		{Options{Profile: "rust-legacy"}, console.StepContinue, console.StepContinue},
		{Options{Dialect: DialectCS2}, console.StepContinue, console.StepDone},
	} {
		a, notes := newTestAdaptive(t, tc.opts)
		var x console.Exchange
		if s := a.Start(&x); s != tc.start {
			t.Errorf("%+v: Start %v, want %v", tc.opts, s, tc.start)
		}
		x.Messages = 1
		if s := a.Message(&x, []byte("out")); s != tc.first {
			t.Errorf("%+v: Message %v, want %v", tc.opts, s, tc.first)
		}
		if len(*notes) != 0 {
			t.Errorf("%+v: learned %q from nothing", tc.opts, *notes)
		}
	}
}
