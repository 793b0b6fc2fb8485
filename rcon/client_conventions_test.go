package rcon

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
	"testing"
	"time"
)

// The package's timeout is a net.Error that matches os.ErrDeadlineExceeded,
// as a socket deadline does (docs/conventions.md).
func TestTimeoutIsNetError(t *testing.T) {
	t.Parallel()
	var ne net.Error
	if !errors.As(ErrTimeout, &ne) || !ne.Timeout() {
		t.Fatal("ErrTimeout is not a net.Error with Timeout() true")
	}
	if !errors.Is(ErrTimeout, os.ErrDeadlineExceeded) {
		t.Fatal("ErrTimeout does not match os.ErrDeadlineExceeded")
	}
	// And so is every error a client returns for a deadline: the login's
	// and a command's, wrapped in an *OpError.
	s := startFake(t, drain)
	_, err := Dial(context.Background(), s.addr(), "pw", &Options{Timeout: 50 * time.Millisecond})
	var oe *OpError
	if !errors.As(err, &oe) || !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) || !errors.Is(err, ErrTimeout) {
		t.Fatalf("login timeout %v is not an *OpError and net.Error timeout", err)
	}
	if !strings.HasPrefix(err.Error(), "rcon: login "+s.addr()+": ") {
		t.Fatalf("message %q does not name the operation and the server", err)
	}
}

