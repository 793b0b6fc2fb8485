package rcon_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/console"
	"github.com/gsq-project/gsq/console/consoletest"
	"github.com/gsq-project/gsq/rcon"
	"github.com/gsq-project/gsq/rcon/rcontest"
)

// conversation is a run of commands and the exact output each must give.
type conversation []struct{ cmd, want string }

// defaultConversation runs against every profile: short and long
// answers, non-ASCII text, an answer of exactly two full SRCDS
// fragments, and the long answer between two short ones that desynced
// clients on Squad's malformed mirror.
func defaultConversation(p rcontest.Profile) conversation {
	empty := ""
	if p == rcontest.ARK {
		empty = "Server received, But no response!! \n "
	}
	return conversation{
		{"echo a", "a\n"},
		{"big 20000", rcontest.BigOutput(20000)},
		{"echo c", "c\n"},
		{"echo grüße € 😀", "grüße € 😀\n"},
		{"big 8172", rcontest.BigOutput(8172)},
		{"big 8192", rcontest.BigOutput(8192)},
		{"big 0", empty},
		{"say hi", "Console: hi\n"},
		{"big 100000", rcontest.BigOutput(100000)},
		{"echo last", "last\n"},
	}
}

// adaptCase is a profile and the options a user who knows nothing of
// the server passes: none at all, or, for the Minecraft-shaped servers,
// the dialect (as on the default Minecraft port).
type adaptCase struct {
	profile rcontest.Profile
	dialect rcon.Dialect
}

func (a adaptCase) String() string {
	if a.dialect == rcon.DialectMinecraft {
		return a.profile.String() + "/minecraft-dialect"
	}
	return a.profile.String() + "/zero-options"
}

func adaptCases() []adaptCase {
	var cs []adaptCase
	for _, p := range rcontest.Profiles() {
		cs = append(cs, adaptCase{profile: p})
		if p == rcontest.Minecraft || p == rcontest.GoMC {
			cs = append(cs, adaptCase{profile: p, dialect: rcon.DialectMinecraft})
		}
	}
	return cs
}

// TestAdaptsToEveryProfile runs the same conversation against every
// imitated server with a client that knows nothing about it: every
// command must give its exact output, in order.
func TestAdaptsToEveryProfile(t *testing.T) {
	t.Parallel()
	for _, ac := range adaptCases() {
		p := ac.profile
		t.Run(ac.String(), func(t *testing.T) {
			t.Parallel()
			bubble(t, func(t *testing.T, n *consoletest.Network) {
				s := fake(t, n, p, nil, nil)
				var log logLines
				c := dialOn(t, n, s, &rcon.Options{Dialect: ac.dialect, Logf: log.logf})
				conv := defaultConversation(p)
				if p == rcontest.RustLegacy {
					// Legacy Rust sends single-byte text until it is asked for
					// UTF-8, which the client does once it has seen the
					// server's first console line: the first command's answer
					// is ASCII here (see TestRustLegacyFirstAnswer).
					conv = append(conversation{{"echo first", "first\n"}}, conv...)
				}
				for _, step := range conv {
					got, err := c.Exec(bounded(t), step.cmd)
					if err != nil || got != step.want {
						t.Fatalf("Exec(%q) = %d bytes %.60q, %v; want %d bytes %.60q\nclient notes:\n%s", step.cmd, len(got), got, err, len(step.want), step.want, &log)
					}
				}
				// Nothing a server drops unanswered was sent but ARK's one test
				// of a probe in the command's segment; legacy Rust, which reads
				// only the first packet of each read, and vanilla Minecraft,
				// which hangs up on two, never got two together.
				wantDropped := int64(0)
				if p == rcontest.ARK {
					wantDropped = 1
				}
				if s.Dropped() != wantDropped || s.Hangups() != 0 && p != rcontest.GoMC {
					t.Errorf("the server dropped %d requests (want %d) and hung up %d times", s.Dropped(), wantDropped, s.Hangups())
				}
				t.Logf("client notes:\n%s", &log)
			})
		})
	}
}

