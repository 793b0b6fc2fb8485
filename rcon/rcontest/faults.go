package rcontest

import (
	"net"
	"time"
)

// Faults are transport faults a [Server] injects into what it writes,
// on top of its profile. The zero value injects none: each answer (all
// its packets, e.g. SRCDS's empty packet and AUTH_RESPONSE) goes out in
// one write.
type Faults struct {
	// Segments, if set, cuts the byte stream into pieces of these sizes,
	// used in turn, each written separately and SegmentDelay apart, so
	// they reach the client in separate reads. {1}, {2} or {3} split
	// every size word; {4093, 5} splits the next packet's size word
	// after a full SRCDS fragment.
	Segments []int
	// SegmentDelay is the pause between pieces; zero means 2ms.
	SegmentDelay time.Duration
	// Coalesce holds answers while further requests are already buffered
	// and writes them all in one write, so a pipelining client gets
	// several answers in one read.
	Coalesce bool
	// Delay is a pause before each write of answers.
	Delay time.Duration
	// DropEvery, if > 0, leaves every DropEvery-th command without any
	// answer, as if the server swallowed it.
	DropEvery int
	// DropAfterBytes, if > 0, closes the connection once that many bytes
	// have been written on it, possibly inside a packet.
	DropAfterBytes int
}

func (f Faults) segmentDelay() time.Duration {
	if f.SegmentDelay > 0 {
		return f.SegmentDelay
	}
	return 2 * time.Millisecond
}

// writePieces writes b to nc in pieces of the given sizes (cycled),
// pausing between them; with no sizes it writes b at once.
func writePieces(nc net.Conn, b []byte, sizes []int, pause time.Duration) error {
	for i := 0; len(b) > 0; i++ {
		n := len(b)
		if len(sizes) > 0 {
			n = min(max(sizes[i%len(sizes)], 1), len(b))
		}
		if _, err := nc.Write(b[:n]); err != nil {
			return err
		}
		b = b[n:]
		if len(b) > 0 && pause > 0 {
			time.Sleep(pause)
		}
	}
	return nil
}
