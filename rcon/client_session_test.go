package rcon_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gsq-project/gsq/console"
	"github.com/gsq-project/gsq/console/consoletest"
	"github.com/gsq-project/gsq/rcon"
	"github.com/gsq-project/gsq/rcon/rcontest"
)

// The client as a console.Session: its errors, its events, Send, and the
// keep-alive and reconnection it does on its own.

var _ console.Session = (*rcon.Client)(nil)

// The package's errors match the kinds every console's errors match, and
// its timeout is a net.Error that matches os.ErrDeadlineExceeded, as a
// socket deadline does (docs/conventions.md).
func TestErrorsMatchConsoleKinds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ err, kind error }{
		{rcon.ErrAuthFailed, console.ErrAuthFailed},
		{rcon.ErrTimeout, console.ErrTimeout},
		{rcon.ErrClientClosed, console.ErrClosed},
	} {
		if !errors.Is(tc.err, tc.kind) || !errors.Is(tc.err, tc.err) {
			t.Errorf("%v does not match %v", tc.err, tc.kind)
		}
	}
	var ne net.Error
	if !errors.As(rcon.ErrTimeout, &ne) || !ne.Timeout() || !errors.Is(rcon.ErrTimeout, os.ErrDeadlineExceeded) {
		t.Fatal("ErrTimeout is not a net.Error timeout matching os.ErrDeadlineExceeded")
	}
	if errors.As(rcon.ErrAuthFailed, &ne) {
		t.Error("ErrAuthFailed is a net.Error")
	}
	// And so is every error a client returns for a deadline, the login's
	// included, wrapped in an *OpError that names the server.
	bubble(t, func(t *testing.T, n *consoletest.Network) {
		s := script(t, n, rcontest.SRCDS, nil, (*rcontest.Conn).Discard)
		_, err := tryDial(t, n, s, pw, &rcon.Options{Timeout: 50 * time.Millisecond})
		var oe *rcon.OpError
		if !errors.As(err, &oe) || !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) ||
			!errors.Is(err, rcon.ErrTimeout) || !errors.Is(err, console.ErrTimeout) {
			t.Fatalf("login timeout %v is not an *OpError and net.Error timeout", err)
		}
		if want := "rcon: login " + s.Addr().String() + ": no answer to the login within 50ms"; err.Error() != want {
			t.Fatalf("message %q, want %q", err, want)
		}
	})
}

// What the server says unasked goes to Events, typed where the protocol
// says what it is, and never to the command waiting for its answer.
func TestEvents(t *testing.T) {
	t.Parallel()
	bubble(t, func(t *testing.T, n *consoletest.Network) {
		s := script(t, n, rcontest.SRCDS, nil, func(c *rcontest.Conn) {
			if !c.Login() {
				return
			}
			p, _ := c.ReadPacket()
			probe, _ := c.ReadPacket()
			c.Send(append([]rcon.Packet{
				{ID: 0, Type: rcon.TypeChatValue, Body: []byte("[ChatTeam] [Online IDs:EOS: 0002a10186d9414496bf20d22d3860ba steam: 76561198000000001] Alice : gg")},
				{ID: -1, Type: rcon.TypeResponseValue}, // rcon++'s heartbeat
				{ID: p.ID, Type: rcon.TypeResponseValue, Body: []byte("out")},
				{ID: 0, Type: rcon.TypeChatValue, Body: []byte("[Online Ids:EOS: 0002a10186d9414496bf20d22d3860ba steam: 76561198000000001] Alice has possessed admin camera.")},
				{ID: -1, Type: rcon.TypeRustConsole, Body: []byte("console line")},
				{ID: 123456, Type: rcon.TypeResponseValue, Body: []byte("stray")},
			}, mirror(probe.ID)...)...)
			c.ReadPacket()
		})
		c := dialOn(t, n, s, &rcon.Options{Profile: "srcds"})
		mustExec(t, c, "x", "out")
		want := []console.Event{
			{Kind: console.KindChat, Channel: "team", Player: "Alice", PlayerID: "76561198000000001", Text: "gg"},
			{Kind: console.KindHeartbeat},
			{Kind: console.KindAdmin, Text: "[Online Ids:EOS: 0002a10186d9414496bf20d22d3860ba steam: 76561198000000001] Alice has possessed admin camera."},
			{Kind: console.KindLog, Text: "console line"},
			{Kind: console.KindLog, Text: "stray"},
		}
		for _, w := range want {
			e := consoletest.Recv(t, c.Events(), time.Second)
			if e.Kind != w.Kind || e.Text != w.Text || e.Player != w.Player || e.PlayerID != w.PlayerID || e.Channel != w.Channel ||
				e.Raw == nil || e.Time.IsZero() || e.Missed != 0 {
				t.Errorf("event %+v, want %+v", e, w)
			}
		}
		c.Close()
		if _, ok := <-c.Events(); ok {
			t.Fatal("Events not closed by Close")
		}
	})
}

