package rcon_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gsq-project/gsq/console"
	"github.com/gsq-project/gsq/console/consoletest"
	"github.com/gsq-project/gsq/rcon"
	"github.com/gsq-project/gsq/rcon/rcontest"
)

// dialects are the fake servers each dialect is tried against.
var dialects = []struct {
	dialect rcon.Dialect
	profile rcontest.Profile
}{
	{rcon.DialectSource, rcontest.SRCDS},
	{rcon.DialectCS2, rcontest.CS2},
	{rcon.DialectMinecraft, rcontest.Minecraft},
}

func TestAuthShapes(t *testing.T) {
	t.Parallel()
	for _, d := range dialects {
		t.Run(d.dialect.String(), func(t *testing.T) {
			t.Parallel()
			bubble(t, func(t *testing.T, n *consoletest.Network) {
				s := fake(t, n, d.profile, ran, nil)
				c := dialOn(t, n, s, &rcon.Options{Dialect: d.dialect})
				mustExec(t, c, "status", "ran status")
				// SRCDS answers a wrong password with its empty packet and
				// the -1 in one segment: the first is not the answer.
				if _, err := tryDial(t, n, s, "nope", &rcon.Options{Dialect: d.dialect}); !errors.Is(err, rcon.ErrAuthFailed) {
					t.Fatalf("wrong password: %v, want ErrAuthFailed", err)
				}
			})
		})
	}
}

func TestAuthErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		script  func(c *rcontest.Conn)
		wantErr error
		notErr  error
	}{
		{"closed during auth (Squad)", func(c *rcontest.Conn) { c.ReadPacket() }, rcon.ErrAuthFailed, rcon.ErrNoAuthResponse},
		{"silent (ARK)", (*rcontest.Conn).Discard, rcon.ErrNoAuthResponse, rcon.ErrConnClosed},
		{"refused", func(c *rcontest.Conn) { c.Login() }, rcon.ErrAuthFailed, rcon.ErrConnClosed},
		{"garbage size", func(c *rcontest.Conn) {
			c.ReadPacket()
			c.NetConn().Write([]byte{3, 0, 0, 0})
			c.ReadPacket()
		}, rcon.ErrPacketTooSmall, rcon.ErrAuthFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			bubble(t, func(t *testing.T, n *consoletest.Network) {
				s := script(t, n, rcontest.SRCDS, nil, tt.script)
				password := pw
				if tt.name == "refused" {
					password = "wrong"
				}
				_, err := tryDial(t, n, s, password, &rcon.Options{Timeout: 300 * time.Millisecond})
				if !errors.Is(err, tt.wantErr) || errors.Is(err, tt.notErr) {
					t.Fatalf("err = %v, want %v and not %v", err, tt.wantErr, tt.notErr)
				}
				var oe *rcon.OpError
				if !errors.As(err, &oe) || oe.Op != "login" || oe.Addr != s.Addr().String() {
					t.Fatalf("err = %#v, want a login *OpError naming %s", err, s.Addr())
				}
			})
		})
	}
}

func TestAuthContextCancel(t *testing.T) {
	t.Parallel()
	bubble(t, func(t *testing.T, n *consoletest.Network) {
		s := script(t, n, rcontest.SRCDS, nil, (*rcontest.Conn).Discard)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		start := time.Now()
		_, err := rcon.Dial(ctx, s.Addr().String(), pw, &rcon.Options{DialContext: n.DialContext})
		if !errors.Is(err, context.Canceled) || time.Since(start) != 50*time.Millisecond {
			t.Fatalf("err = %v after %v, want context.Canceled after 50ms", err, time.Since(start))
		}
	})
}

