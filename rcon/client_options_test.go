package rcon

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// With MaxInFlight, a pipelined client never has more commands out than
// allowed, however many goroutines call Exec.
func TestMaxInFlight(t *testing.T) {
	t.Parallel()
	var outstanding, most atomic.Int32
	s := startFake(t, func(c *fakeConn) {
		if !(emu{password: "pw"}).authSource(c) {
			return
		}
		var wmu sync.Mutex
		for {
			cmd, ok := c.read()
			if !ok {
				return
			}
			probe, ok := c.read()
			if !ok {
				return
			}
			n := outstanding.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			go func() {
				time.Sleep(5 * time.Millisecond)
				outstanding.Add(-1)
				wmu.Lock()
				defer wmu.Unlock()
				c.send(Packet{ID: cmd.ID, Type: TypeResponseValue, Body: []byte("ran " + string(cmd.Body))},
					Packet{ID: probe.ID}, Packet{ID: probe.ID, Body: []byte{0, 0, 0, 1}})
			}()
		}
	})
	c, err := Dial(testCtx(t), s.addr(), "pw", &Options{Pipeline: true, MaxInFlight: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 12)
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := strings.Repeat("c", i+1)
			if got, err := c.Exec(testCtx(t), cmd); err != nil || got != "ran "+cmd {
				errs <- errors.New(got + ": " + errString(err))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if m := most.Load(); m < 1 || m > 2 {
		t.Errorf("the server saw %d commands out at once, want 1 or 2", m)
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// A server whose replies, the login's included, carry id 0 or 42 is
// recognised from the login reply; LooseIDs accepts such replies in
// advance. Either way they go to the one command in flight.
func TestFixedReplyIDs(t *testing.T) {
	t.Parallel()
	for _, id := range []int32{0, 42} {
		for _, loose := range []bool{false, true} {
			t.Run(fmt.Sprintf("id=%d/loose=%v", id, loose), func(t *testing.T) {
				t.Parallel()
				e := emu{password: "pw", replyID: &id, ignoreProbe: true}
				c, _ := dialEmu(t, e, &Options{LooseIDs: loose, Pipeline: true})
				if c.pipeline {
					t.Fatal("pipelining with fixed reply ids")
				}
				for i := range 3 {
					if got, err := c.Exec(testCtx(t), "x"); err != nil || got != "ran x" {
						t.Fatalf("run %d: Exec = %q, %v", i, got, err)
					}
				}
			})
		}
	}
}

// KeepAlive probes an idle connection, and the probe's reply never
// reaches a command or Events. On Minecraft the next command waits for
// the probe's reply, so the server never gets two packets in one read.
func TestKeepAlive(t *testing.T) {
	t.Parallel()
	for _, d := range []Dialect{DialectSource, DialectMinecraft} {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			var violations atomic.Int32
			e := emu{password: "pw", dialect: d, mcViolations: &violations}
			s := startFake(t, e.serve)
			probes := make(chan struct{}, 64)
			debug := func(dir string, _ netip.AddrPort, b []byte) {
				// A keep-alive is an empty probe: a RESPONSE_VALUE, or an
				// empty command on Minecraft.
				if p, _, err := ParsePacket(b, 0); err == nil && dir == "send" && len(p.Body) == 0 && p.Type != TypeAuth {
					select {
					case probes <- struct{}{}:
					default:
					}
				}
			}
			c, err := Dial(testCtx(t), s.addr(), "pw", &Options{Dialect: d, KeepAlive: 20 * time.Millisecond, Debug: debug})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for range 2 {
				select {
				case <-probes:
				case <-time.After(10 * time.Second):
					t.Fatal("no keep-alive probe on an idle connection")
				}
			}
			for i := range 5 {
				if got, err := c.Exec(testCtx(t), "x"); err != nil || got != "ran x" {
					t.Fatalf("Exec %d = %q, %v", i, got, err)
				}
				// The next command follows a keep-alive at once, before or
				// while its reply comes.
				select {
				case <-probes:
				case <-time.After(10 * time.Second):
					t.Fatal("no keep-alive probe after a command")
				}
			}
			select {
			case ev := <-c.Events():
				t.Fatalf("a keep-alive reply leaked to Events: %+v", ev)
			default:
			}
			if n := violations.Load(); n != 0 {
				t.Errorf("the Minecraft server got %d reads that were not one whole packet", n)
			}
		})
	}
}

// Debug sees every packet both ways, login included.
func TestDebugHook(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var sent, recv []Packet
	debug := func(dir string, _ netip.AddrPort, b []byte) {
		p, n, err := ParsePacket(b, 0)
		if err != nil || n != len(b) {
			t.Errorf("%s: Debug got %d bytes that are not one packet: %v", dir, len(b), err)
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
	c, _ := dialEmu(t, emu{password: "pw"}, &Options{Debug: debug})
	if got, err := c.Exec(testCtx(t), "status"); err != nil || got != "ran status" {
		t.Fatalf("Exec = %q, %v", got, err)
	}
	mu.Lock()
	defer mu.Unlock()
	// Sent: login, command, probe. Received: empty packet and login
	// answer, the output, the probe's mirror (its extra packet may come
	// later).
	if len(sent) != 3 || sent[0].Type != TypeAuth || string(sent[1].Body) != "status" || sent[2].ID != sent[1].ID+1 {
		t.Errorf("sent %+v", sent)
	}
	if string(sent[0].Body) != "**" {
		t.Errorf("Debug saw the login body %q, want the password masked", sent[0].Body)
	}
	if len(recv) < 4 || recv[1].Type != TypeAuthResponse || string(recv[2].Body) != "ran status" {
		t.Errorf("received %+v", recv)
	}
}