// A reader of Events that falls behind loses events; the session does
// not wait for it, and the next event delivered counts what was lost.
func TestEventsLossCounted(t *testing.T) {
	t.Parallel()
	bubble(t, func(t *testing.T, n *consoletest.Network) {
		s := script(t, n, rcontest.SRCDS, ran, func(c *rcontest.Conn) {
			if !c.Login() {
				return
			}
			for i := 0; ; i++ {
				p, ok := c.ReadPacket()
				if !ok {
					return
				}
				probe, _ := c.ReadPacket()
				var pkts []rcon.Packet
				for j := range 50 {
					pkts = append(pkts, rcon.Packet{Type: rcon.TypeChatValue, Body: fmt.Appendf(nil, "chat %d", 50*i+j)})
				}
				c.Send(append(append(pkts, rcon.Packet{ID: p.ID, Body: []byte("done")}), mirror(probe.ID)...)...)
			}
		})
		c := dialOn(t, n, s, &rcon.Options{EventBuffer: 3, Profile: "srcds"})
		mustExec(t, c, "x", "done")
		for i := range 3 {
			if e := consoletest.Recv(t, c.Events(), time.Second); e.Text != fmt.Sprint("chat ", i) || e.Missed != 0 {
				t.Fatalf("event %+v, want chat %d with none missed", e, i)
			}
		}
		mustExec(t, c, "x", "done")
		if e := consoletest.Recv(t, c.Events(), time.Second); e.Text != "chat 50" || e.Missed != 47 {
			t.Fatalf("event %+v, want chat 50 with 47 missed", e)
		}
	})
}

// A serial connection left idle is still read: an event reaches Events
// with no command running, and a connection the server drops is noticed
// and replaced in the background, with no command to find it.
func TestIdleConnectionReadAndReplaced(t *testing.T) {
	t.Parallel()
	bubble(t, func(t *testing.T, n *consoletest.Network) {
		gotEvent := make(chan struct{})
		s := script(t, n, rcontest.SRCDS, ran, func(c *rcontest.Conn) {
			if c.Index() > 1 {
				c.Serve()
				return
			}
			if c.Login() {
				c.Send(rcon.Packet{Type: rcon.TypeChatValue, Body: []byte("idle chat")})
				<-gotEvent
			} // then drop the first connection while the client is idle
		})
		var mu sync.Mutex
		var attempts []string
		c := dialOn(t, n, s, &rcon.Options{OnReconnect: func(attempt int, err error) {
			mu.Lock()
			defer mu.Unlock()
			attempts = append(attempts, fmt.Sprint(attempt, " ", err))
		}})
		if e := consoletest.Recv(t, c.Events(), time.Minute); e.Text != "idle chat" {
			t.Fatalf("event = %+v", e)
		}
		close(gotEvent)
		time.Sleep(time.Second)
		synctest.Wait()
		mu.Lock()
		if s.Accepted() != 2 || len(attempts) != 1 || attempts[0] != "1 <nil>" {
			t.Fatalf("%d connections, reconnections %q; want the dropped one replaced, a second after it was made", s.Accepted(), attempts)
		}
		mu.Unlock()
		mustExec(t, c, "again", "ran again")
	})
}

// On a serial connection, a command interrupts the idle reader wherever
// it is, even in the middle of an unsolicited packet: that packet still
// reaches Events whole and the answer reaches the command.
func TestIdleReaderInterruptedMidPacket(t *testing.T) {
	t.Parallel()
	bubble(t, func(t *testing.T, n *consoletest.Network) {
		chat, _ := rcon.Packet{Type: rcon.TypeChatValue, Body: []byte("[ChatAll] [SteamID:76561198000000002] Bob : split across the command")}.AppendBinary(nil)
		half := len(chat) / 2
		s := script(t, n, rcontest.SRCDS, nil, func(c *rcontest.Conn) {
			if !c.Login() {
				return
			}
			c.NetConn().Write(chat[:half])
			p, ok := c.ReadPacket()
			if !ok {
				return
			}
			probe, _ := c.ReadPacket()
			rest := append([]byte(nil), chat[half:]...)
			for _, q := range append([]rcon.Packet{{ID: p.ID, Body: []byte("answer")}}, mirror(probe.ID)...) {
				rest, _ = q.AppendBinary(rest)
			}
			c.NetConn().Write(rest)
			c.ReadPacket()
		})
		c := dialOn(t, n, s, &rcon.Options{Profile: "srcds"})
		time.Sleep(time.Second) // the idle reader takes the connection
		synctest.Wait()
		if !rcon.IdleReaderInside(c) {
			t.Fatal("the idle reader is not inside the half packet")
		}
		mustExec(t, c, "cmd", "answer")
		if e := consoletest.Recv(t, c.Events(), time.Second); e.Kind != console.KindChat || e.Text != "split across the command" || e.Player != "Bob" {
			t.Fatalf("event = %+v", e)
		}
	})
}