// A server that accepts the login and then never ends its answer (a
// probe it ignores, a deadline sooner than the probe wait): the command
// fails with ErrTimeout (also context.DeadlineExceeded when the deadline
// was the context's), at its deadline exactly, with the output that
// arrived.
func TestSilentServer(t *testing.T) {
	t.Parallel()
	for _, viaCtx := range []bool{false, true} {
		t.Run(fmt.Sprint("ctx deadline=", viaCtx), func(t *testing.T) {
			t.Parallel()
			bubble(t, func(t *testing.T, n *consoletest.Network) {
				s := fake(t, n, rcontest.Factorio, answer("partial"), nil)
				c := dialOn(t, n, s, &rcon.Options{Timeout: 200 * time.Millisecond})
				ctx := context.Background()
				if viaCtx {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, 200*time.Millisecond)
					defer cancel()
				}
				start := time.Now()
				out, err := c.Exec(ctx, "status")
				var ne net.Error
				if !errors.Is(err, rcon.ErrTimeout) || !errors.Is(err, console.ErrTimeout) || !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
					t.Fatalf("err = %v, want ErrTimeout, a net.Error timeout", err)
				}
				if errors.Is(err, context.DeadlineExceeded) != viaCtx {
					t.Fatalf("err = %v: matches context.DeadlineExceeded %v, want %v", err, !viaCtx, viaCtx)
				}
				if out != "partial" || time.Since(start) != 200*time.Millisecond {
					t.Fatalf("partial output %q after %v, want \"partial\" after 200ms", out, time.Since(start))
				}
			})
		})
	}
}

func TestServerClosesMidResponse(t *testing.T) {
	t.Parallel()
	bubble(t, func(t *testing.T, n *consoletest.Network) {
		s := script(t, n, rcontest.SRCDS, nil, func(c *rcontest.Conn) {
			if !c.Login() {
				return
			}
			p, _ := c.ReadPacket()
			c.Send(rcon.Packet{ID: p.ID, Body: []byte("first half")})
			b, _ := rcon.Packet{ID: p.ID, Body: []byte("second half")}.AppendBinary(nil)
			c.NetConn().Write(b[:9]) // cut inside the packet
		})
		c := dialOn(t, n, s, nil)
		out, err := c.Exec(bounded(t), "status")
		if !errors.Is(err, rcon.ErrConnClosed) || out != "first half" {
			t.Fatalf("Exec = %q, %v; want partial output and ErrConnClosed", out, err)
		}
		// The next command goes out on a new connection, which the
		// server cuts the same way.
		if _, err := c.Exec(bounded(t), "status"); !errors.Is(err, rcon.ErrConnClosed) || s.Accepted() != 2 {
			t.Fatalf("next Exec err = %v on connection %d, want ErrConnClosed on the second", err, s.Accepted())
		}
	})
}

// bigOutput is text of n bytes with runes of one to four bytes, which
// straddle packet and fragment boundaries.
func bigOutput(n int) string { return rcontest.BigOutput(n) }

func TestLargeResponses(t *testing.T) {
	t.Parallel()
	for _, size := range []int{100 << 10, 1 << 20} {
		out := bigOutput(size)
		for _, d := range dialects {
			t.Run(fmt.Sprintf("%v/%dK", d.dialect, size>>10), func(t *testing.T) {
				t.Parallel()
				bubble(t, func(t *testing.T, n *consoletest.Network) {
					s := fake(t, n, d.profile, answer(out), nil)
					c := dialOn(t, n, s, &rcon.Options{Dialect: d.dialect})
					want := out
					if d.dialect == rcon.DialectMinecraft {
						want = vanilla(out)
					}
					for range 2 { // the second run proves nothing was left behind
						mustExec(t, c, "cvarlist", want)
					}
					if s.Hangups() != 0 {
						t.Fatalf("the server hung up %d times: a Minecraft rule was broken", s.Hangups())
					}
				})
			})
		}
	}
}

// Minecraft output of exactly 4096 UTF-16 units (or a multiple) ends
// with a full fragment: only the probe can tell, and it must be sent
// after the fragment, never with the command.
func TestMinecraftExactFragments(t *testing.T) {
	t.Parallel()
	outputs := map[string]string{
		"empty":             "",
		"4095":              strings.Repeat("a", 4095),
		"4096":              strings.Repeat("a", 4096),
		"8192":              strings.Repeat("b", 8192),
		"4096 two-byte":     strings.Repeat("é", 4096),
		"4096 three-byte":   strings.Repeat("玩", 4096),
		"surrogates at cut": strings.Repeat("a", 4095) + strings.Repeat("🎮", 10),
		"raw section signs": strings.Repeat("§c", 3000),
	}
	for name, out := range outputs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			bubble(t, func(t *testing.T, n *consoletest.Network) {
				s := fake(t, n, rcontest.Minecraft, answer(out), nil)
				c := dialOn(t, n, s, &rcon.Options{Dialect: rcon.DialectMinecraft})
				for range 2 {
					mustExec(t, c, "help", vanilla(out))
				}
				if s.Hangups() != 0 {
					t.Fatal("the client wrote packets back to back")
				}
			})
		})
	}
}

