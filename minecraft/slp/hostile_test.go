package slp_test

import (
	"errors"
	"net"
	"net/netip"
	"runtime"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/neterr"
	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/minecraft/slp"
)

// hostile runs a TCP server whose every connection gets fn, after the
// client's first bytes were read.
func hostile(t *testing.T, fn func(c net.Conn)) netip.AddrPort {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(10 * time.Second))
				buf := make([]byte, 512)
				if _, err := c.Read(buf); err != nil {
					return
				}
				fn(c)
			}()
		}
	}()
	t.Cleanup(func() { l.Close(); <-done })
	return l.Addr().(*net.TCPAddr).AddrPort()
}

// Each hostile server ends in a typed error, within the client's time.
func TestHostileServers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		client slp.Client
		serve  func(c net.Conn)
		want   error
	}{
		{"varint of 6 bytes", slp.Client{}, func(c net.Conn) { c.Write([]byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01}) }, slp.ErrVarIntTooLong},
		{"length of 2 GiB", slp.Client{}, func(c net.Conn) { c.Write(slp.AppendVarInt(nil, -1<<31)) }, slp.ErrTooLarge},
		{"length just past the cap", slp.Client{}, func(c net.Conn) { c.Write(slp.AppendVarInt(nil, slp.DefaultMaxResponseSize+1)) }, slp.ErrTooLarge},
		{"JSON string of 10 MB", slp.Client{}, func(c net.Conn) {
			// A packet within the cap whose string says 10 MB.
			pkt := slp.AppendVarInt(nil, 100)
			pkt = append(pkt, 0)
			pkt = slp.AppendVarInt(pkt, 10<<20)
			c.Write(append(pkt, make([]byte, 100)...))
		}, slp.ErrTooLarge},
		{"trickle, one byte a second", slp.Client{Timeout: 300 * time.Millisecond}, func(c net.Conn) {
			resp := slp.AppendStatusResponse(nil, []byte(`{"description":"slow"}`), nil)
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for _, b := range resp {
				if _, err := c.Write([]byte{b}); err != nil {
					return
				}
				<-tick.C
			}
		}, slp.ErrTimeout},
		{"closed mid-packet", slp.Client{}, func(c net.Conn) { c.Write([]byte{0x20, 0x00, 0x1E, '{'}) }, slp.ErrTruncated},
		{"not JSON", slp.Client{}, func(c net.Conn) { c.Write(slp.AppendStatusResponse(nil, []byte("not json"), nil)) }, slp.ErrMalformed},
		{"JSON not an object", slp.Client{}, func(c net.Conn) { c.Write(slp.AppendStatusResponse(nil, []byte(`["a"]`), nil)) }, slp.ErrMalformed},
		{"another packet", slp.Client{}, func(c net.Conn) { c.Write(slp.AppendPing(nil, 1)) }, slp.ErrUnexpectedPacket},
		{"legacy reply of odd length", slp.Client{Legacy: slp.LegacyOnly}, func(c net.Conn) {
			c.Write([]byte{0xFF, 0x00, 0x05, 0x00, 0xA7, 0x00, 0x31, 0x00}) // 5 units announced, 2.5 sent
		}, slp.ErrTruncated},
		{"legacy reply with an unpaired surrogate", slp.Client{Legacy: slp.LegacyOnly}, func(c net.Conn) {
			c.Write([]byte{0xFF, 0x00, 0x03, 0xD8, 0x00, 0x00, 'a', 0x00, 'b'})
		}, slp.ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			addr := hostile(t, tc.serve)
			c := tc.client
			_, err := c.Status(testutil.Context(t), addr)
			var op *slp.OpError
			if !errors.Is(err, tc.want) || !errors.As(err, &op) {
				t.Fatalf("%v, want %v", err, tc.want)
			}
			if tc.want == slp.ErrTimeout {
				if !neterr.IsTimeout(err) {
					t.Errorf("%v is not a timeout", err)
				}
			} else {
				var pe *slp.ParseError
				if !errors.As(err, &pe) && !errors.Is(err, slp.ErrTruncated) {
					t.Errorf("%v is not a *ParseError", err)
				}
			}
		})
	}
}

// A server that announces 2 GiB, or sends 10 MB, costs the client no more
// than its cap: it refuses by the length, before reading.
func TestHostileMemory(t *testing.T) {
	big := make([]byte, 64<<10)
	addr := hostile(t, func(c net.Conn) {
		c.Write(slp.AppendVarInt(nil, 10<<20))
		for range 160 { // 10 MB, written from one small buffer
			if _, err := c.Write(big); err != nil {
				return
			}
		}
	})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range 10 {
		if _, err := (&slp.Client{NoPing: true}).Status(testutil.Context(t), addr); !errors.Is(err, slp.ErrTooLarge) {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 4<<20 {
		t.Errorf("10 refusals of a 10 MB status allocated %d bytes", got)
	}
}
