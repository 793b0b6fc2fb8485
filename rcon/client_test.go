package rcon

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestAuthShapes(t *testing.T) {
	t.Parallel()
	for _, d := range []Dialect{DialectSource, DialectCS2, DialectMinecraft} {
		t.Run(d.String()+"/ok", func(t *testing.T) {
			t.Parallel()
			c, _ := dialEmu(t, emu{password: "s3cret", dialect: d}, &Options{Dialect: d})
			got, err := c.Exec(testCtx(t), "status")
			if err != nil || got != "ran status" {
				t.Fatalf("Exec = %q, %v", got, err)
			}
		})
		t.Run(d.String()+"/wrong password", func(t *testing.T) {
			t.Parallel()
			s := startFake(t, emu{password: "s3cret", dialect: d}.serve)
			_, err := Dial(testCtx(t), s.addr(), "nope", &Options{Dialect: d})
			if !errors.Is(err, ErrAuthFailed) {
				t.Fatalf("err = %v, want ErrAuthFailed", err)
			}
		})
	}
}

// Classic SRCDS answers the login with the empty packet and the auth
// response in one segment; the client must not take the first for the
// answer, and a wrong password must not "succeed".
func TestAuthLeadingEmptyPacketCoalesced(t *testing.T) {
	t.Parallel()
	s := startFake(t, func(c *fakeConn) {
		p, ok := c.read()
		if !ok {
			return
		}
		c.send(Packet{ID: p.ID, Type: TypeResponseValue}, Packet{ID: -1, Type: TypeAuthResponse})
		drain(c)
	})
	if _, err := Dial(testCtx(t), s.addr(), "x", nil); !errors.Is(err, ErrAuthFailed) {
		t.Fatalf("err = %v, want ErrAuthFailed", err)
	}
}

func TestAuthErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		handle  func(c *fakeConn)
		wantErr error
		notErr  error
	}{
		{"closed during auth (Squad)", func(c *fakeConn) { c.read() }, ErrAuthFailed, ErrNoAuthResponse},
		{"silent (ARK)", drain, ErrNoAuthResponse, ErrConnClosed},
		{"refused", func(c *fakeConn) {
			c.read()
			c.send(Packet{ID: -1, Type: TypeAuthResponse})
			drain(c)
		}, ErrAuthFailed, ErrConnClosed},
		{"garbage size", func(c *fakeConn) {
			c.read()
			c.writeRaw(le(3))
			drain(c)
		}, ErrPacketTooSmall, ErrAuthFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := startFake(t, tt.handle)
			_, err := Dial(context.Background(), s.addr(), "pw", &Options{Timeout: 300 * time.Millisecond})
			if !errors.Is(err, tt.wantErr) || errors.Is(err, tt.notErr) {
				t.Fatalf("err = %v, want %v and not %v", err, tt.wantErr, tt.notErr)
			}
			var oe *OpError
			if !errors.As(err, &oe) || oe.Op != "login" || oe.Addr != s.addr() {
				t.Fatalf("err = %#v, want a login *OpError naming %s", err, s.addr())
			}
		})
	}
}

func TestAuthContextCancel(t *testing.T) {
	t.Parallel()
	s := startFake(t, drain)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	_, err := Dial(ctx, s.addr(), "pw", nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// A server that accepts the login and then never answers: the command
// fails with ErrTimeout (also context.DeadlineExceeded), bounded by the
// timeout, and the output that arrived is returned.
func TestSilentServer(t *testing.T) {
	t.Parallel()
	for _, viaCtx := range []bool{false, true} {
		t.Run(fmt.Sprint("ctx deadline=", viaCtx), func(t *testing.T) {
			t.Parallel()
			c, _ := dialEmu(t, emu{password: "pw", respond: func(string) string { return "partial" }, ignoreProbe: true},
				&Options{Timeout: 200 * time.Millisecond})
			ctx := context.Background()
			if viaCtx {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, 200*time.Millisecond)
				defer cancel()
			}
			out, err := c.Exec(ctx, "status")
			var ne net.Error
			if !errors.Is(err, ErrTimeout) || !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
				t.Fatalf("err = %v, want ErrTimeout, a net.Error timeout", err)
			}
			if errors.Is(err, context.DeadlineExceeded) != viaCtx {
				t.Fatalf("err = %v: matches context.DeadlineExceeded %v, want %v", err, !viaCtx, viaCtx)
			}
			if out != "partial" {
				t.Fatalf("partial output = %q", out)
			}
		})
	}
}

