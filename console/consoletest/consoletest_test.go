package consoletest_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gsq-project/gsq/console"
	"github.com/gsq-project/gsq/console/consoletest"
)

var (
	a = netip.MustParseAddrPort("127.0.0.1:1000")
	b = netip.MustParseAddrPort("127.0.0.2:27015")
)

// A pipe carries bytes both ways in order, whatever the sizes of the
// writes and reads, and a write waits only when the reader is a buffer
// behind.
func TestPipeCarriesBytes(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		c, s := consoletest.Pipe(a, b, 10)
		if c.LocalAddr().String() != a.String() || c.RemoteAddr().String() != b.String() || s.RemoteAddr().String() != a.String() {
			t.Fatalf("addresses %v %v %v", c.LocalAddr(), c.RemoteAddr(), s.RemoteAddr())
		}
		want := bytes.Repeat([]byte("0123456789abcdefghijklmnopqrstuvwxyz"), 100)
		written := make(chan error)
		go func() {
			_, err := c.Write(want)
			written <- err
		}()
		synctest.Wait()
		select {
		case <-written:
			t.Fatal("a write larger than the buffer finished before anything was read")
		default:
		}
		got := make([]byte, 0, len(want))
		buf := make([]byte, 7)
		for len(got) < len(want) {
			n, err := s.Read(buf)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, buf[:n]...)
		}
		if err := <-written; err != nil || !bytes.Equal(got, want) {
			t.Fatalf("write %v; read %d bytes, equal %v", err, len(got), bytes.Equal(got, want))
		}
		// Small writes wait for nothing; a read gets what has arrived.
		s.Write([]byte("ab"))
		s.Write([]byte("cd"))
		n, _ := c.Read(buf)
		if string(buf[:n]) != "abcd" {
			t.Fatalf("read %q, want both writes", buf[:n])
		}
	})
}

// Closing one end: the other reads what was sent, then the end of the
// stream, and cannot write; the closed end can neither read nor write.
func TestPipeClose(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		c, s := consoletest.Pipe(a, b, 0)
		c.Write([]byte("last words"))
		c.Close()
		if got, err := io.ReadAll(s); string(got) != "last words" || err != nil {
			t.Fatalf("ReadAll = %q, %v", got, err)
		}
		if _, err := s.Write([]byte("x")); !errors.Is(err, syscall.EPIPE) {
			t.Fatalf("write to a closed peer: %v", err)
		}
		if _, err := c.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("read of a closed end: %v", err)
		}
		if _, err := c.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("write to a closed end: %v", err)
		}
		if err := c.Close(); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("second Close: %v", err)
		}
	})
}

// Deadlines end blocked reads and writes on time, a past one at once,
// and are lifted by the zero time.
func TestPipeDeadlines(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		c, s := consoletest.Pipe(a, b, 4)
		start := time.Now()
		c.SetReadDeadline(start.Add(time.Second))
		_, err := c.Read(make([]byte, 1))
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) || time.Since(start) != time.Second {
			t.Fatalf("read past its deadline: %v after %v", err, time.Since(start))
		}
		// A deadline set while a read is blocked interrupts it.
		c.SetReadDeadline(time.Time{})
		interrupted := make(chan error)
		go func() {
			_, err := c.Read(make([]byte, 1))
			interrupted <- err
		}()
		synctest.Wait()
		c.SetReadDeadline(time.Unix(1, 0))
		if err := <-interrupted; !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("interrupted read: %v", err)
		}
		c.SetReadDeadline(time.Time{})
		s.Write([]byte("ok"))
		if n, err := c.Read(make([]byte, 2)); n != 2 || err != nil {
			t.Fatalf("read after the deadline was lifted: %d, %v", n, err)
		}
		// A write that cannot finish stops at its deadline, having written
		// what fitted.
		s.SetWriteDeadline(time.Now().Add(time.Second))
		if n, err := s.Write([]byte("123456")); n != 4 || !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("write past its deadline: %d, %v", n, err)
		}
	})
}

func TestNetwork(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var n consoletest.Network
		l := n.MustListen(t, "127.0.0.1:0")
		if _, err := n.Listen(l.Addr().String()); !errors.Is(err, syscall.EADDRINUSE) {
			t.Fatalf("a second listener on %v: %v", l.Addr(), err)
		}
		accepted := make(chan net.Conn, 1)
		go func() {
			c, err := l.Accept()
			if err != nil {
				t.Error(err)
			}
			accepted <- c
		}()
		c, err := n.DialFrom(context.Background(), "192.0.2.7:4000", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		if sc := <-accepted; sc.RemoteAddr().String() != "192.0.2.7:4000" || c.RemoteAddr().String() != l.Addr().String() {
			t.Fatalf("accepted from %v, dialled %v", sc.RemoteAddr(), c.RemoteAddr())
		}
		boom := errors.New("too many open files")
		l.FailAccept(boom)
		if _, err := l.Accept(); err != boom {
			t.Fatalf("Accept = %v, want the error given", err)
		}
		// A dial no listener takes waits for its context.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if _, err := n.DialContext(ctx, "tcp", l.Addr().String()); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("dial never accepted: %v", err)
		}
		l.Close()
		if _, err := n.DialContext(context.Background(), "tcp", l.Addr().String()); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("dial after Close: %v", err)
		}
		if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Accept after Close: %v", err)
		}
		// The address is free again.
		if _, err := n.Listen(l.Addr().String()); err != nil {
			t.Fatal(err)
		}
	})
}

func TestRecvAndNoEvent(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := console.NewFeed(1)
		consoletest.NoEvent(t, f.Events())
		time.AfterFunc(time.Second, func() { f.Publish(console.Event{Text: "later"}) })
		if e := consoletest.Recv(t, f.Events(), 2*time.Second); e.Text != "later" {
			t.Fatalf("event %+v", e)
		}
	})
}
