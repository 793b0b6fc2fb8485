package rcon

import "time"

// Hooks into a Client's internals for the tests of package rcon_test,
// which drive it against package rcontest's fake servers.

// IsPipelined reports whether c runs commands pipelined.
func IsPipelined(c *Client) bool {
	_, ok := c.mode.(*pipeline)
	return ok
}

// IdleReaderInside reports whether c's idle reader reads its connection
// and has read part of a packet.
func IdleReaderInside(c *Client) bool {
	s, ok := c.mode.(*serial)
	if !ok {
		return false
	}
	cn := c.cur.Load()
	s.turn.mu.Lock()
	defer s.turn.mu.Unlock()
	return s.turn.idling == cn && cn.rd.progress() > 0
}

// SetUnread makes c's connection look unread for d, as if the last
// command had ended d ago, without the idle reader taking it over.
func SetUnread(c *Client, d time.Duration) {
	c.mode.(*serial).turn.lastEnd.Store(time.Now().Add(-d).UnixNano())
}

// QueuedCommands counts the commands of a pipelined c waiting for the
// Write in flight, or registered behind it when not coalescing.
func QueuedCommands(c *Client) int {
	pl := c.mode.(*pipeline)
	cn := c.cur.Load()
	if !pl.coalesce {
		pl.mu.Lock()
		defer pl.mu.Unlock()
		return len(pl.calls)/2 - 1
	}
	cn.wq.mu.Lock()
	defer cn.wq.mu.Unlock()
	n := 0
	for b := cn.wq.buf; len(b) > 0; {
		p, m, err := ParsePacket(b, 0)
		if err != nil {
			return -1
		}
		if p.Type == TypeExecCommand {
			n++
		}
		b = b[m:]
	}
	return n
}

// ProbeWait is the shortest wait for a probe's reply.
const ProbeWait = minProbeWait

// PeekAfter is how long a connection goes unread before a command checks
// that the server has not closed it.
const PeekAfter = peekAfter

// ConnCapFor is MaxConns's default under a limit of limit open files.
var ConnCapFor = connCapFor
