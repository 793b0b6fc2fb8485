package udpclient

import (
	"net"
	"sync"
)

// Lazy is the Transport of a protocol's Client, opened on first use and
// closed once, with the challenges of the servers it asks: the part every
// Client shares (mcquery.Client and bedrock.Client hold one, package
// protocol's Client one per protocol). The zero value is ready; it is safe
// for concurrent use.
type Lazy struct {
	mu         sync.Mutex
	t          *Transport
	challenges *Challenges
	closed     bool
}

// Get returns the Transport, opening it with cfg on first use, and the
// challenges kept for its servers. After Close it fails with
// cfg.ErrClosed (net.ErrClosed when nil).
func (l *Lazy) Get(cfg Config) (*Transport, *Challenges, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		if cfg.ErrClosed != nil {
			return nil, nil, cfg.ErrClosed
		}
		return nil, nil, net.ErrClosed
	}
	if l.t == nil {
		t, err := Open(cfg)
		if err != nil {
			return nil, nil, err
		}
		l.t, l.challenges = t, NewChallenges(0)
	}
	return l.t, l.challenges, nil
}

// Close closes the Transport, whose exchanges in flight fail; when none
// was opened, it closes conn instead (the socket a Config would have
// handed it), when not nil. It is safe to call more than once.
func (l *Lazy) Close(conn net.PacketConn) error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	t := l.t
	l.mu.Unlock()
	switch {
	case t != nil:
		return t.Close()
	case conn != nil:
		return conn.Close()
	}
	return nil
}
