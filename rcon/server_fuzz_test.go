package rcon

import (
	"bytes"
	"context"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// scriptConn is a net.Conn that reads a fixed input, then EOF, and
// records what is written.
type scriptConn struct {
	in     *bytes.Reader
	out    bytes.Buffer
	mu     sync.Mutex
	closed chan struct{}
	once   sync.Once
}

func (c *scriptConn) Read(b []byte) (int, error) { return c.in.Read(b) }
func (c *scriptConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.Write(b)
}
func (c *scriptConn) Close() error                     { c.once.Do(func() { close(c.closed) }); return nil }
func (c *scriptConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c *scriptConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c *scriptConn) SetDeadline(time.Time) error      { return nil }
func (c *scriptConn) SetReadDeadline(time.Time) error  { return nil }
func (c *scriptConn) SetWriteDeadline(time.Time) error { return nil }

// oneConnListener accepts one connection, then blocks until closed.
type oneConnListener struct {
	conn   chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func (l *oneConnListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conn:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}
func (l *oneConnListener) Close() error   { l.once.Do(func() { close(l.closed) }); return nil }
func (l *oneConnListener) Addr() net.Addr { return &net.TCPAddr{} }

// FuzzServerConn feeds arbitrary bytes to a server connection: it must
// not panic or hang, and everything it writes must be well-formed packets.
func FuzzServerConn(f *testing.F) {
	enc := func(ps ...Packet) []byte {
		var b []byte
		for _, p := range ps {
			b, _ = p.AppendBinary(b)
		}
		return b
	}
	login := Packet{ID: 1, Type: TypeAuth, Body: []byte("pw")}
	for d := range byte(3) {
		f.Add(d, enc(login, Packet{ID: 2, Type: TypeExecCommand, Body: []byte("hello")}, Packet{ID: 3, Type: TypeResponseValue}))
		f.Add(d, enc(Packet{ID: 2, Type: TypeExecCommand, Body: []byte("x")}, login, Packet{ID: 9, Type: 100}))
		f.Add(d, enc(Packet{ID: 1, Type: TypeAuth, Body: []byte("no")}, login, Packet{ID: 5, Type: TypeExecCommand, Body: bytes.Repeat([]byte("é"), 3000)}))
	}
	f.Add(byte(0), []byte{0xff, 0xff, 0xff, 0x7f, 1, 2, 3})
	f.Add(byte(0), []byte{10, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, dialect byte, in []byte) {
		handler := HandlerFunc(func(_ context.Context, w ResponseWriter, cmd string) {
			for range 3 { // some output, more than one fragment for long commands
				io.WriteString(w, cmd)
			}
		})
		s := &Server{Password: "pw", Handler: handler, Dialect: Dialect(dialect % 3), ResponseSplitSize: 1000}
		conn := &scriptConn{in: bytes.NewReader(in), closed: make(chan struct{})}
		l := &oneConnListener{conn: make(chan net.Conn, 1), closed: make(chan struct{})}
		l.conn <- conn
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = s.Serve(l)
		}()
		select {
		case <-conn.closed:
		case <-time.After(10 * time.Second):
			t.Fatal("server did not finish the connection")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		<-done
		conn.mu.Lock()
		out := conn.out.Bytes()
		conn.mu.Unlock()
		for len(out) > 0 {
			_, n, err := ParsePacket(out, 0)
			if err != nil {
				t.Fatalf("server wrote a malformed packet: %v", err)
			}
			out = out[n:]
		}
	})
}
