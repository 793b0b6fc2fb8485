package a2s

import (
	"errors"
	"net"
	"net/netip"

	"github.com/gsq-project/gsq/internal/udpio"
)

// defaultReadBatch is how many datagrams one read of a server's socket may
// return (recvmmsg(2) on Linux).
const defaultReadBatch = 8

// readDatagrams reads pc until it is closed or fails maxReadErrors times in
// a row, handing each datagram (up to size bytes) to fn. A single error,
// such as ICMP feedback reported on some systems, is skipped.
func readDatagrams(pc net.PacketConn, size int, fn func(from netip.AddrPort, b []byte)) error {
	r := udpio.NewReader(pc, size, defaultReadBatch)
	defer r.Close()
	for failures := 0; ; {
		n, err := r.Read()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			if failures++; failures >= maxReadErrors {
				return err
			}
			continue
		}
		failures = 0
		for i := range n {
			fn(r.Datagram(i))
		}
	}
}

// hasHeader reports whether b is a whole message: the 0xFFFFFFFF header
// and a type byte.
func hasHeader(b []byte) bool {
	return len(b) >= 5 && b[0] == 0xFF && b[1] == 0xFF && b[2] == 0xFF && b[3] == 0xFF
}
