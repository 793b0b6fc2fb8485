package slp_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/minecraft/mctest"
	"github.com/gsq-project/gsq/minecraft/slp"
)

// serve starts s on a loopback port and returns its address.
func serve(t *testing.T, s *slp.Server) netip.AddrPort {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(l) }()
	t.Cleanup(func() {
		// Not testutil.Context: a test's own context is done by cleanup.
		ctx, cancel := context.WithTimeout(context.Background(), testutil.Bound)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Error(err)
		}
		if err := <-done; !errors.Is(err, slp.ErrServerClosed) {
			t.Errorf("Serve returned %v, want ErrServerClosed", err)
		}
	})
	return l.Addr().(*net.TCPAddr).AddrPort()
}

func staticServer(t *testing.T) *slp.Server {
	h, err := slp.NewStaticHandler(mctest.DefaultStatus())
	if err != nil {
		t.Fatal(err)
	}
	return &slp.Server{Handler: h}
}

func dial(t *testing.T, addr netip.AddrPort) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	t.Cleanup(func() { c.Close() })
	return c
}

// readPacket reads one framed packet from c.
func readPacket(t *testing.T, c net.Conn) slp.Packet {
	t.Helper()
	var buf []byte
	tmp := make([]byte, 4096)
	for {
		if p, _, err := slp.ParsePacket(buf, 1<<20); err == nil {
			return p
		} else if !errors.Is(err, slp.ErrTruncated) {
			t.Fatal(err)
		}
		n, err := c.Read(tmp)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		buf = append(buf, tmp[:n]...)
	}
}

// closed reports whether c's peer closed it: a read ends with EOF or a
// reset rather than data or the test's deadline.
func closed(c net.Conn) bool {
	var b [1]byte
	_, err := c.Read(b[:])
	return err != nil && !errors.Is(err, os.ErrDeadlineExceeded)
}

func handshake(t *testing.T, next int32) []byte {
	b, err := slp.Handshake{Protocol: 767, Host: "localhost", Port: 25565, NextState: next}.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The vanilla server's state machine: one status per connection (a
// second request is closed), a pong and then the close, and a handshake
// for login closed at once.
func TestServerStateMachine(t *testing.T) {
	t.Parallel()
	addr := serve(t, staticServer(t))
	c := dial(t, addr)
	c.Write(slp.AppendStatusRequest(handshake(t, slp.NextStatus)))
	if p := readPacket(t, c); p.ID != slp.IDStatusResponse {
		t.Fatalf("packet %d", p.ID)
	}
	c.Write(slp.AppendStatusRequest(nil))
	if !closed(c) {
		t.Error("a second status request was not closed")
	}
	c = dial(t, addr)
	c.Write(slp.AppendStatusRequest(handshake(t, slp.NextStatus)))
	readPacket(t, c)
	c.Write(slp.AppendPing(nil, 42))
	p := readPacket(t, c)
	if v, err := slp.ParsePing(p.Data); p.ID != slp.IDPong || v != 42 || err != nil {
		t.Errorf("pong %d %d %v", p.ID, v, err)
	}
	if !closed(c) {
		t.Error("not closed after the pong")
	}
	c = dial(t, addr)
	c.Write(handshake(t, slp.NextLogin))
	if !closed(c) {
		t.Error("a login handshake was not closed")
	}
}

// A 1.6 ping that arrives in pieces is answered once whole; FE alone is
// answered in the beta format after LegacyWait.
func TestServerLegacy(t *testing.T) {
	t.Parallel()
	s := staticServer(t)
	s.LegacyWait = 20 * time.Millisecond
	addr := serve(t, s)
	ping, _ := slp.LegacyPing{Variant: slp.Legacy16, Protocol: 74, Host: "localhost", Port: 25565}.AppendBinary(nil)
	c := dial(t, addr)
	c.Write(ping[:5]) // two writes, two segments (TCP_NODELAY): the server may read them apart
	c.Write(ping[5:])
	reply, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	ls, err := slp.ParseLegacyReply(reply)
	if err != nil || !ls.Modern() || ls.Max != 20 {
		t.Errorf("%+v %v", ls, err)
	}
	c = dial(t, addr)
	c.Write([]byte{0xFE})
	reply, _ = io.ReadAll(c)
	if ls, err = slp.ParseLegacyReply(reply); err != nil || ls.Protocol != nil || ls.MOTD != "A gsq Minecraft server" {
		t.Errorf("beta: %+v %v", ls, err)
	}
}

// The caps: connections per source, a connection's life, a packet's size.
func TestServerLimits(t *testing.T) {
	t.Parallel()
	s := staticServer(t)
	s.MaxConnsPerSource = 2
	s.ConnTimeout = 200 * time.Millisecond
	s.MaxRequestSize = 64
	addr := serve(t, s)
	a, b, c := dial(t, addr), dial(t, addr), dial(t, addr)
	if !closed(c) {
		t.Error("a third connection from one source was not closed")
	}
	// The first two are closed when their time is up.
	if !closed(a) || !closed(b) {
		t.Error("idle connections outlived ConnTimeout")
	}
	d := dial(t, addr)
	d.Write([]byte{0x80, 0x01}) // a packet of 128 bytes
	if !closed(d) {
		t.Error("a packet beyond MaxRequestSize was not refused")
	}
}