func TestNonASCII(t *testing.T) {
	t.Parallel()
	names := "Игрок, 玩家, 플레이어, Ελληνικά, émoji 🎮"
	for _, d := range []rcon.Dialect{rcon.DialectSource, rcon.DialectMinecraft} {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			bubble(t, func(t *testing.T, n *consoletest.Network) {
				p := map[rcon.Dialect]rcontest.Profile{rcon.DialectSource: rcontest.SRCDS, rcon.DialectMinecraft: rcontest.Minecraft}[d]
				s := fake(t, n, p, ran, func(s *rcontest.Server) { s.Password = "pässwörd" })
				c, err := tryDial(t, n, s, "pässwörd", &rcon.Options{Dialect: d})
				if err != nil {
					t.Fatal(err)
				}
				mustExec(t, c, "say "+names, "ran say "+names)
			})
		})
	}
	t.Run("Latin-1 section sign", func(t *testing.T) {
		t.Parallel()
		bubble(t, func(t *testing.T, n *consoletest.Network) {
			s := fake(t, n, rcontest.CS2, answer("\xa7cRed \xa7rand Жёлтый"), nil)
			c := dialOn(t, n, s, nil)
			mustExec(t, c, "list", "§cRed §rand Жёлтый")
			r, err := c.Do(bounded(t), "list")
			if err != nil || string(r.Body) != "\xa7cRed \xa7rand Жёлтый" || r.Packets != 1 {
				t.Fatalf("Do = %+v, %v", r, err)
			}
		})
	})
}

// The server writes everything one byte at a time, or in odd sizes that
// split the size word.
func TestHostileSegmentation(t *testing.T) {
	t.Parallel()
	out := bigOutput(20 << 10)
	for _, chunk := range []int{1, 3, 4097} {
		for _, d := range dialects {
			t.Run(fmt.Sprintf("%v/%d", d.dialect, chunk), func(t *testing.T) {
				t.Parallel()
				bubble(t, func(t *testing.T, n *consoletest.Network) {
					s := fake(t, n, d.profile, answer(out), func(s *rcontest.Server) {
						s.Faults = rcontest.Faults{Segments: []int{chunk}, SegmentDelay: time.Microsecond}
					})
					c := dialOn(t, n, s, &rcon.Options{Dialect: d.dialect})
					want := out
					if d.dialect == rcon.DialectMinecraft {
						want = vanilla(out)
					}
					mustExec(t, c, "status", want)
				})
			})
		}
	}
}

// A cancelled command's answer arrives late, coalesced with the next
// command's: it must be dropped, not returned to the next command.
func TestCancelledRequestLatePackets(t *testing.T) {
	t.Parallel()
	bubble(t, func(t *testing.T, n *consoletest.Network) {
		release := make(chan struct{})
		h := rcon.HandlerFunc(func(_ context.Context, w rcon.ResponseWriter, cmd string) {
			if cmd == "slow" {
				<-release
				w.WriteString("STALE answer to slow")
				return
			}
			w.WriteString("fresh answer to " + cmd)
		})
		s := fake(t, n, rcontest.SRCDS, h, func(s *rcontest.Server) { s.Faults.Coalesce = true })
		// The server reads each command with its probe: a client that knows
		// it (the srcds profile) sends them together.
		c := dialOn(t, n, s, &rcon.Options{Profile: "srcds"})
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		if _, err := c.Exec(ctx, "slow"); !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled Exec err = %v", err)
		}
		time.AfterFunc(time.Millisecond, func() { close(release) })
		mustExec(t, c, "fast", "fresh answer to fast")
		consoletest.NoEvent(t, c.Events())
	})
}

