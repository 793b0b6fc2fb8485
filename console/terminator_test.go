package console_test

import (
	"testing"
	"time"

	"github.com/gsq-project/gsq/console"
)

// The Terminators here, step by step as a session calls them; the rcon
// tests run each against fake servers (rcon's TestConsoleTerminators,
// TestQuietPeriodNoReply).
func TestTerminators(t *testing.T) {
	t.Parallel()
	type call struct {
		method string // start, message, marker, silence
		want   console.Step
		wait   time.Duration // x.Wait after the call
	}
	for _, tc := range []struct {
		name  string
		term  console.Terminator
		calls []call
		lost  bool
	}{
		{"FirstMessage", console.FirstMessage{}, []call{
			{"start", console.StepContinue, 0}, {"message", console.StepDone, 0},
		}, false},
		{"FirstMessage with NoReply", console.FirstMessage{NoReply: time.Second}, []call{
			{"start", console.StepContinue, time.Second}, {"silence", console.StepDone, time.Second},
		}, false},
		{"QuietPeriod", console.QuietPeriod{}, []call{
			{"start", console.StepContinue, 0}, {"message", console.StepContinue, console.DefaultQuiet},
			{"message", console.StepContinue, console.DefaultQuiet}, {"silence", console.StepDone, console.DefaultQuiet},
		}, false},
		{"QuietPeriod with NoReply", console.QuietPeriod{Quiet: time.Second, NoReply: 3 * time.Second}, []call{
			{"start", console.StepContinue, 3 * time.Second}, {"message", console.StepContinue, time.Second},
			{"marker", console.StepDone, time.Second},
		}, false},
		{"MarkerReply", console.MarkerReply{}, []call{
			{"start", console.StepMark, 0}, {"message", console.StepContinue, 0}, {"message", console.StepContinue, 0},
			{"marker", console.StepDone, 0},
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var x console.Exchange
			for i, c := range tc.calls {
				var got console.Step
				switch c.method {
				case "start":
					got = tc.term.Start(&x)
				case "message":
					x.Messages++
					got = tc.term.Message(&x, []byte("body"))
				case "marker":
					got = tc.term.Marker(&x, nil)
				case "silence":
					got = tc.term.Silence(&x)
				}
				if got != c.want || x.Wait != c.wait {
					t.Fatalf("call %d (%s) = %v with Wait %v, want %v with Wait %v", i, c.method, got, x.Wait, c.want, c.wait)
				}
			}
			if tc.term.Lost(&x) != tc.lost {
				t.Errorf("Lost = %v, want %v", !tc.lost, tc.lost)
			}
		})
	}
}

func TestStepString(t *testing.T) {
	t.Parallel()
	for s, want := range map[console.Step]string{console.StepContinue: "continue", console.StepDone: "done", console.StepMark: "mark", console.StepRemark: "remark", 9: "Step(9)"} {
		if s.String() != want {
			t.Errorf("%d: %q, want %q", int(s), s.String(), want)
		}
	}
}