// No Debug hook ever sees the password: the login packet is shown with
// each byte of the password replaced by '*', on a first login, a wrong
// one, and a reconnection.
func TestDebugNeverSeesPassword(t *testing.T) {
	t.Parallel()
	const password = "s3cr3t-Pw"
	var mu sync.Mutex
	var logins int
	debug := func(dir string, peer netip.AddrPort, b []byte) {
		mu.Lock()
		defer mu.Unlock()
		if bytes.Contains(b, []byte(password)) || bytes.Contains(b, []byte("s3cr3t")) {
			t.Errorf("Debug(%s) saw the password: %q", dir, b)
		}
		if !peer.IsValid() {
			t.Errorf("Debug(%s) got no peer address", dir)
		}
		if p, _, err := ParsePacket(b, 0); err == nil && dir == "send" && p.Type == TypeAuth {
			logins++
			if len(p.Body) == 0 || strings.Trim(string(p.Body), "*") != "" {
				t.Errorf("login body shown as %q, want asterisks", p.Body)
			}
		}
	}
	e := emu{password: password}
	s := startFake(t, func(c *fakeConn) {
		if c.index == 2 {
			e.authSource(c)
			return // drop the second connection after its login
		}
		e.serve(c)
	})
	if _, err := Dial(testCtx(t), s.addr(), "wrong", &Options{Debug: debug}); err == nil {
		t.Fatal("a wrong password logged in")
	}
	c, err := Dial(testCtx(t), s.addr(), password, &Options{Debug: debug})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The second connection drops; the command after reconnects.
	for i := 0; i < 3; i++ {
		if _, err := c.Exec(testCtx(t), "x"); err == nil && s.accepted.Load() == 3 {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if logins < 3 {
		t.Fatalf("Debug saw %d logins, want 3 (wrong, first, reconnection)", logins)
	}
}

// A server that streams packets of one id without end: the command
// fails with ErrResponseTooLarge once its output passes the limit, and
// the output takes no more memory than the limit (its buffer grows to
// the limit, not past it, and is the only copy).
func TestResponseMemoryBounded(t *testing.T) {
	// Not parallel: it measures the process's allocations.
	const limit = 8 << 20
	body := bytes.Repeat([]byte("x"), 4086)
	s := startFake(t, func(c *fakeConn) {
		if !(emu{password: "pw"}).authSource(c) {
			return
		}
		p, ok := c.read()
		if !ok {
			return
		}
		pkt, _ := Packet{ID: p.ID, Type: TypeResponseValue, Body: body}.AppendBinary(nil)
		burst := bytes.Repeat(pkt, 64)
		for c.writeRaw(burst) {
		}
	})
	c, err := Dial(testCtx(t), s.addr(), "pw", &Options{MaxResponseSize: limit, Profile: "srcds"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r, err := c.Do(testCtx(t), "flood")
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrResponseTooLarge) {
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
}

// A keep-alive notices a peer that stopped answering: once the server
// has shown it answers probes, a keep-alive unanswered marks the
// connection lost, and the next command reconnects first, so it is not
// lost on a dead connection.
func TestKeepAliveNoticesSilentPeer(t *testing.T) {
	t.Parallel()
	e := emu{password: "pw"}
	silent := make(chan struct{})
	s := startFake(t, func(c *fakeConn) {
		if c.index > 1 {
			e.serve(c)
			return
		}
		if !e.authSource(c) {
			return
		}
		// Answer one command, with its probe, then go silent with the
		// connection open, as a peer that vanished does.
		p, _ := c.read()
		c.send(Packet{ID: p.ID, Body: []byte("ran " + string(p.Body))})
		probe, _ := c.read()
		e.mirror(c, probe.ID)
		close(silent)
		drain(c)
	})
	c, err := Dial(testCtx(t), s.addr(), "pw", &Options{KeepAlive: 30 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, err := c.Exec(testCtx(t), "one"); err != nil || got != "ran one" {
		t.Fatalf("Exec = %q, %v", got, err)
	}
	<-silent
	c.mu.Lock()
	first := c.cn
	c.mu.Unlock()
	select {
	case <-first.dead:
	case <-time.After(10 * time.Second):
		t.Fatal("the keep-alive never noticed the silent peer")
	}
	if got, err := c.Exec(testCtx(t), "two"); err != nil || got != "ran two" || s.accepted.Load() != 2 {
		t.Fatalf("Exec after the loss = %q, %v (%d connections)", got, err, s.accepted.Load())
	}
}

// A server that is only slow is not taken for one that ignores probes:
// a stall after a full SRCDS fragment is waited out, and a probe reply
// that comes after the client gave up on it teaches that probes are
// answered, so the next long answer comes whole. The fake servers stall
// on a timer, which is the latency they simulate.
func TestSlowServerNotTakenForSilent(t *testing.T) {
	t.Parallel()
	stall := 2 * minProbeWait
	out := strings.Repeat("a", 3*DefaultSourceSplitSize+100)
	e := emu{password: "pw", respond: func(string) string { return out }}
	run := func(t *testing.T, handle func(c *fakeConn), want ...string) {
		t.Helper()
		s := startFake(t, handle)
		var log logLines
		c, err := Dial(testCtx(t), s.addr(), "pw", &Options{Logf: log.add})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		for i, w := range want {
			got, err := c.Exec(testCtx(t), "x")
			if err != nil || got != w {
				t.Fatalf("command %d: %d bytes, %v; want %d\n%s", i, len(got), err, len(w), &log)
			}
		}
	}
	t.Run("stall after a full fragment", func(t *testing.T) {
		t.Parallel()
		run(t, func(c *fakeConn) {
			if !e.authSource(c) {
				return
			}
			p, _ := c.read()
			pkts := e.sourceReply(p.ID, out)
			c.send(pkts[0])
			<-time.After(stall)
			c.send(pkts[1:]...)
			probe, _ := c.read()
			e.mirror(c, probe.ID)
			e.serveCommands(c)
		}, out, out)
	})
	t.Run("late probe reply", func(t *testing.T) {
		t.Parallel()
		run(t, func(c *fakeConn) {
			if !e.authSource(c) {
				return
			}
			p, _ := c.read()
			c.send(Packet{ID: p.ID, Body: []byte("short")})
			probe, _ := c.read()
			<-time.After(stall) // the client gives up on the probe meanwhile
			e.mirror(c, probe.ID)
			e.serveCommands(c)
		}, "short", out, out)
	})
}

// logLines collects Logf lines.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) add(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// A command finds the connection closed by the server since it was last
// read, and dials again before it goes out: it is not lost on the dead
// connection, though no reader had seen the close yet; also when a packet
// waits in the socket before the close (an unsolicited line the idle
// reader has not read yet): the command reads it first.
func TestReconnectFirstWhenPeerClosed(t *testing.T) {
	t.Parallel()
	for _, behindData := range []bool{false, true} {
		t.Run(fmt.Sprintf("behind data %v", behindData), func(t *testing.T) {
			t.Parallel()
			reconnectFirst(t, behindData)
		})
	}
}

func reconnectFirst(t *testing.T, behindData bool) {
	e := emu{password: "pw"}
	answered, closed := make(chan struct{}), make(chan struct{})
	s := startFake(t, func(c *fakeConn) {
		if c.index > 1 {
			e.serve(c)
			return
		}
		if !e.authSource(c) {
			return
		}
		p, _ := c.read()
		c.send(Packet{ID: p.ID, Body: []byte("one")})
		probe, _ := c.read()
		e.mirror(c, probe.ID)
		if behindData {
			<-answered // the client has read the answer: what follows stays in the socket
			c.send(Packet{ID: -1, Type: TypeResponseValue, Body: []byte("server shutting down")})
		}
		c.nc.Close()
		close(closed)
	})
	c, err := Dial(testCtx(t), s.addr(), "pw", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, err := c.Exec(testCtx(t), "a"); err != nil || got != "one" {
		t.Fatalf("Exec = %q, %v", got, err)
	}
	close(answered)
	<-closed
	// The connection went unread for longer than peekAfter, and the idle
	// reader has not taken it yet (idleReadDelay is longer).
	c.turn.lastEnd.Store(time.Now().Add(-2 * peekAfter).UnixNano())
	if got, err := c.Exec(testCtx(t), "b"); err != nil || got != "ran b" || s.accepted.Load() != 2 {
		t.Fatalf("Exec after the close = %q, %v on connection %d", got, err, s.accepted.Load())
	}
}
