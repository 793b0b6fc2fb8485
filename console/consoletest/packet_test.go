package consoletest

import (
	"errors"
	"net"
	"os"
	"testing"
	"testing/synctest"
	"time"
)

func TestDatagramsDeadlinesAndClose(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var n Network
		srv := n.ListenPacket()
		c := n.DialUDP(srv.AddrPort())
		if _, err := c.Write([]byte("ping")); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 16)
		k, from, err := srv.ReadFrom(buf)
		if err != nil || string(buf[:k]) != "ping" || from.String() != c.LocalAddr().String() {
			t.Fatalf("ReadFrom = %q, %v, %v", buf[:k], from, err)
		}
		if _, err := srv.WriteTo([]byte("pong"), from); err != nil {
			t.Fatal(err)
		}
		if k, err := c.Read(buf); err != nil || string(buf[:k]) != "pong" {
			t.Fatalf("Read = %q, %v", buf[:k], err)
		}
		start := time.Now()
		c.SetReadDeadline(start.Add(time.Hour))
		if _, err := c.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) || time.Since(start) != time.Hour {
			t.Fatalf("Read after an hour: %v after %v", err, time.Since(start))
		}
		c.SetReadDeadline(time.Time{})
		go func() {
			time.Sleep(time.Minute)
			c.Close()
		}()
		if _, err := c.Read(buf); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Read on a closed socket: %v", err)
		}
	})
}
