// Package sourcekey names the source that a server's per-address limits
// (rate limits, connection caps, login lockouts) count against: an IPv4
// address itself, or the /64 prefix of an IPv6 address, since one IPv6
// host commonly holds a whole /64 (RFC 4291 §2.5.1 and RFC 7421 explain the
// 64-bit interface identifier). It uses the standard library only.
package sourcekey

import "net/netip"

// Of returns the source a belongs to: a unmapped if it is IPv4 (or an
// IPv4-mapped IPv6 address), else the first address of its /64.
func Of(a netip.Addr) netip.Addr {
	a = a.Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.Addr()
	}
	return a
}
