package battleye_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gsq-project/gsq/battleye"
	"github.com/gsq-project/gsq/battleye/betest"
	"github.com/gsq-project/gsq/console"
	"github.com/gsq-project/gsq/console/consoletest"
)

// bubble runs f in a synctest bubble against a fake on an in-memory
// network, where the hours the timers count pass at once.
func bubble(t *testing.T, p betest.Profile, faults betest.Faults, f func(t *testing.T, s *betest.Server, opts battleye.Options)) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		var n consoletest.Network
		s := betest.NewUnstartedServer(p, "secret", &betest.SimHandler{Players: players})
		s.PacketConn.Close()
		s.PacketConn = n.ListenPacket()
		s.Faults = faults
		s.Start()
		defer s.Close()
		opts := battleye.Options{DialContext: n.DialContext}
		f(t, s, opts)
	})
}

func dialIn(t *testing.T, s *betest.Server, opts battleye.Options) *battleye.Client {
	t.Helper()
	c, err := battleye.Dial(context.Background(), s.Addr().String(), "secret", &opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// An hour with a caller that blocks for 60 s between commands: the
// keep-alive, on its own timer, keeps the session logged in throughout.
func TestHourLongSessionStaysLoggedIn(t *testing.T) {
	t.Parallel()
	bubble(t, betest.DayZ, betest.Faults{}, func(t *testing.T, s *betest.Server, opts battleye.Options) {
		c := dialIn(t, s, opts)
		defer c.Close()
		start := time.Now()
		for time.Since(start) < time.Hour {
			if _, err := c.Exec(context.Background(), "players"); err != nil {
				t.Fatalf("after %v: %v", time.Since(start), err)
			}
			time.Sleep(60 * time.Second) // the caller is busy
		}
		if c.Logins() != 1 || s.BE.Logins() != 1 {
			t.Errorf("logins: client %d, server %d; the session dropped", c.Logins(), s.BE.Logins())
		}
		sent := 0
		for _, n := range s.Seqs() {
			sent += n
		}
		// 60 commands, and a keep-alive 30 s into each 60 s pause.
		if sent < 110 {
			t.Errorf("%d command packets in an hour: keep-alives missing", sent)
		}
	})
}

// Without keep-alives the server forgets the client after 45 s; the next
// command gets no answer, the client finds out and logs in again.
func TestIdleDropThenLoginAgain(t *testing.T) {
	t.Parallel()
	bubble(t, betest.DayZ, betest.Faults{}, func(t *testing.T, s *betest.Server, opts battleye.Options) {
		opts.KeepAlive = -1
		c := dialIn(t, s, opts)
		defer c.Close()
		time.Sleep(46 * time.Second)
		if n := s.BE.Clients(); n != 0 {
			t.Fatalf("%d clients after 46 s idle, want 0", n)
		}
		if _, err := c.Exec(context.Background(), "players"); !errors.Is(err, battleye.ErrTimeout) {
			t.Fatalf("command to a server that forgot us: %v", err)
		}
		time.Sleep(10 * time.Second) // the check (5 s) and the backoff (1 s)
		if c.Logins() != 2 {
			t.Fatalf("logins %d, want 2", c.Logins())
		}
		if _, err := c.Exec(context.Background(), "players"); err != nil {
			t.Fatal(err)
		}
	})
}

func TestSequenceWrapsPast256(t *testing.T) {
	t.Parallel()
	bubble(t, betest.DayZ, betest.Faults{}, func(t *testing.T, s *betest.Server, opts battleye.Options) {
		c := dialIn(t, s, opts)
		defer c.Close()
		for i := range 600 {
			if got, err := c.Exec(context.Background(), "version"); err != nil || got != "2.240" {
				t.Fatalf("command %d: %q, %v", i, got, err)
			}
		}
		seqs := s.Seqs()
		if len(seqs) != 256 || seqs[0] < 2 || seqs[255] < 2 {
			t.Errorf("%d sequence numbers used, 0 %d times, 255 %d times", len(seqs), seqs[0], seqs[255])
		}
	})
}

// Arma Reforger acknowledges with nothing and answers a second later in
// server messages; the client finds out and collects them, while chat
// still goes to Events.
func TestReforgerDelayedOutput(t *testing.T) {
	t.Parallel()
	bubble(t, betest.Reforger, betest.Faults{AsyncDelay: time.Second}, func(t *testing.T, s *betest.Server, opts battleye.Options) {
		c := dialIn(t, s, opts)
		defer c.Close()
		r, err := c.Do(context.Background(), "players")
		if err != nil {
			t.Fatal(err)
		}
		if !r.Async || c.Mode() != battleye.ModeReforger {
			t.Errorf("Async %v, Mode %v", r.Async, c.Mode())
		}
		ps, err := battleye.ParsePlayers(r.Text())
		if err != nil || len(ps) != 2 || !strings.HasPrefix(r.Text(), "Players on server:") {
			t.Fatalf("players over Reforger: %+v, %v\n%s", ps, err, r.Text())
		}
		if err := c.Send(context.Background(), "say -1 hi"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * time.Second)
		e := <-c.Events()
		if e.Kind != console.KindChat {
			t.Errorf("event %+v", e)
		}
		// A command with no output: an empty answer once the wait passed.
		if out, err := c.Exec(context.Background(), "echo"); err != nil || out != "" {
			t.Errorf("empty Reforger answer: %q, %v", out, err)
		}
	})
}

// A server still loading is silent: a short login fails with
// ErrNoResponse, a longer one gets in once the server answers.
func TestBootingServer(t *testing.T) {
	t.Parallel()
	bubble(t, betest.DayZ, betest.Faults{BootDelay: 20 * time.Second}, func(t *testing.T, s *betest.Server, opts battleye.Options) {
		_, err := battleye.Dial(context.Background(), s.Addr().String(), "secret", &opts)
		if !errors.Is(err, battleye.ErrNoResponse) || errors.Is(err, battleye.ErrAuthFailed) {
			t.Fatalf("booting: %v", err)
		}
		opts.Timeout = time.Minute
		c := dialIn(t, s, opts)
		c.Close()
	})
}

// A client that never acknowledges is forgotten after 5 re-sends over
// 10 s.
func TestServerForgetsDeafClient(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var n consoletest.Network
		pc := n.ListenPacket()
		srv := &battleye.Server{Password: "pw"}
		go srv.Serve(pc)
		defer srv.Shutdown(context.Background())
		c := n.DialUDP(pc.AddrPort())
		login, _ := battleye.Packet{Type: battleye.TypeLogin, Data: []byte("pw")}.AppendBinary(nil)
		c.Write(login)
		buf := make([]byte, 512)
		c.Read(buf)
		srv.Broadcast("hello")
		got := 0
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		for {
			k, err := c.Read(buf)
			if err != nil {
				break
			}
			if p, _ := battleye.ParsePacket(buf[:k]); p.Type == battleye.TypeMessage && string(p.Data) == "hello" {
				got++
			}
		}
		if got != 6 || srv.Clients() != 0 {
			t.Errorf("message sent %d times (want 1 and 5 re-sends), %d clients left", got, srv.Clients())
		}
	})
}

// A reader that falls behind loses events, counted on the next one; the
// session goes on.
func TestSlowEventReaderLosesCountedEvents(t *testing.T) {
	t.Parallel()
	bubble(t, betest.DayZ, betest.Faults{}, func(t *testing.T, s *betest.Server, opts battleye.Options) {
		opts.EventBuffer = 4
		c := dialIn(t, s, opts)
		defer c.Close()
		for range 20 {
			s.Broadcast("Player #1 Ann disconnected")
		}
		synctest.Wait()
		for range 4 {
			if e := <-c.Events(); e.Kind != console.KindLeave || e.Player != "Ann" || e.PlayerID != "1" {
				t.Fatalf("event %+v", e)
			}
		}
		s.Broadcast("Player #2 Bob (192.0.2.1:2304) connected")
		synctest.Wait()
		if e := <-c.Events(); e.Missed != 16 || e.Kind != console.KindJoin || e.Player != "Bob" {
			t.Errorf("event after the gap: %+v, want a join with Missed 16", e)
		}
		if _, err := c.Exec(context.Background(), "version"); err != nil {
			t.Fatal(err)
		}
	})
}