func TestServerClosesMidResponse(t *testing.T) {
	t.Parallel()
	s := startFake(t, func(c *fakeConn) {
		if !(emu{password: "pw"}).authSource(c) {
			return
		}
		p, _ := c.read()
		c.send(Packet{ID: p.ID, Type: TypeResponseValue, Body: []byte("first half")})
		b, _ := Packet{ID: p.ID, Type: TypeResponseValue, Body: []byte("second half")}.AppendBinary(nil)
		c.writeRaw(b[:9]) // cut inside the packet
	})
	c, err := Dial(testCtx(t), s.addr(), "pw", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	out, err := c.Exec(testCtx(t), "status")
	if !errors.Is(err, ErrConnClosed) || out != "first half" {
		t.Fatalf("Exec = %q, %v; want partial output and ErrConnClosed", out, err)
	}
	if _, err := c.Exec(testCtx(t), "status"); !errors.Is(err, ErrConnClosed) {
		t.Fatalf("next Exec err = %v, want ErrConnClosed", err)
	}
}

// bigOutput is deterministic text of about n bytes with multi-byte runes
// that straddle packet boundaries.
func bigOutput(n int) string {
	var sb strings.Builder
	for i := 0; sb.Len() < n; i++ {
		fmt.Fprintf(&sb, "%06d Жёлтый 玩家 🎮 §aname\n", i)
	}
	return sb.String()
}

func TestLargeResponses(t *testing.T) {
	t.Parallel()
	for _, size := range []int{100 << 10, 1 << 20} {
		want := bigOutput(size)
		for _, d := range []Dialect{DialectSource, DialectCS2, DialectMinecraft} {
			t.Run(fmt.Sprintf("%v/%dK", d, size>>10), func(t *testing.T) {
				t.Parallel()
				var viol atomic.Int32
				c, _ := dialEmu(t, emu{password: "pw", dialect: d, mcViolations: &viol,
					respond: func(string) string { return want }}, &Options{Dialect: d})
				want := want
				if d == DialectMinecraft { // surrogate pairs cut by a fragment end become "??"
					want = string(joinFragments(minecraftFragments(want)))
				}
				for range 2 { // the second run proves nothing was left behind
					got, err := c.Exec(testCtx(t), "cvarlist")
					if err != nil {
						t.Fatal(err)
					}
					if got != want {
						t.Fatalf("got %d bytes, want %d (first diff at %d)", len(got), len(want), firstDiff(got, want))
					}
				}
				if viol.Load() != 0 {
					t.Fatalf("%d requests broke the Minecraft single-read rule", viol.Load())
				}
			})
		}
	}
}

func firstDiff(a, b string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
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
			var viol atomic.Int32
			c, _ := dialEmu(t, emu{password: "pw", dialect: DialectMinecraft, mcViolations: &viol,
				respond: func(string) string { return out }}, &Options{Dialect: DialectMinecraft})
			want := string(joinFragments(minecraftFragments(out)))
			for range 2 {
				got, err := c.Exec(testCtx(t), "help")
				if err != nil || got != want {
					t.Fatalf("got %d bytes (%v), want %d", len(got), err, len(want))
				}
			}
			if viol.Load() != 0 {
				t.Fatal("client wrote packets back to back")
			}
		})
	}
}

func joinFragments(frags [][]byte) []byte {
	var b []byte
	for _, f := range frags {
		b = append(b, f...)
	}
	return b
}

func TestNonASCII(t *testing.T) {
	t.Parallel()
	names := "Игрок, 玩家, 플레이어, Ελληνικά, émoji 🎮"
	for _, d := range []Dialect{DialectSource, DialectMinecraft} {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			c, _ := dialEmu(t, emu{password: "pässwörd", dialect: d}, &Options{Dialect: d})
			got, err := c.Exec(testCtx(t), "say "+names)
			if err != nil || got != "ran say "+names {
				t.Fatalf("Exec = %q, %v", got, err)
			}
		})
	}
	t.Run("Latin-1 section sign", func(t *testing.T) {
		t.Parallel()
		c, _ := dialEmu(t, emu{password: "pw", respond: func(string) string { return "\xa7cRed \xa7rand Жёлтый" }}, nil)
		got, err := c.Exec(testCtx(t), "list")
		if err != nil || got != "§cRed §rand Жёлтый" {
			t.Fatalf("Exec = %q, %v", got, err)
		}
		r, err := c.Do(testCtx(t), "list")
		if err != nil || string(r.Body) != "\xa7cRed \xa7rand Жёлтый" || r.Packets != 1 || r.RTT <= 0 {
			t.Fatalf("Do = %+v, %v", r, err)
		}
	})
}

