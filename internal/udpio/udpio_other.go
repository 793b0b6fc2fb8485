//go:build !(linux && (amd64 || arm64))

package udpio

import (
	"net"
	"net/netip"
)

// Reader reads the datagrams of one socket, one per call on this system.
// It is used by one goroutine.
type Reader struct {
	// Idle is never called on this system, which reads one datagram at
	// a time.
	Idle func()
	conn net.PacketConn
	buf  []byte
	n    int
	from netip.AddrPort
}

// NewReader returns a reader of conn for datagrams of up to size bytes;
// batch is ignored on this system, which reports no ICMP errors.
func NewReader(conn net.PacketConn, size, batch int) *Reader {
	return &Reader{conn: conn, buf: make([]byte, size)}
}

// EnableReports reports false: this system reports no ICMP errors to
// unconnected sockets.
func (r *Reader) EnableReports() bool { return false }

// Close releases the reader's buffer.
func (r *Reader) Close() { r.buf = nil }

// Read waits for a datagram and returns 1. An error ends the reading.
func (r *Reader) Read() (int, error) {
	for {
		var err error
		if uc, ok := r.conn.(*net.UDPConn); ok {
			r.n, r.from, err = uc.ReadFromUDPAddrPort(r.buf)
		} else {
			var a net.Addr
			r.n, a, err = r.conn.ReadFrom(r.buf)
			if ua, ok := a.(*net.UDPAddr); ok && err == nil {
				r.from = ua.AddrPort()
			} else if err == nil {
				continue
			}
		}
		if err != nil {
			return 0, err
		}
		r.from = unmap(r.from)
		return 1, nil
	}
}

// Datagram returns the datagram of the last Read and its sender.
func (r *Reader) Datagram(int) (netip.AddrPort, []byte) { return r.from, r.buf[:r.n] }

// Reports returns nothing: this system reports no ICMP errors to
// unconnected sockets.
func (r *Reader) Reports() []Report { return nil }

// Writer sends in batches on Linux only.
type Writer struct {
	Failed func(to netip.AddrPort, err error)
}

// NewWriter returns nil: callers send each datagram with [WriteTo].
func NewWriter(net.PacketConn, int, int) *Writer { return nil }

// Add queues nothing.
func (*Writer) Add([]byte, netip.AddrPort) bool { return false }

// Len is 0.
func (*Writer) Len() int { return 0 }

// Flush does nothing.
func (*Writer) Flush() {}