// With Pipeline, several commands are in flight at once and answers are
// demultiplexed by id even when they come back in reverse order.
func TestPipelining(t *testing.T) {
	t.Parallel()
	const cmds = 8
	bubble(t, func(t *testing.T, n *consoletest.Network) {
		s := script(t, n, rcontest.SRCDS, nil, func(c *rcontest.Conn) {
			if !c.Login() {
				return
			}
			var reqs []rcon.Packet
			for len(reqs) < 2*cmds {
				p, ok := c.ReadPacket()
				if !ok {
					t.Errorf("server got %d packets, want %d in flight together", len(reqs), 2*cmds)
					return
				}
				reqs = append(reqs, p)
			}
			for i := len(reqs) - 2; i >= 0; i -= 2 {
				cmd, probe := reqs[i], reqs[i+1]
				c.Send(append(c.Reply(cmd.ID, strings.Repeat(string(cmd.Body)+" ", 1000)), mirror(probe.ID)...)...)
			}
			c.ReadPacket()
		})
		c := dialOn(t, n, s, &rcon.Options{Pipeline: true})
		if !rcon.IsPipelined(c) {
			t.Fatal("not pipelined")
		}
		execConcurrently(t, c, cmds, func(cmd string) string { return strings.Repeat(cmd+" ", 1000) }).Wait()
	})
}

