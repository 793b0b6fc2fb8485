package testutil

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// Link is a TCP relay to a service that the test can cut: Cut closes
// every connection through it and refuses new ones, as an unreachable
// service would. It also carries a loopback-only service (PostgreSQL,
// NATS, a webhook receiver) to an address that a network namespace
// reaches. It closes when the test ends.
type Link struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	down   bool
	conns  []net.Conn
}

// StartLink relays the connections to listen (host:port; port 0 picks
// one) to target.
func StartLink(t testing.TB, listen, target string) *Link {
	t.Helper()
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		t.Fatal(err)
	}
	l := &Link{ln: ln, target: target}
	t.Cleanup(func() { ln.Close(); l.Cut(true) })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			l.mu.Lock()
			down := l.down
			l.mu.Unlock()
			if down {
				c.Close()
				continue
			}
			go l.relay(c)
		}
	}()
	return l
}

// Addr is the address the link listens on.
func (l *Link) Addr() string { return l.ln.Addr().String() }

func (l *Link) relay(c net.Conn) {
	d, err := net.DialTimeout("tcp", l.target, 5*time.Second)
	if err != nil {
		c.Close()
		return
	}
	l.mu.Lock()
	if l.down { // cut while dialling
		l.mu.Unlock()
		c.Close()
		d.Close()
		return
	}
	l.conns = append(l.conns, c, d)
	l.mu.Unlock()
	go func() { io.Copy(d, c); d.Close() }()
	io.Copy(c, d)
	c.Close()
}

// Cut makes the service unreachable (down) or reachable again.
func (l *Link) Cut(down bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.down = down
	if down {
		for _, c := range l.conns {
			c.Close()
		}
		l.conns = nil
	}
}