// Send writes a command and returns, without waiting for its answer;
// the answer, should one come, never reaches the next command, also on a
// server whose replies all carry the same id, and a server that must not
// get two packets in one read never does.
func TestSend(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		profile rcontest.Profile
		opts    rcon.Options
	}{
		{rcontest.SRCDS, rcon.Options{}},
		{rcontest.SRCDS, rcon.Options{Pipeline: true}},
		{rcontest.Palworld, rcon.Options{}},
		{rcontest.Minecraft, rcon.Options{Dialect: rcon.DialectMinecraft}},
		{rcontest.RustLegacy, rcon.Options{Profile: "rust-legacy"}},
	} {
		t.Run(fmt.Sprintf("%v/pipeline=%v", tc.profile, tc.opts.Pipeline), func(t *testing.T) {
			t.Parallel()
			bubble(t, func(t *testing.T, n *consoletest.Network) {
				var mu sync.Mutex
				var ranCmds []string
				h := rcon.HandlerFunc(func(_ context.Context, w rcon.ResponseWriter, cmd string) {
					if cmd == "" {
						return
					}
					mu.Lock()
					ranCmds = append(ranCmds, cmd)
					mu.Unlock()
					if cmd == "save" {
						time.Sleep(time.Second) // a slow command
					}
					w.WriteString("ran " + cmd)
				})
				s := fake(t, n, tc.profile, h, nil)
				c := dialOn(t, n, s, &tc.opts)
				mustExec(t, c, "hello", "ran hello") // legacy Rust is asked for UTF-8 first
				start := time.Now()
				if err := c.Send(bounded(t), "save"); err != nil || time.Since(start) != 0 {
					t.Fatalf("Send = %v after %v, want nil at once", err, time.Since(start))
				}
				mustExec(t, c, "next", "ran next")
				if time.Since(start) < time.Second {
					t.Errorf("the next command was answered before the one sent (after %v)", time.Since(start))
				}
				mu.Lock()
				defer mu.Unlock()
				if strings.Join(ranCmds, ",") != "hello,save,next" || s.Hangups() != 0 {
					t.Errorf("the server ran %q and hung up %d times", ranCmds, s.Hangups())
				}
			})
		})
	}
	t.Run("caller gone first", func(t *testing.T) {
		t.Parallel()
		bubble(t, func(t *testing.T, n *consoletest.Network) {
			release := make(chan struct{})
			h := rcon.HandlerFunc(func(_ context.Context, w rcon.ResponseWriter, cmd string) {
				if cmd == "hold" {
					<-release
				}
				w.WriteString("ran " + cmd)
			})
			s := fake(t, n, rcontest.SRCDS, h, nil)
			c := dialOn(t, n, s, &rcon.Options{Profile: "srcds"})
			go c.Exec(bounded(t), "hold") // holds the connection
			synctest.Wait()
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			if err := c.Send(ctx, "never"); !errors.Is(err, rcon.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Send waiting for its turn past its deadline = %v", err)
			}
			close(release)
			mustExec(t, c, "after", "ran after")
			if got := s.Received(); got != 5 { // the login, then hold and after with their probes
				t.Errorf("the server received %d requests, want 5: the command given up was written", got)
			}
			c.Close()
			if err := c.Send(bounded(t), "closed"); !errors.Is(err, rcon.ErrClientClosed) || !errors.Is(err, console.ErrClosed) {
				t.Errorf("Send after Close = %v", err)
			}
		})
	})
}