// The server writes everything one byte at a time, or in odd sizes that
// split the size word.
func TestHostileSegmentation(t *testing.T) {
	t.Parallel()
	out := bigOutput(20 << 10)
	for _, chunk := range []int{1, 3, 4097} {
		for _, d := range []Dialect{DialectSource, DialectCS2, DialectMinecraft} {
			t.Run(fmt.Sprintf("%v/%d", d, chunk), func(t *testing.T) {
				t.Parallel()
				c, _ := dialEmu(t, emu{password: "pw", dialect: d, chunk: chunk,
					respond: func(string) string { return out }}, &Options{Dialect: d})
				want := out
				if d == DialectMinecraft {
					want = string(joinFragments(minecraftFragments(out)))
				}
				got, err := c.Exec(testCtx(t), "status")
				if err != nil || got != want {
					t.Fatalf("got %d bytes (%v), want %d", len(got), err, len(want))
				}
			})
		}
	}
}

// A cancelled command's answer arrives late, coalesced with the next
// command's: it must be dropped, not returned to the next command.
func TestCancelledRequestLatePackets(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	s := startFake(t, func(c *fakeConn) {
		if !(emu{password: "pw"}).authSource(c) {
			return
		}
		first, _ := c.read()
		probe1, _ := c.read()
		<-release
		second, _ := c.read()
		probe2, _ := c.read()
		e := emu{}
		var pkts []Packet
		pkts = append(pkts, e.sourceReply(first.ID, "STALE answer to "+string(first.Body))...)
		pkts = append(pkts, Packet{ID: probe1.ID}, Packet{ID: probe1.ID, Body: []byte{0, 0, 0, 1}})
		pkts = append(pkts, e.sourceReply(second.ID, "fresh answer to "+string(second.Body))...)
		pkts = append(pkts, Packet{ID: probe2.ID}, Packet{ID: probe2.ID, Body: []byte{0, 0, 0, 1}})
		c.send(pkts...)
		drain(c)
	})
	// The server reads each command with its probe: a client that knows
	// it (the srcds profile) sends them together.
	c, err := Dial(testCtx(t), s.addr(), "pw", &Options{Profile: "srcds"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	if _, err := c.Exec(ctx, "slow"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Exec err = %v", err)
	}
	close(release)
	got, err := c.Exec(testCtx(t), "fast")
	if err != nil || got != "fresh answer to fast" {
		t.Fatalf("next Exec = %q, %v", got, err)
	}
	select {
	case ev := <-c.Events():
		t.Fatalf("late packet leaked to Events: %+v", ev)
	default:
	}
}

// With Pipeline, several commands are in flight at once and answers are
// demultiplexed by id even when they come back in reverse order.
func TestPipelining(t *testing.T) {
	t.Parallel()
	const n = 8
	s := startFake(t, func(c *fakeConn) {
		if !(emu{password: "pw"}).authSource(c) {
			return
		}
		var reqs []Packet
		for len(reqs) < 2*n {
			p, ok := c.read()
			if !ok {
				t.Errorf("server got %d packets, want %d in flight together", len(reqs), 2*n)
				return
			}
			reqs = append(reqs, p)
		}
		for i := len(reqs) - 2; i >= 0; i -= 2 {
			cmd, probe := reqs[i], reqs[i+1]
			pkts := (emu{}).sourceReply(cmd.ID, strings.Repeat(string(cmd.Body)+" ", 1000))
			pkts = append(pkts, Packet{ID: probe.ID}, Packet{ID: probe.ID, Body: []byte{0, 0, 0, 1}})
			c.send(pkts...)
		}
		drain(c)
	})
	c, err := Dial(testCtx(t), s.addr(), "pw", &Options{Pipeline: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	execConcurrently(t, c, n, func(cmd string) string { return strings.Repeat(cmd+" ", 1000) }).Wait()
}

// Serial mode (the default) never has two commands in flight.
func TestSerialConcurrentCallers(t *testing.T) {
	t.Parallel()
	var inFlight, peak atomic.Int32
	cmds := make(chan Packet, 64)
	c, _ := dialEmu(t, emu{password: "pw", cmds: cmds, respond: func(cmd string) string {
		v := inFlight.Add(1)
		if v > peak.Load() {
			peak.Store(v)
		}
		defer inFlight.Add(-1)
		return "ran " + cmd
	}}, nil)
	execConcurrently(t, c, 10, func(cmd string) string { return "ran " + cmd }).Wait()
	if len(cmds) != 10 {
		t.Fatalf("server ran %d commands", len(cmds))
	}
}

// execConcurrently runs the commands c0 ... c<n-1> on c, each in its own
// goroutine, and checks that each returns want(cmd). The caller waits
// for them.
func execConcurrently(t *testing.T, c *Client, n int, want func(cmd string) string) *sync.WaitGroup {
	wg := new(sync.WaitGroup)
	for i := range n {
		wg.Go(func() {
			cmd := fmt.Sprint("c", i)
			if got, err := c.Exec(testCtx(t), cmd); err != nil || got != want(cmd) {
				t.Errorf("%s: got %d bytes %.40q, %v", cmd, len(got), got, err)
			}
		})
	}
	return wg
}

func TestIDSequence(t *testing.T) {
	t.Parallel()
	c, err := newClient("", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int32]bool{}
	check := func(id int32) {
		t.Helper()
		if id <= 0 || id == 42 || id&0xFFFFFF == 0 || seen[id] {
			t.Fatalf("bad or repeated id %d", id)
		}
		seen[id] = true
	}
	for range 100 {
		check(c.newID())
	}
	if seen[42] || !seen[41] || !seen[43] {
		t.Fatal("ids around 42 wrong")
	}
	if c.issued(1000) || !c.issued(100) {
		t.Fatal("issued wrong before the wrap")
	}
	c.ids.Store(1<<24 - 2)
	check(c.newID())
	if got := c.newID(); got != 1<<24+1 {
		t.Fatalf("id after 1<<24-1 = %d, want %d", got, 1<<24+1)
	}
	c.ids.Store(math.MaxInt32 - 1)
	if got := c.newID(); got != math.MaxInt32 {
		t.Fatalf("got %d", got)
	}
	if got := c.newID(); got != 1 || !c.issued(1<<30) {
		t.Fatalf("after wrap got %d, issued(1<<30) = %v", got, c.issued(1<<30))
	}
}

// The ids the server actually sees are unique and avoid the values
// servers use on their own.
func TestIDsOnTheWire(t *testing.T) {
	t.Parallel()
	cmds := make(chan Packet, 100)
	c, _ := dialEmu(t, emu{password: "pw", cmds: cmds}, nil)
	for i := range 30 {
		if _, err := c.Exec(testCtx(t), fmt.Sprint("c", i)); err != nil {
			t.Fatal(err)
		}
	}
	close(cmds)
	seen := map[int32]bool{}
	for p := range cmds {
		if p.ID == 0 || p.ID == -1 || p.ID == 42 || seen[p.ID] {
			t.Fatalf("server saw id %d", p.ID)
		}
		seen[p.ID] = true
	}
}

func TestEvents(t *testing.T) {
	t.Parallel()
	s := startFake(t, func(c *fakeConn) {
		if !(emu{password: "pw"}).authSource(c) {
			return
		}
		p, _ := c.read()
		probe, _ := c.read()
		c.send(
			Packet{ID: 0, Type: TypeChatValue, Body: []byte("[ChatAll] hi")},
			Packet{ID: p.ID, Type: TypeResponseValue, Body: []byte("out")},
			Packet{ID: -1, Type: TypeRustConsole, Body: []byte("console line")},
			Packet{ID: 123456, Type: TypeResponseValue, Body: []byte("stray")},
			Packet{ID: probe.ID}, Packet{ID: probe.ID, Body: []byte{0, 0, 0, 1}},
		)
		drain(c)
	})
	c, err := Dial(testCtx(t), s.addr(), "pw", &Options{Profile: "srcds"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Exec(testCtx(t), "x")
	if err != nil || got != "out" {
		t.Fatalf("Exec = %q, %v", got, err)
	}
	want := []string{"[ChatAll] hi", "console line", "stray"}
	for _, w := range want {
		select {
		case ev := <-c.Events():
			if string(ev.Body) != w {
				t.Fatalf("event %q, want %q", ev.Body, w)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no event %q", w)
		}
	}
	c.Close()
	if _, ok := <-c.Events(); ok {
		t.Fatal("Events not closed by Close")
	}
}

// A full events buffer drops the oldest packets and never stalls the
// reader: the command still completes.
func TestEventsDropOldest(t *testing.T) {
	t.Parallel()
	s := startFake(t, func(c *fakeConn) {
		if !(emu{password: "pw"}).authSource(c) {
			return
		}
		p, _ := c.read()
		probe, _ := c.read()
		var pkts []Packet
		for i := range 50 {
			pkts = append(pkts, Packet{Type: TypeChatValue, Body: fmt.Appendf(nil, "chat %d", i)})
		}
		pkts = append(pkts, Packet{ID: p.ID, Body: []byte("done")}, Packet{ID: probe.ID}, Packet{ID: probe.ID, Body: []byte{1}})
		c.send(pkts...)
		drain(c)
	})
	c, err := Dial(testCtx(t), s.addr(), "pw", &Options{EventBuffer: 3, Profile: "srcds"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, err := c.Exec(testCtx(t), "x"); err != nil || got != "done" {
		t.Fatalf("Exec = %q, %v", got, err)
	}
	for _, w := range []string{"chat 47", "chat 48", "chat 49"} {
		if ev := <-c.Events(); string(ev.Body) != w {
			t.Fatalf("event %q, want %q", ev.Body, w)
		}
	}
}

// Squad's malformed probe tail must not desync the stream, even when
// the stray bytes arrive in a separate segment.
func TestSquadTailSegmented(t *testing.T) {
	t.Parallel()
	c, _ := dialEmu(t, emu{password: "pw", squadTail: true, chunk: 5, respond: func(cmd string) string {
		return strings.Repeat("ListPlayers ", 800)
	}}, &Options{Profile: "squad"})
	for range 3 {
		got, err := c.Exec(testCtx(t), "ListPlayers")
		if err != nil || got != strings.Repeat("ListPlayers ", 800) {
			t.Fatalf("got %d bytes, %v", len(got), err)
		}
	}
}

// ARK does not answer some commands at all: the answer is empty, no
// error, after the NoReply period; answers that do come end after the
// quiet period.
func TestQuietPeriodNoReply(t *testing.T) {
	t.Parallel()
	c, _ := dialEmu(t, emu{password: "pw", ignoreProbe: true, respond: func(cmd string) string {
		if cmd == "silent" {
			return noAnswer
		}
		return "line"
	}}, &Options{Terminator: QuietPeriod{Quiet: 50 * time.Millisecond, NoReply: 100 * time.Millisecond}})
	for _, cmd := range []string{"loud", "silent", "loud"} {
		want := map[string]string{"loud": "line", "silent": ""}[cmd]
		got, err := c.Exec(testCtx(t), cmd)
		if err != nil || got != want {
			t.Fatalf("%s: Exec = %q, %v", cmd, got, err)
		}
	}
}

// Palworld answers with id 0; once a request is abandoned, its late reply
// could be taken for the next one, so the connection is given up, and
// the next command runs on a new one.
func TestForeignIDAbandonDropsConnection(t *testing.T) {
	t.Parallel()
	zero := int32(0)
	c, s := dialEmu(t, emu{password: "pw", ignoreProbe: true, replyID: &zero, respond: func(cmd string) string {
		if cmd == "slow" {
			time.Sleep(300 * time.Millisecond)
		}
		return "ran " + cmd
	}}, &Options{Profile: "palworld"})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := c.Exec(ctx, "slow"); !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v", err)
	}
	if got, err := c.Exec(testCtx(t), "next"); err != nil || got != "ran next" || s.accepted.Load() != 2 {
		t.Fatalf("next Exec = %q, %v on connection %d; want \"ran next\" on a second", got, err, s.accepted.Load())
	}
}

func TestReconnect(t *testing.T) {
	t.Parallel()
	e := emu{password: "pw"}
	s := startFake(t, func(c *fakeConn) {
		if c.index == 1 {
			// Serve one command, then drop the connection.
			if !e.authSource(c) {
				return
			}
			p, _ := c.read()
			c.send(Packet{ID: p.ID, Body: []byte("one")})
			probe, _ := c.read()
			c.send(Packet{ID: probe.ID}, Packet{ID: probe.ID, Body: []byte{0, 0, 0, 1}})
			return
		}
		e.serve(c)
	})
	var dials atomic.Int32
	var mu sync.Mutex
	var events []string
	opts := &Options{
		// Connections come from DialContext, the first and the new one.
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
		OnReconnect: func(attempt int, err error) {
			mu.Lock()
			defer mu.Unlock()
			events = append(events, fmt.Sprint(attempt, err))
		},
	}
	c, err := Dial(testCtx(t), s.addr(), "pw", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, err := c.Exec(testCtx(t), "a"); err != nil || got != "one" {
		t.Fatalf("first Exec = %q, %v", got, err)
	}
	// The drop may be noticed by this command or before it; either way a
	// later command runs on a new connection.
	var got string
	for range 3 {
		if got, err = c.Exec(testCtx(t), "b"); err == nil {
			break
		}
		if !errors.Is(err, ErrConnClosed) {
			t.Fatalf("err = %v", err)
		}
	}
	if got != "ran b" || s.accepted.Load() != 2 || dials.Load() != 2 {
		t.Fatalf("after reconnect: %q, %v, %d connections, %d dials", got, err, s.accepted.Load(), dials.Load())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(events) != 1 || events[0] != "1 <nil>" {
		t.Fatalf("OnReconnect calls %q, want one for a first attempt that worked", events)
	}
}

// With NoReconnect a dropped connection stays dropped.
func TestNoReconnect(t *testing.T) {
	t.Parallel()
	s := startFake(t, func(c *fakeConn) { (emu{password: "pw"}).authSource(c) })
	c, err := Dial(testCtx(t), s.addr(), "pw", &Options{NoReconnect: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for range 2 {
		if _, err := c.Exec(testCtx(t), "x"); !errors.Is(err, ErrConnClosed) {
			t.Fatalf("err = %v", err)
		}
	}
	if s.accepted.Load() != 1 {
		t.Fatal("client re-dialled with NoReconnect")
	}
}

func TestReconnectBackoffBounded(t *testing.T) {
	t.Parallel()
	c, err := newClient("", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.backoff < time.Second {
		t.Fatalf("initial backoff %v < 1s", c.backoff)
	}
	for range 20 {
		c.backoff = min(2*c.backoff, maxReconnectBackoff)
	}
	if c.backoff != maxReconnectBackoff {
		t.Fatal("backoff not bounded")
	}
}

func TestCommandValidation(t *testing.T) {
	t.Parallel()
	c, _ := dialEmu(t, emu{password: "pw", dialect: DialectMinecraft}, &Options{Dialect: DialectMinecraft})
	for _, cmd := range []string{"", "a\x00b"} {
		if _, err := c.Exec(testCtx(t), cmd); !errors.Is(err, ErrInvalidCommand) {
			t.Fatalf("%q: err = %v", cmd, err)
		}
	}
	if _, err := c.Exec(testCtx(t), strings.Repeat("x", 1447)); !errors.Is(err, ErrCommandTooLong) {
		t.Fatalf("err = %v, want ErrCommandTooLong", err)
	}
	long := "say " + strings.Repeat("x", 1442)
	if got, err := c.Exec(testCtx(t), long); err != nil || got != "ran "+long {
		t.Fatalf("1446-byte command: %q, %v", got, err)
	}
}

func TestMinecraftCommandDelaySerial(t *testing.T) {
	t.Parallel()
	var viol atomic.Int32
	c, _ := dialEmu(t, emu{password: "pw", dialect: DialectMinecraft, mcViolations: &viol},
		&Options{Dialect: DialectMinecraft, Pipeline: true, CommandDelay: 5 * time.Millisecond})
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Go(func() {
			cmd := fmt.Sprint("c", i)
			if got, err := c.Exec(testCtx(t), cmd); err != nil || got != "ran "+cmd {
				t.Errorf("%q %v", got, err)
			}
		})
	}
	wg.Wait()
	if viol.Load() != 0 {
		t.Fatal("coalesced Minecraft requests")
	}
}

// A Minecraft command abandoned before the server read it must not be
// followed at once by the next one: both would land in one read and the
// server would drop the connection.
func TestMinecraftAbandonedNotCoalesced(t *testing.T) {
	t.Parallel()
	var viol atomic.Int32
	// The server reads nothing after the login until the first command
	// has timed out; the client must then not send the second before the
	// server has read the first alone.
	gate := make(chan struct{})
	var opened sync.Once
	open := func() { opened.Do(func() { close(gate) }) }
	t.Cleanup(open)
	c, _ := dialEmu(t, emu{password: "pw", dialect: DialectMinecraft, mcViolations: &viol, gate: gate},
		&Options{Dialect: DialectMinecraft})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := c.Exec(ctx, "first"); !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v", err)
	}
	open()
	if got, err := c.Exec(testCtx(t), "second"); err != nil || got != "ran second" {
		t.Fatalf("Exec = %q, %v", got, err)
	}
	if viol.Load() != 0 {
		t.Fatal("abandoned and next command coalesced")
	}
}

func TestResponseSizeLimit(t *testing.T) {
	t.Parallel()
	c, _ := dialEmu(t, emu{password: "pw", respond: func(string) string { return strings.Repeat("x", 50000) }},
		&Options{MaxResponseSize: 10000})
	if _, err := c.Exec(testCtx(t), "x"); !errors.Is(err, ErrResponseTooLarge) {
		t.Fatalf("err = %v", err)
	}
}

func TestPacketSizeLimit(t *testing.T) {
	t.Parallel()
	c, _ := dialEmu(t, emu{password: "pw", dialect: DialectCS2, respond: func(string) string { return strings.Repeat("x", 9000) }},
		&Options{Dialect: DialectCS2, MaxPacketSize: 8192})
	if _, err := c.Exec(testCtx(t), "x"); !errors.Is(err, ErrPacketTooLarge) || !errors.Is(err, ErrProtocol) {
		t.Fatalf("err = %v", err)
	}
}

func TestClose(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	s := startFake(t, func(c *fakeConn) {
		(emu{password: "pw"}).authSource(c)
		<-release
	})
	defer close(release)
	c, err := Dial(testCtx(t), s.addr(), "pw", nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() {
		_, err := c.Exec(testCtx(t), "hang")
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, ErrClientClosed) {
		t.Fatalf("in-flight Exec err = %v", err)
	}
	if _, err := c.Exec(testCtx(t), "x"); !errors.Is(err, ErrClientClosed) {
		t.Fatalf("Exec after Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestParseDialect(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Dialect{"source": DialectSource, "SRCDS": DialectSource, "cs2": DialectCS2, "Minecraft": DialectMinecraft, "mc": DialectMinecraft} {
		if got, err := ParseDialect(in); err != nil || got != want {
			t.Errorf("ParseDialect(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseDialect("quake"); err == nil {
		t.Error("ParseDialect(quake) succeeded")
	}
	for _, d := range []Dialect{DialectSource, DialectCS2, DialectMinecraft} {
		if got, _ := ParseDialect(d.String()); got != d {
			t.Errorf("round trip of %v", d)
		}
	}
	if Dialect(9).String() != "Dialect(9)" {
		t.Error(Dialect(9).String())
	}
}

func TestLookupProfile(t *testing.T) {
	t.Parallel()
	for _, p := range Profiles() {
		got, err := LookupProfile(strings.ToUpper(p.Name))
		if err != nil || got.Name != p.Name || p.Summary == "" {
			t.Errorf("LookupProfile(%q) = %+v, %v", p.Name, got, err)
		}
	}
	if _, err := LookupProfile("doom"); err == nil {
		t.Error("unknown profile accepted")
	}
	if _, err := Dial(testCtx(t), "127.0.0.1:1", "pw", &Options{Profile: "doom"}); err == nil {
		t.Error("Dial accepted an unknown profile")
	}
}

func benchExec(b *testing.B, d Dialect, out string, pipeline bool) {
	b.ReportAllocs()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	s := &Server{Password: "pw", Dialect: d, Handler: HandlerFunc(func(_ context.Context, w ResponseWriter, _ string) {
		w.WriteString(out)
	})}
	go s.Serve(ln)
	defer s.Close()
	c, err := Dial(context.Background(), ln.Addr().String(), "pw", &Options{Dialect: d, Pipeline: pipeline})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.SetBytes(int64(len(out)))
	b.ResetTimer()
	if pipeline {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := c.Do(context.Background(), "status"); err != nil {
					b.Error(err)
					return
				}
			}
		})
		return
	}
	for b.Loop() {
		if _, err := c.Do(context.Background(), "status"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExecSmall(b *testing.B) {
	for _, d := range []Dialect{DialectSource, DialectMinecraft} {
		b.Run(d.String(), func(b *testing.B) { benchExec(b, d, "hostname: test\nplayers: 3 (16 max)\n", false) })
	}
}

func BenchmarkExecPipelined(b *testing.B) {
	benchExec(b, DialectSource, "hostname: test\nplayers: 3 (16 max)\n", true)
}

func BenchmarkExec1MiB(b *testing.B) {
	out := bigOutput(1 << 20)
	for _, d := range []Dialect{DialectSource, DialectCS2, DialectMinecraft} {
		b.Run(d.String(), func(b *testing.B) { benchExec(b, d, out, false) })
	}
}

// On a serial connection, a command interrupts the idle reader wherever
// it is, even in the middle of an unsolicited packet: that packet still
// reaches Events whole and the answer reaches the command.
func TestSerialIdleReaderInterruptedMidPacket(t *testing.T) {
	t.Parallel()
	chat, _ := Packet{ID: 0, Type: TypeChatValue, Body: []byte("[ChatAll] split across the command")}.AppendBinary(nil)
	half := len(chat) / 2
	sentHalf := make(chan struct{})
	s := startFake(t, func(c *fakeConn) {
		if !(emu{password: "pw"}).authSource(c) {
			return
		}
		c.writeRaw(chat[:half])
		close(sentHalf)
		p, ok := c.read()
		if !ok {
			return
		}
		probe, _ := c.read()
		rest := append([]byte(nil), chat[half:]...)
		for _, q := range []Packet{
			{ID: p.ID, Type: TypeResponseValue, Body: []byte("answer")},
			{ID: probe.ID}, {ID: probe.ID, Body: []byte{0, 0, 0, 1}},
		} {
			rest, _ = q.AppendBinary(rest)
		}
		c.writeRaw(rest)
		drain(c)
	})
	c, err := Dial(testCtx(t), s.addr(), "pw", &Options{Profile: "srcds"})
	if err != nil {
		t.Fatal(err)
	}
	<-sentHalf
	waitIdleReaderInside(t, c)
	got, err := c.Exec(testCtx(t), "cmd")
	if err != nil || got != "answer" {
		t.Fatalf("Exec = %q, %v", got, err)
	}
	select {
	case ev := <-c.Events():
		if ev.Type != TypeChatValue || string(ev.Body) != "[ChatAll] split across the command" {
			t.Fatalf("event = %+v", ev)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the split chat packet never reached Events")
	}
}

// waitIdleReaderInside waits until c's idle reader reads and has read
// part of a packet.
func waitIdleReaderInside(t *testing.T, c *Client) {
	t.Helper()
	c.mu.Lock()
	cn := c.cn
	c.mu.Unlock()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		c.turn.mu.Lock()
		idling := c.turn.idling == cn
		c.turn.mu.Unlock()
		if idling && cn.rd.progress() > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the idle reader never read the half packet")
		}
	}
}

// A serial connection left idle is still read: an unsolicited packet
// reaches Events with no command running, and a dropped connection is
// noticed, so the next command reconnects instead of failing.
func TestSerialIdleConnectionIsRead(t *testing.T) {
	t.Parallel()
	e := emu{password: "pw"}
	gotEvent := make(chan struct{})
	s := startFake(t, func(c *fakeConn) {
		if c.index > 1 {
			e.serve(c)
			return
		}
		if e.authSource(c) {
			c.send(Packet{ID: 0, Type: TypeChatValue, Body: []byte("idle chat")})
			<-gotEvent
		} // then drop the first connection while the client is idle
	})
	c, err := Dial(testCtx(t), s.addr(), "pw", nil)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-c.Events():
		if string(ev.Body) != "idle chat" {
			t.Fatalf("event = %+v", ev)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no event while idle")
	}
	c.mu.Lock()
	first := c.cn
	c.mu.Unlock()
	close(gotEvent)
	select {
	case <-first.dead:
	case <-time.After(10 * time.Second):
		t.Fatal("the dropped connection was never noticed")
	}
	got, err := c.Exec(testCtx(t), "again")
	if err != nil || got != "ran again" {
		t.Fatalf("Exec after the drop = %q, %v", got, err)
	}
}