// TestWrongPasswordPerProfile checks how each imitated server's answer
// to a wrong password reaches a client with zero Options: a -1 reply or
// a close during the login is ErrAuthFailed; silence is
// ErrNoAuthResponse, a timeout, within the login's bound.
func TestWrongPasswordPerProfile(t *testing.T) {
	t.Parallel()
	for _, ac := range adaptCases() {
		p := ac.profile
		t.Run(ac.String(), func(t *testing.T) {
			t.Parallel()
			bubble(t, func(t *testing.T, n *consoletest.Network) {
				s := fake(t, n, p, nil, nil)
				start := time.Now()
				_, err := tryDial(t, n, s, "wrong", &rcon.Options{Dialect: ac.dialect})
				if err == nil {
					t.Fatal("logged in with a wrong password")
				}
				var oe *rcon.OpError
				if !errors.As(err, &oe) || oe.Op != "login" {
					t.Errorf("error %v is not a login *OpError", err)
				}
				if strings.Contains(err.Error(), "wrong\"") || strings.Contains(err.Error(), " wrong ") {
					t.Errorf("error holds the password: %v", err)
				}
				switch took := time.Since(start); p {
				case rcontest.ARK:
					// Silence costs the login's bound, Options.Timeout.
					if !errors.Is(err, rcon.ErrNoAuthResponse) || !errors.Is(err, rcon.ErrTimeout) || took != rcon.DefaultTimeout {
						t.Fatalf("ARK: %v after %v, want ErrNoAuthResponse and ErrTimeout after %v", err, took, rcon.DefaultTimeout)
					}
				case rcontest.Squad:
					// Squad closes the connection 250 ms after the login.
					if !errors.Is(err, rcon.ErrAuthFailed) || !errors.Is(err, rcon.ErrConnClosed) || took != 250*time.Millisecond {
						t.Fatalf("Squad: %v after %v, want ErrAuthFailed and ErrConnClosed after 250ms", err, took)
					}
				default:
					if !errors.Is(err, rcon.ErrAuthFailed) || !errors.Is(err, console.ErrAuthFailed) || took != 0 {
						t.Fatalf("%v: %v after %v, want ErrAuthFailed at once", p, err, took)
					}
				}
			})
		})
	}
}

// TestRustLegacyFirstAnswer pins what a client without a profile gets
// from legacy Rust: the server sends single bytes (each UTF-16 unit cut
// to its low byte) until asked for UTF-8, and the client asks once the
// first answer's console line showed what the server is, so that answer
// arrives cut ("€" became 0xAC, "¬"); every later one is exact. With the
// rust-legacy profile UTF-8 is asked for at once and the first answer is
// exact too. A blind type-5 packet after every login is not sent: on
// SRCDS type 5 is a request of its own. Response.SingleByte marks the
// answer that came cut, and only that one.
func TestRustLegacyFirstAnswer(t *testing.T) {
	t.Parallel()
	const cmd, exact, cut = "echo grüße €", "grüße €\n", "grüße ¬\n"
	for _, tc := range []struct {
		profile     string
		first, next string
	}{
		{"", cut, exact},
		{"rust-legacy", exact, exact},
	} {
		bubble(t, func(t *testing.T, n *consoletest.Network) {
			s := fake(t, n, rcontest.RustLegacy, nil, nil)
			c := dialOn(t, n, s, &rcon.Options{Profile: tc.profile})
			for i, want := range []string{tc.first, tc.next, tc.next} {
				r, err := c.Do(bounded(t), cmd)
				if err != nil || r.Text() != want {
					t.Errorf("profile %q, answer %d: %q, %v; want %q", tc.profile, i+1, r.Text(), err, want)
				}
				// Response.SingleByte says which answer came cut.
				if single := want == cut; r.SingleByte != single {
					t.Errorf("profile %q, answer %d: SingleByte %v, want %v", tc.profile, i+1, r.SingleByte, single)
				}
			}
		})
	}
}

// A server built on go-mc hangs up on the first probe; the answer is
// whole, and the connection, which served it, is replaced at once, not
// after a reconnection's backoff.
func TestGoMCHangUpReplacedAtOnce(t *testing.T) {
	t.Parallel()
	bubble(t, func(t *testing.T, n *consoletest.Network) {
		s := fake(t, n, rcontest.GoMC, nil, nil)
		c := dialOn(t, n, s, nil)
		start := time.Now()
		mustExec(t, c, "echo a", "a\n")
		mustExec(t, c, "big 5000", rcontest.BigOutput(5000))
		if took := time.Since(start); took != 0 || s.Hangups() != 1 || s.Accepted() != 2 {
			t.Fatalf("took %v, %d hang-ups, %d connections; want no wait, one hang-up, a second connection", took, s.Hangups(), s.Accepted())
		}
	})
}
