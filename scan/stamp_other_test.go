//go:build !linux

package scan

import (
	"net"
	"net/netip"
	"time"
)

// stampedReader reads datagrams from c with the time a test goroutine
// read each: this system's kernel stamps are not read here.
func stampedReader(c *net.UDPConn) func(buf []byte) (int, netip.AddrPort, time.Time, error) {
	return func(buf []byte) (int, netip.AddrPort, time.Time, error) {
		n, from, err := c.ReadFromUDPAddrPort(buf)
		return n, from, time.Now(), err
	}
}
