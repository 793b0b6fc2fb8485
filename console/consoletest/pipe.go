package consoletest

import (
	"io"
	"net"
	"net/netip"
	"os"
	"sync"
	"syscall"
	"time"
)

// Pipe returns the two ends of an in-memory connection between the
// addresses a and b. Unlike net.Pipe's, each direction holds up to size
// bytes (DefaultBufferSize when size <= 0) before a write waits for the
// reader, as a TCP connection's socket buffers do, so that a peer may
// write an answer while the other writes its next request. A read
// returns what has arrived, up to its buffer, however it was written.
// Deadlines work as on a net.Conn, and may interrupt a blocked Read or
// Write. Closing one end makes the other read the end of the stream
// (io.EOF, once what was written before is read) and fail to write
// (syscall.EPIPE).
func Pipe(a, b netip.AddrPort, size int) (net.Conn, net.Conn) {
	if size <= 0 {
		size = DefaultBufferSize
	}
	ab, ba := newStream(size), newStream(size)
	ca := &pipeConn{local: a, remote: b, in: ba, out: ab, closed: make(chan struct{})}
	cb := &pipeConn{local: b, remote: a, in: ab, out: ba, closed: make(chan struct{})}
	ca.rdl.init()
	ca.wdl.init()
	cb.rdl.init()
	cb.wdl.init()
	return ca, cb
}

// stream is one direction of a pipe: a ring buffer.
type stream struct {
	mu      sync.Mutex
	buf     []byte        // the ring
	off, n  int           // where the bytes to read start, and how many there are
	changed chan struct{} // closed, and replaced, on every change
	eof     bool          // the writer's end is closed
	gone    bool          // the reader's end is closed
}

func newStream(size int) *stream {
	return &stream{buf: make([]byte, size), changed: make(chan struct{})}
}

// readLocked moves up to len(b) bytes out of the ring.
func (s *stream) readLocked(b []byte) int {
	k := 0
	for k < len(b) && s.n > 0 {
		m := copy(b[k:], s.buf[s.off:min(s.off+s.n, len(s.buf))])
		k += m
		s.off = (s.off + m) % len(s.buf)
		s.n -= m
	}
	return k
}

// writeLocked moves as much of b as fits into the ring.
func (s *stream) writeLocked(b []byte) int {
	k := 0
	for k < len(b) && s.n < len(s.buf) {
		end := (s.off + s.n) % len(s.buf)
		stop := len(s.buf)
		if end < s.off {
			stop = s.off
		}
		m := copy(s.buf[end:stop], b[k:])
		k += m
		s.n += m
	}
	return k
}

// signalLocked wakes whoever waits on s.
func (s *stream) signalLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// pipeConn is one end of a pipe.
type pipeConn struct {
	local, remote netip.AddrPort
	in, out       *stream
	rdl, wdl      deadline
	closed        chan struct{}
	once          sync.Once
}

func (c *pipeConn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}

// Read reads what has arrived, waiting for something if nothing has.
func (c *pipeConn) Read(b []byte) (int, error) {
	for {
		select {
		case <-c.closed:
			return 0, c.opError("read", net.ErrClosed)
		default:
		}
		if c.rdl.expired() {
			return 0, c.opError("read", os.ErrDeadlineExceeded)
		}
		s := c.in
		s.mu.Lock()
		if s.n > 0 || len(b) == 0 {
			n := s.readLocked(b)
			s.signalLocked()
			s.mu.Unlock()
			return n, nil
		}
		if s.eof {
			s.mu.Unlock()
			return 0, io.EOF
		}
		changed := s.changed
		s.mu.Unlock()
		select {
		case <-changed:
		case <-c.rdl.wait():
		case <-c.closed:
		}
	}
}

// Write writes all of b, waiting for room when the reader is behind.
func (c *pipeConn) Write(b []byte) (int, error) {
	done := 0
	for {
		select {
		case <-c.closed:
			return done, c.opError("write", net.ErrClosed)
		default:
		}
		if c.wdl.expired() {
			return done, c.opError("write", os.ErrDeadlineExceeded)
		}
		s := c.out
		s.mu.Lock()
		if s.gone {
			s.mu.Unlock()
			return done, c.opError("write", &os.SyscallError{Syscall: "write", Err: syscall.EPIPE})
		}
		if n := s.writeLocked(b[done:]); n > 0 {
			done += n
			s.signalLocked()
		}
		if done == len(b) {
			s.mu.Unlock()
			return done, nil
		}
		changed := s.changed
		s.mu.Unlock()
		select {
		case <-changed:
		case <-c.wdl.wait():
		case <-c.closed:
		}
	}
}

// Close closes this end: the other reads the end of the stream and
// fails to write.
func (c *pipeConn) Close() error {
	first := false
	c.once.Do(func() {
		first = true
		close(c.closed)
		c.out.mu.Lock()
		c.out.eof = true
		c.out.signalLocked()
		c.out.mu.Unlock()
		c.in.mu.Lock()
		c.in.gone = true
		c.in.n = 0
		c.in.signalLocked()
		c.in.mu.Unlock()
	})
	if !first {
		return c.opError("close", net.ErrClosed)
	}
	return nil
}

func (c *pipeConn) LocalAddr() net.Addr  { return net.TCPAddrFromAddrPort(c.local) }
func (c *pipeConn) RemoteAddr() net.Addr { return net.TCPAddrFromAddrPort(c.remote) }

func (c *pipeConn) SetDeadline(t time.Time) error {
	c.rdl.set(t)
	c.wdl.set(t)
	return nil
}

func (c *pipeConn) SetReadDeadline(t time.Time) error  { c.rdl.set(t); return nil }
func (c *pipeConn) SetWriteDeadline(t time.Time) error { c.wdl.set(t); return nil }

// deadline is a read or write deadline: its channel is closed once it
// has passed (as net.Pipe's are).
type deadline struct {
	mu     sync.Mutex
	timer  *time.Timer
	passed chan struct{}
}

func (d *deadline) init() { d.passed = make(chan struct{}) }

// set arms the deadline for t (the zero time: none), waking waiters if t
// has passed.
func (d *deadline) set(t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.timer != nil && !d.timer.Stop() {
		<-d.passed // the timer fired: wait for its close
	}
	d.timer = nil
	closed := isClosed(d.passed)
	if t.IsZero() {
		if closed {
			d.passed = make(chan struct{})
		}
		return
	}
	if dur := time.Until(t); dur > 0 {
		if closed {
			d.passed = make(chan struct{})
		}
		passed := d.passed
		d.timer = time.AfterFunc(dur, func() { close(passed) })
		return
	}
	if !closed {
		close(d.passed)
	}
}

func (d *deadline) wait() chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.passed
}

func (d *deadline) expired() bool { return isClosed(d.wait()) }

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
