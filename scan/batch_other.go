//go:build !(linux && (amd64 || arm64))

package scan

import (
	"errors"
	"net"
	"net/netip"
)

// sendBatch batches sends on Linux only; elsewhere every request is sent
// at once.
type sendBatch struct{}

func (*sendBatch) add([]byte, netip.AddrPort) bool { return false }

func (*sendBatch) flush() {}

func (*socket) initBatches() {}

// read receives the socket's datagrams and hands each to its flight.
func (r *run) read(sk *socket) {
	defer close(sk.done)
	buf := make([]byte, 65536)
	for {
		n, from, err := sk.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue // a transient error (an ICMP report on some systems)
		}
		r.datagram(sk, from, buf[:n], nil)
	}
}
