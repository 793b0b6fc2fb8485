package udpclient_test

import (
	"errors"
	"net"
	"net/netip"
	"testing"

	"github.com/gsq-project/gsq/internal/udpclient"
)

// Lazy opens one Transport on first use and hands the same one after;
// once closed it fails with the Config's ErrClosed, or net.ErrClosed.
// Closing before any use closes the caller's socket.
func TestLazy(t *testing.T) {
	t.Parallel()
	var l udpclient.Lazy
	errClosed := errors.New("x: client closed")
	cfg := udpclient.Config{LocalAddr: netip.MustParseAddrPort("127.0.0.1:0"), Name: "x", ErrClosed: errClosed}
	t1, ch1, err := l.Get(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t2, ch2, _ := l.Get(cfg)
	if t1 != t2 || ch1 != ch2 || ch1 == nil {
		t.Errorf("a second Transport: %p %p, %p %p", t1, t2, ch1, ch2)
	}
	if err := l.Close(nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.Get(cfg); !errors.Is(err, errClosed) {
		t.Errorf("after Close: %v", err)
	}
	if _, _, err := l.Get(udpclient.Config{}); !errors.Is(err, net.ErrClosed) {
		t.Errorf("after Close, no ErrClosed: %v", err)
	}
	if err := l.Close(nil); err != nil {
		t.Errorf("second Close: %v", err)
	}

	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var unused udpclient.Lazy
	if err := unused.Close(conn); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.WriteTo([]byte{0}, conn.LocalAddr()); !errors.Is(err, net.ErrClosed) {
		t.Errorf("the caller's socket is open: %v", err)
	}
}