// Serial mode (the default) never has two commands in flight, however
// many goroutines call Exec.
func TestSerialConcurrentCallers(t *testing.T) {
	t.Parallel()
	bubble(t, func(t *testing.T, n *consoletest.Network) {
		var mu sync.Mutex
		outstanding, most := 0, 0
		debug := func(dir string, _ netip.AddrPort, b []byte) {
			p, _, err := rcon.ParsePacket(b, 0)
			if err != nil {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			switch {
			case dir == "send" && p.Type == rcon.TypeExecCommand:
				outstanding++
				most = max(most, outstanding)
			case dir == "recv" && len(p.Body) == 0 && p.Type == rcon.TypeResponseValue && outstanding > 0:
				outstanding-- // the probe's mirror ends an answer
			}
		}
		s := fake(t, n, rcontest.SRCDS, ran, nil)
		c := dialOn(t, n, s, &rcon.Options{Profile: "srcds", Debug: debug})
		execConcurrently(t, c, 10, func(cmd string) string { return "ran " + cmd }).Wait()
		mu.Lock()
		defer mu.Unlock()
		if most != 1 {
			t.Fatalf("%d commands in flight at once", most)
		}
	})
}

// execConcurrently runs the commands c0 ... c<n-1> on c, each in its own
// goroutine, and checks that each returns want(cmd). The caller waits
// for them.
func execConcurrently(t *testing.T, c *rcon.Client, n int, want func(cmd string) string) *sync.WaitGroup {
	wg := new(sync.WaitGroup)
	for i := range n {
		wg.Go(func() {
			cmd := fmt.Sprint("c", i)
			if got, err := c.Exec(bounded(t), cmd); err != nil || got != want(cmd) {
				t.Errorf("%s: got %d bytes %.40q, %v", cmd, len(got), got, err)
			}
		})
	}
	return wg
}

// The ids the server sees are unique and avoid the values servers use on
// their own.
func TestIDsOnTheWire(t *testing.T) {
	t.Parallel()
	bubble(t, func(t *testing.T, n *consoletest.Network) {
		var mu sync.Mutex
		seen := map[int32]bool{}
		debug := func(dir string, _ netip.AddrPort, b []byte) {
			p, _, err := rcon.ParsePacket(b, 0)
			if err != nil || dir != "send" {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if p.ID == 0 || p.ID == -1 || p.ID == 42 || seen[p.ID] {
				t.Errorf("the server saw id %d", p.ID)
			}
			seen[p.ID] = true
		}
		s := fake(t, n, rcontest.SRCDS, ran, nil)
		c := dialOn(t, n, s, &rcon.Options{Debug: debug})
		for i := range 30 {
			mustExec(t, c, fmt.Sprint("c", i), fmt.Sprint("ran c", i))
		}
	})
}

func TestResponseSizeLimit(t *testing.T) {
	t.Parallel()
	bubble(t, func(t *testing.T, n *consoletest.Network) {
		s := fake(t, n, rcontest.SRCDS, answer(strings.Repeat("x", 50000)), nil)
		c := dialOn(t, n, s, &rcon.Options{MaxResponseSize: 10000})
		if _, err := c.Exec(bounded(t), "x"); !errors.Is(err, rcon.ErrResponseTooLarge) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestPacketSizeLimit(t *testing.T) {
	t.Parallel()
	bubble(t, func(t *testing.T, n *consoletest.Network) {
		s := fake(t, n, rcontest.CS2, answer(strings.Repeat("x", 9000)), nil)
		c := dialOn(t, n, s, &rcon.Options{Dialect: rcon.DialectCS2, MaxPacketSize: 8192})
		if _, err := c.Exec(bounded(t), "x"); !errors.Is(err, rcon.ErrPacketTooLarge) || !errors.Is(err, rcon.ErrProtocol) {
			t.Fatalf("err = %v", err)
		}
	})
}

// A server that streams packets of one id without end: the command
// fails with ErrResponseTooLarge once its output passes the limit, and
// the output takes no more memory than the limit (its buffer grows to
// the limit, not past it, and is the only copy).
func TestResponseMemoryBounded(t *testing.T) {
	// Not parallel: it measures the process's allocations.
	const limit = 8 << 20
	body := bytes.Repeat([]byte("x"), 4086)
	bubble(t, func(t *testing.T, n *consoletest.Network) {
		s := script(t, n, rcontest.SRCDS, nil, func(c *rcontest.Conn) {
			if !c.Login() {
				return
			}
			p, ok := c.ReadPacket()
			if !ok {
				return
			}
			pkt, _ := rcon.Packet{ID: p.ID, Type: rcon.TypeResponseValue, Body: body}.AppendBinary(nil)
			burst := bytes.Repeat(pkt, 64)
			for {
				if _, err := c.NetConn().Write(burst); err != nil {
					return
				}
			}
		})
		c := dialOn(t, n, s, &rcon.Options{MaxResponseSize: limit, Profile: "srcds"})
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		r, err := c.Do(bounded(t), "flood")
		runtime.ReadMemStats(&after)
		if !errors.Is(err, rcon.ErrResponseTooLarge) {
			t.Fatalf("err = %v, want ErrResponseTooLarge", err)
		}
		if len(r.Body) > limit || len(r.Body) < limit-len(body) {
			t.Fatalf("%d bytes returned, want the %d that fit", len(r.Body), limit)
		}
		// The buffer doubles up to the limit (1/2 + 1/4 + ... of it before
		// the last growth), and Do hands it over without a copy: twice the
		// limit allocated in all, once held.
		if got := after.TotalAlloc - before.TotalAlloc; got > 2*limit+limit/4 {
			t.Fatalf("the command allocated %d bytes for a %d-byte limit", got, limit)
		}
	})
}

func TestCommandValidation(t *testing.T) {
	t.Parallel()
	bubble(t, func(t *testing.T, n *consoletest.Network) {
		s := fake(t, n, rcontest.Minecraft, ran, nil)
		c := dialOn(t, n, s, &rcon.Options{Dialect: rcon.DialectMinecraft})
		for _, cmd := range []string{"", "a\x00b"} {
			if _, err := c.Exec(bounded(t), cmd); !errors.Is(err, rcon.ErrInvalidCommand) {
				t.Fatalf("Exec(%q): err = %v", cmd, err)
			}
			if err := c.Send(bounded(t), cmd); !errors.Is(err, rcon.ErrInvalidCommand) {
				t.Fatalf("Send(%q): err = %v", cmd, err)
			}
		}
		if _, err := c.Exec(bounded(t), strings.Repeat("x", 1447)); !errors.Is(err, rcon.ErrCommandTooLong) {
			t.Fatalf("err = %v, want ErrCommandTooLong", err)
		}
		long := "say " + strings.Repeat("x", 1442)
		mustExec(t, c, long, "ran "+long)
	})
}

func TestMinecraftCommandDelaySerial(t *testing.T) {
	t.Parallel()
	bubble(t, func(t *testing.T, n *consoletest.Network) {
		s := fake(t, n, rcontest.Minecraft, ran, nil)
		c := dialOn(t, n, s, &rcon.Options{Dialect: rcon.DialectMinecraft, Pipeline: true, CommandDelay: 5 * time.Millisecond})
		start := time.Now()
		execConcurrently(t, c, 6, func(cmd string) string { return "ran " + cmd }).Wait()
		if s.Hangups() != 0 {
			t.Fatal("coalesced Minecraft requests")
		}
		if took := time.Since(start); took < 5*5*time.Millisecond {
			t.Errorf("6 commands took %v, less than 5 CommandDelays", took)
		}
	})
}

// A Minecraft command abandoned before the server read it must not be
// followed at once by the next one: both would land in one read and the
// server would drop the connection.
func TestMinecraftAbandonedNotCoalesced(t *testing.T) {
	t.Parallel()
	bubble(t, func(t *testing.T, n *consoletest.Network) {
		// The server reads nothing after the login until the first command
		// has timed out; the client must then not send the second before the
		// server has read the first alone.
		gate := make(chan struct{})
		s := script(t, n, rcontest.Minecraft, ran, func(c *rcontest.Conn) {
			if c.Login() {
				<-gate
				c.Serve()
			}
		})
		c := dialOn(t, n, s, &rcon.Options{Dialect: rcon.DialectMinecraft})
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		if _, err := c.Exec(ctx, "first"); !errors.Is(err, rcon.ErrTimeout) {
			t.Fatalf("err = %v", err)
		}
		time.AfterFunc(time.Millisecond, func() { close(gate) })
		mustExec(t, c, "second", "ran second")
		if s.Hangups() != 0 {
			t.Fatal("the abandoned and the next command coalesced")
		}
	})
}

// Squad's malformed probe tail must not desync the stream, even when
// the stray bytes arrive in a separate segment.
func TestSquadTailSegmented(t *testing.T) {
	t.Parallel()
	bubble(t, func(t *testing.T, n *consoletest.Network) {
		out := strings.Repeat("ListPlayers ", 800)
		s := fake(t, n, rcontest.Squad, answer(out), func(s *rcontest.Server) { s.Faults.Segments = []int{5} })
		c := dialOn(t, n, s, &rcon.Options{Profile: "squad"})
		for range 3 {
			mustExec(t, c, "ListPlayers", out)
		}
	})
}

// A server that leaves some commands unanswered, with a quiet period as
// the end of an answer: the answer is empty, no error, after the NoReply
// period; answers that do come end after the quiet period.
func TestQuietPeriodNoReply(t *testing.T) {
	t.Parallel()
	bubble(t, func(t *testing.T, n *consoletest.Network) {
		s := fake(t, n, rcontest.Factorio, answer("line"), func(s *rcontest.Server) { s.Faults.DropEvery = 2 })
		term := console.QuietPeriod{Quiet: 50 * time.Millisecond, NoReply: 100 * time.Millisecond}
		c := dialOn(t, n, s, &rcon.Options{Terminator: term})
		for _, step := range []struct {
			want string
			took time.Duration
		}{{"line", 50 * time.Millisecond}, {"", 100 * time.Millisecond}, {"line", 50 * time.Millisecond}} {
			start := time.Now()
			mustExec(t, c, "cmd", step.want)
			if took := time.Since(start); took != step.took {
				t.Errorf("answer %q took %v, want %v", step.want, took, step.took)
			}
		}
	})
}

// The console's Terminators work on RCON: the probe with each command
// (Valve's own way), and one packet per answer.
func TestConsoleTerminators(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		term    console.Terminator
		profile rcontest.Profile
		out     string
	}{
		{"MarkerReply on SRCDS", console.MarkerReply{}, rcontest.SRCDS, bigOutput(10000)},
		{"MarkerReply on Minecraft", console.MarkerReply{}, rcontest.Minecraft, bigOutput(10000)},
		{"FirstMessage on CS2", console.FirstMessage{}, rcontest.CS2, bigOutput(10000)},
		{"FirstMessage on Factorio", console.FirstMessage{}, rcontest.Factorio, "one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			bubble(t, func(t *testing.T, n *consoletest.Network) {
				s := fake(t, n, tc.profile, answer(tc.out), nil)
				d := rcon.DialectSource
				want := tc.out
				if tc.profile == rcontest.Minecraft {
					d, want = rcon.DialectMinecraft, vanilla(tc.out)
				}
				c := dialOn(t, n, s, &rcon.Options{Dialect: d, Terminator: tc.term})
				for range 3 {
					start := time.Now()
					mustExec(t, c, "cmd", want)
					if time.Since(start) != 0 {
						t.Errorf("an answer took %v: the end was not found from what came", time.Since(start))
					}
				}
				if s.Hangups() != 0 || s.Dropped() != 0 {
					t.Errorf("the server hung up %d times, dropped %d requests", s.Hangups(), s.Dropped())
				}
			})
		})
	}
}

// Palworld answers with id 0; once a request is abandoned, its late reply
// could be taken for the next one, so the connection is given up, and
// the next command runs on a new one.
func TestForeignIDAbandonDropsConnection(t *testing.T) {
	t.Parallel()
	bubble(t, func(t *testing.T, n *consoletest.Network) {
		h := rcon.HandlerFunc(func(_ context.Context, w rcon.ResponseWriter, cmd string) {
			if cmd == "slow" {
				time.Sleep(300 * time.Millisecond)
			}
			w.WriteString("ran " + cmd)
		})
		s := fake(t, n, rcontest.Palworld, h, nil)
		c := dialOn(t, n, s, &rcon.Options{Profile: "palworld"})
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		if _, err := c.Exec(ctx, "slow"); !errors.Is(err, rcon.ErrTimeout) {
			t.Fatalf("err = %v", err)
		}
		mustExec(t, c, "next", "ran next")
		if s.Accepted() != 2 {
			t.Fatalf("the next command ran on connection %d, want a second", s.Accepted())
		}
	})
}

// A server whose replies, the login's included, carry id 0 or 42 is
// recognised from the login reply; LooseIDs accepts such replies in
// advance. Either way they go to the one command in flight, and
// commands are serial even when Pipeline asks otherwise.
func TestFixedReplyIDs(t *testing.T) {
	t.Parallel()
	for _, id := range []int32{0, 42} {
		for _, loose := range []bool{false, true} {
			t.Run(fmt.Sprintf("id=%d/loose=%v", id, loose), func(t *testing.T) {
				t.Parallel()
				bubble(t, func(t *testing.T, n *consoletest.Network) {
					b := rcontest.SRCDS.Behaviour()
					b.FixedReplyID, b.ReplyID, b.Probe = true, id, rcontest.ProbeIgnore
					s := fake(t, n, rcontest.SRCDS, ran, func(s *rcontest.Server) { s.Behaviour = &b })
					c := dialOn(t, n, s, &rcon.Options{LooseIDs: loose, Pipeline: true})
					if rcon.IsPipelined(c) {
						t.Fatal("pipelining with fixed reply ids")
					}
					for range 3 {
						mustExec(t, c, "x", "ran x")
					}
				})
			})
		}
	}
}

func TestMaxInFlight(t *testing.T) {
	t.Parallel()
	bubble(t, func(t *testing.T, n *consoletest.Network) {
		var outstanding, most atomic.Int32
		s := script(t, n, rcontest.SRCDS, nil, func(c *rcontest.Conn) {
			if !c.Login() {
				return
			}
			var wmu sync.Mutex
			var answers sync.WaitGroup
			defer answers.Wait()
			for {
				cmd, ok := c.ReadPacket()
				if !ok {
					return
				}
				probe, ok := c.ReadPacket()
				if !ok {
					return
				}
				n := outstanding.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				answers.Go(func() {
					time.Sleep(5 * time.Millisecond)
					outstanding.Add(-1)
					wmu.Lock()
					defer wmu.Unlock()
					c.Send(append([]rcon.Packet{{ID: cmd.ID, Body: []byte("ran " + string(cmd.Body))}}, mirror(probe.ID)...)...)
				})
			}
		})
		c := dialOn(t, n, s, &rcon.Options{Pipeline: true, MaxInFlight: 2})
		var wg sync.WaitGroup
		for i := range 12 {
			wg.Go(func() {
				cmd := strings.Repeat("c", i+1)
				if got, err := c.Exec(bounded(t), cmd); err != nil || got != "ran "+cmd {
					t.Errorf("%s: %q, %v", cmd, got, err)
				}
			})
		}
		wg.Wait()
		if m := most.Load(); m != 2 {
			t.Errorf("the server saw %d commands out at once, want 2", m)
		}
	})
}

// A server that is only slow is not taken for one that ignores probes:
// a stall after a full SRCDS fragment is waited out, and a probe reply
// that comes after the client gave up on it teaches that probes are
// answered, so the next long answer comes whole.
func TestSlowServerNotTakenForSilent(t *testing.T) {
	t.Parallel()
	stall := 2 * rcon.ProbeWait
	out := strings.Repeat("a", 3*rcon.DefaultSourceSplitSize+100)
	run := func(t *testing.T, f func(c *rcontest.Conn), want ...string) {
		t.Helper()
		bubble(t, func(t *testing.T, n *consoletest.Network) {
			s := script(t, n, rcontest.SRCDS, answer(out), f)
			var log logLines
			c := dialOn(t, n, s, &rcon.Options{Logf: log.logf})
			for i, w := range want {
				got, err := c.Exec(bounded(t), "x")
				if err != nil || got != w {
					t.Fatalf("command %d: %d bytes, %v; want %d\n%s", i, len(got), err, len(w), &log)
				}
			}
		})
	}
	t.Run("stall after a full fragment", func(t *testing.T) {
		t.Parallel()
		run(t, func(c *rcontest.Conn) {
			if !c.Login() {
				return
			}
			p, _ := c.ReadPacket()
			pkts := c.Reply(p.ID, out)
			c.Send(pkts[0])
			time.Sleep(stall)
			c.Send(pkts[1:]...)
			c.Serve()
		}, out, out)
	})
	t.Run("late probe reply", func(t *testing.T) {
		t.Parallel()
		run(t, func(c *rcontest.Conn) {
			if !c.Login() {
				return
			}
			p, _ := c.ReadPacket()
			c.Send(rcon.Packet{ID: p.ID, Body: []byte("short")})
			probe, _ := c.ReadPacket()
			time.Sleep(stall) // the client gives up on the probe meanwhile
			c.Answer(probe)
			c.Serve()
		}, "short", out, out)
	})
}

// Debug sees every packet both ways, login included, the password masked.
func TestDebugHook(t *testing.T) {
	t.Parallel()
	bubble(t, func(t *testing.T, n *consoletest.Network) {
		var mu sync.Mutex
		var sent, recv []rcon.Packet
		debug := func(dir string, peer netip.AddrPort, b []byte) {
			p, m, err := rcon.ParsePacket(b, 0)
			if err != nil || m != len(b) || !peer.IsValid() {
				t.Errorf("%s: Debug got %d bytes that are not one packet (%v), or no peer (%v)", dir, len(b), err, peer)
				return
			}
			p.Body = bytes.Clone(p.Body)
			mu.Lock()
			defer mu.Unlock()
			if dir == "send" {
				sent = append(sent, p)
			} else {
				recv = append(recv, p)
			}
		}
		s := fake(t, n, rcontest.SRCDS, ran, nil)
		c := dialOn(t, n, s, &rcon.Options{Debug: debug})
		mustExec(t, c, "status", "ran status")
		time.Sleep(time.Second) // the idle reader reads what is left
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		// Sent: login, command, probe. Received: empty packet and login
		// answer, the output, the probe's mirror and its extra packet.
		if len(sent) != 3 || sent[0].Type != rcon.TypeAuth || string(sent[1].Body) != "status" || sent[2].ID != sent[1].ID+1 {
			t.Errorf("sent %+v", sent)
		}
		if string(sent[0].Body) != "**" {
			t.Errorf("Debug saw the login body %q, want the password masked", sent[0].Body)
		}
		if len(recv) != 5 || recv[1].Type != rcon.TypeAuthResponse || string(recv[2].Body) != "ran status" {
			t.Errorf("received %+v", recv)
		}
	})
}

func TestParseDialect(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]rcon.Dialect{"source": rcon.DialectSource, "SRCDS": rcon.DialectSource, "cs2": rcon.DialectCS2, "Minecraft": rcon.DialectMinecraft, "mc": rcon.DialectMinecraft} {
		if got, err := rcon.ParseDialect(in); err != nil || got != want {
			t.Errorf("ParseDialect(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := rcon.ParseDialect("quake"); err == nil {
		t.Error("ParseDialect(quake) succeeded")
	}
	for _, d := range []rcon.Dialect{rcon.DialectSource, rcon.DialectCS2, rcon.DialectMinecraft} {
		if got, _ := rcon.ParseDialect(d.String()); got != d {
			t.Errorf("round trip of %v", d)
		}
	}
	if rcon.Dialect(9).String() != "Dialect(9)" {
		t.Error(rcon.Dialect(9).String())
	}
}

func TestLookupProfile(t *testing.T) {
	t.Parallel()
	for _, p := range rcon.Profiles() {
		got, err := rcon.LookupProfile(strings.ToUpper(p.Name))
		if err != nil || got.Name != p.Name || p.Summary == "" {
			t.Errorf("LookupProfile(%q) = %+v, %v", p.Name, got, err)
		}
	}
	if _, err := rcon.LookupProfile("doom"); err == nil {
		t.Error("unknown profile accepted")
	}
	if _, err := rcon.Dial(context.Background(), "127.0.0.1:1", "pw", &rcon.Options{Profile: "doom"}); err == nil {
		t.Error("Dial accepted an unknown profile")
	}
}