func TestReconnect(t *testing.T) {
	t.Parallel()
	bubble(t, func(t *testing.T, n *consoletest.Network) {
		// Serve one command, then drop the connection.
		s := script(t, n, rcontest.SRCDS, ran, answerOneThen("one", func(*rcontest.Conn) {}))
		var mu sync.Mutex
		var dials int
		var attempts []string
		opts := &rcon.Options{
			// Connections come from DialContext, the first and the new one.
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				mu.Lock()
				dials++
				mu.Unlock()
				return n.DialContext(ctx, network, addr)
			},
			OnReconnect: func(attempt int, err error) {
				mu.Lock()
				defer mu.Unlock()
				attempts = append(attempts, fmt.Sprint(attempt, " ", err))
			},
		}
		c, err := rcon.Dial(bounded(t), s.Addr().String(), pw, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		mustExec(t, c, "a", "one")
		// The drop may be noticed by this command or before it; either way
		// a later command runs on a new connection, at once: the one lost
		// had served.
		start := time.Now()
		var got string
		for range 3 {
			if got, err = c.Exec(bounded(t), "b"); err == nil {
				break
			}
			if !errors.Is(err, rcon.ErrConnClosed) {
				t.Fatalf("err = %v", err)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if got != "ran b" || s.Accepted() != 2 || dials != 2 || time.Since(start) != 0 {
			t.Fatalf("after the drop: %q, %v, %d connections, %d dials, after %v", got, err, s.Accepted(), dials, time.Since(start))
		}
		if len(attempts) != 1 || attempts[0] != "1 <nil>" {
			t.Fatalf("OnReconnect calls %q, want one for a first attempt that worked", attempts)
		}
	})
}

// A server that closes every connection as soon as the login is done is
// dialled again ever more slowly: once a second at first, then doubling
// up to 30 s, as servers ban addresses that log in again and again.
func TestReconnectBacksOff(t *testing.T) {
	t.Parallel()
	bubble(t, func(t *testing.T, n *consoletest.Network) {
		s := script(t, n, rcontest.SRCDS, nil, func(c *rcontest.Conn) { c.Login() })
		start := time.Now()
		var mu sync.Mutex
		var at []time.Duration
		dialOn(t, n, s, &rcon.Options{OnReconnect: func(int, error) {
			mu.Lock()
			defer mu.Unlock()
			at = append(at, time.Since(start))
		}})
		time.Sleep(100 * time.Second)
		mu.Lock()
		defer mu.Unlock()
		want := []time.Duration{1, 3, 7, 15, 31, 61, 91}
		if len(at) != len(want) {
			t.Fatalf("reconnections at %v, want at %v s", at, want)
		}
		for i, w := range want {
			if at[i] != w*time.Second {
				t.Fatalf("reconnections at %v, want at %v s", at, want)
			}
		}
	})
}

// With NoReconnect a dropped connection stays dropped.
func TestNoReconnect(t *testing.T) {
	t.Parallel()
	bubble(t, func(t *testing.T, n *consoletest.Network) {
		s := script(t, n, rcontest.SRCDS, nil, func(c *rcontest.Conn) { c.Login() })
		c := dialOn(t, n, s, &rcon.Options{NoReconnect: true})
		for range 2 {
			if _, err := c.Exec(bounded(t), "x"); !errors.Is(err, rcon.ErrConnClosed) {
				t.Fatalf("err = %v", err)
			}
		}
		time.Sleep(time.Minute)
		if s.Accepted() != 1 {
			t.Fatal("the client dialled again with NoReconnect")
		}
	})
}

// KeepAlive probes an idle connection, and the probe's reply never
// reaches a command or Events. On Minecraft the next command waits for
// the probe's reply, so the server never gets two packets in one read.
func TestKeepAlive(t *testing.T) {
	t.Parallel()
	for _, d := range []struct {
		dialect rcon.Dialect
		profile rcontest.Profile
	}{{rcon.DialectSource, rcontest.SRCDS}, {rcon.DialectMinecraft, rcontest.Minecraft}} {
		t.Run(d.dialect.String(), func(t *testing.T) {
			t.Parallel()
			bubble(t, func(t *testing.T, n *consoletest.Network) {
				var mu sync.Mutex
				var probes []time.Duration
				start := time.Now()
				debug := func(dir string, _ netip.AddrPort, b []byte) {
					// A keep-alive is an empty probe: a RESPONSE_VALUE, or an
					// empty command on Minecraft.
					if p, _, err := rcon.ParsePacket(b, 0); err == nil && dir == "send" && len(p.Body) == 0 && p.Type != rcon.TypeAuth {
						mu.Lock()
						probes = append(probes, time.Since(start))
						mu.Unlock()
					}
				}
				s := fake(t, n, d.profile, ran, nil)
				c := dialOn(t, n, s, &rcon.Options{Dialect: d.dialect, KeepAlive: 20 * time.Millisecond, Debug: debug})
				time.Sleep(50 * time.Millisecond)
				mu.Lock()
				if len(probes) != 2 || probes[0] != 20*time.Millisecond || probes[1] != 40*time.Millisecond {
					t.Errorf("keep-alives at %v, want at 20ms and 40ms", probes)
				}
				mu.Unlock()
				for range 5 {
					mustExec(t, c, "x", "ran x")
					// The next command follows a keep-alive at once, before or
					// while its reply comes.
					time.Sleep(20 * time.Millisecond)
				}
				consoletest.NoEvent(t, c.Events())
				if s.Hangups() != 0 {
					t.Errorf("the server hung up %d times", s.Hangups())
				}
			})
		})
	}
}

// A keep-alive notices a peer that stopped answering: once the server
// has shown it answers probes, a keep-alive unanswered marks the
// connection lost, and it is replaced before the next command needs it.
func TestKeepAliveNoticesSilentPeer(t *testing.T) {
	t.Parallel()
	bubble(t, func(t *testing.T, n *consoletest.Network) {
		// Answer one command, with its probe, then go silent with the
		// connection open, as a peer that vanished does.
		s := script(t, n, rcontest.SRCDS, ran, answerOneThen("ran one", (*rcontest.Conn).Discard))
		c := dialOn(t, n, s, &rcon.Options{KeepAlive: 30 * time.Millisecond})
		mustExec(t, c, "one", "ran one")
		// The keep-alive goes out after 30 ms idle, and its reply is given
		// up after the probe wait, 250 ms.
		time.Sleep(30*time.Millisecond + rcon.ProbeWait + time.Millisecond)
		synctest.Wait()
		if s.Accepted() != 2 {
			t.Fatalf("%d connections: the silent peer was not replaced", s.Accepted())
		}
		mustExec(t, c, "two", "ran two")
	})
}

func TestClose(t *testing.T) {
	t.Parallel()
	bubble(t, func(t *testing.T, n *consoletest.Network) {
		s := script(t, n, rcontest.SRCDS, nil, func(c *rcontest.Conn) {
			if c.Login() {
				c.Discard()
			}
		})
		c := dialOn(t, n, s, nil)
		done := make(chan error)
		go func() {
			_, err := c.Exec(bounded(t), "hang")
			done <- err
		}()
		synctest.Wait()
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if err := <-done; !errors.Is(err, rcon.ErrClientClosed) || !errors.Is(err, console.ErrClosed) {
			t.Fatalf("in-flight Exec err = %v", err)
		}
		if _, err := c.Exec(bounded(t), "x"); !errors.Is(err, rcon.ErrClientClosed) {
			t.Fatalf("Exec after Close: %v", err)
		}
		if err := c.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
		if _, ok := <-c.Events(); ok {
			t.Fatal("Events open after Close")
		}
	})
}

// No Debug hook ever sees the password: the login packet is shown with
// each byte of the password replaced by '*', on a first login, a wrong
// one, and a reconnection.
func TestDebugNeverSeesPassword(t *testing.T) {
	t.Parallel()
	bubble(t, func(t *testing.T, n *consoletest.Network) {
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
			if p, _, err := rcon.ParsePacket(b, 0); err == nil && dir == "send" && p.Type == rcon.TypeAuth {
				logins++
				if len(p.Body) == 0 || strings.Trim(string(p.Body), "*") != "" {
					t.Errorf("login body shown as %q, want asterisks", p.Body)
				}
			}
		}
		s := fake(t, n, rcontest.SRCDS, ran, func(s *rcontest.Server) {
			s.Password = password
			s.Script = func(c *rcontest.Conn) {
				if c.Index() == 2 {
					c.Login()
					return // drop the second connection after its login
				}
				c.Serve()
			}
		})
		if _, err := tryDial(t, n, s, "wrong", &rcon.Options{Debug: debug}); err == nil {
			t.Fatal("a wrong password logged in")
		}
		c, err := tryDial(t, n, s, password, &rcon.Options{Debug: debug})
		if err != nil {
			t.Fatal(err)
		}
		// The second connection drops; it is replaced.
		time.Sleep(time.Minute)
		mustExec(t, c, "x", "ran x")
		mu.Lock()
		defer mu.Unlock()
		if logins != 3 || s.Accepted() != 3 {
			t.Fatalf("Debug saw %d logins on %d connections, want 3 (wrong, first, reconnection)", logins, s.Accepted())
		}
	})
}
