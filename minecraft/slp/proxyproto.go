package slp

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"strconv"
)

// PROXY protocol headers (HAProxy's "The PROXY protocol", versions 1 and
// 2), which a client behind nothing sends first to a server that sits
// behind HAProxy or TCPShield with proxy_protocol on: such a server drops
// a connection that does not start with one.

// proxyV2Sig starts every version 2 header.
var proxyV2Sig = []byte("\r\n\r\n\x00\r\nQUIT\n")

// AppendProxyHeader appends a PROXY header of version 1 (text) or 2
// (binary) for a TCP connection from src to dst, which are both IPv4 or
// both IPv6.
func AppendProxyHeader(b []byte, version int, src, dst netip.AddrPort) ([]byte, error) {
	s, d := src.Addr().Unmap(), dst.Addr().Unmap()
	if s.Is4() != d.Is4() {
		s, d = netip.AddrFrom16(s.As16()), netip.AddrFrom16(d.As16())
	}
	switch version {
	case 1:
		fam := "TCP4"
		if !s.Is4() {
			fam = "TCP6"
		}
		b = append(b, "PROXY "+fam+" "+s.String()+" "+d.String()+" "...)
		b = strconv.AppendUint(b, uint64(src.Port()), 10)
		b = append(b, ' ')
		b = strconv.AppendUint(b, uint64(dst.Port()), 10)
		return append(b, "\r\n"...), nil
	case 2:
		b = append(b, proxyV2Sig...)
		b = append(b, 0x21) // version 2, PROXY
		if s.Is4() {
			b = append(b, 0x11, 0, 12) // TCP over IPv4, 12 bytes of addresses
			a4, d4 := s.As4(), d.As4()
			b = append(append(b, a4[:]...), d4[:]...)
		} else {
			b = append(b, 0x21, 0, 36) // TCP over IPv6
			a16, d16 := s.As16(), d.As16()
			b = append(append(b, a16[:]...), d16[:]...)
		}
		b = binary.BigEndian.AppendUint16(b, src.Port())
		return binary.BigEndian.AppendUint16(b, dst.Port()), nil
	}
	return b, detail(ErrMalformed, "PROXY protocol version %d (1 or 2)", version)
}

// maxProxyV1 is the longest version 1 header, CRLF included.
const maxProxyV1 = 107

// ParseProxyHeader reads the PROXY header at the start of b and returns
// the source address it names and the bytes it took. It fails with
// ErrTruncated when b ends inside it.
func ParseProxyHeader(b []byte) (src netip.AddrPort, n int, err error) {
	bad := func(off int, why string) (netip.AddrPort, int, error) {
		return netip.AddrPort{}, 0, parseErr("proxy", off, detail(ErrMalformed, "%s", why))
	}
	short := func() (netip.AddrPort, int, error) {
		return netip.AddrPort{}, 0, parseErr("proxy", len(b), ErrTruncated)
	}
	switch {
	case bytes.HasPrefix(b, []byte("PROXY ")):
		end := bytes.Index(b, []byte("\r\n"))
		if end < 0 {
			if len(b) >= maxProxyV1 {
				return bad(0, "a PROXY v1 line longer than 107 bytes")
			}
			return short()
		}
		f := bytes.Fields(b[:end])
		if len(f) == 2 && string(f[1]) == "UNKNOWN" {
			return netip.AddrPort{}, end + 2, nil
		}
		if len(f) != 6 {
			return bad(0, "a PROXY v1 line has 6 fields")
		}
		a, err1 := netip.ParseAddr(string(f[2]))
		p, err2 := strconv.ParseUint(string(f[4]), 10, 16)
		if err1 != nil || err2 != nil {
			return bad(0, "a PROXY v1 line with a bad source")
		}
		return netip.AddrPortFrom(a, uint16(p)), end + 2, nil
	case len(b) < len(proxyV2Sig)+4:
		if bytes.HasPrefix(proxyV2Sig, b[:min(len(b), len(proxyV2Sig))]) || bytes.HasPrefix([]byte("PROXY "), b) {
			return short()
		}
		return bad(0, "no PROXY header")
	case !bytes.HasPrefix(b, proxyV2Sig):
		return bad(0, "no PROXY header")
	}
	off := len(proxyV2Sig)
	l := int(binary.BigEndian.Uint16(b[off+2:]))
	if len(b) < off+4+l {
		return short()
	}
	body := b[off+4 : off+4+l]
	switch {
	case b[off]&0xF0 != 0x20:
		return bad(off, "PROXY v2 header of another version")
	case b[off]&0x0F == 0: // LOCAL: no addresses
	case b[off+1] == 0x11 && l >= 12:
		src = netip.AddrPortFrom(netip.AddrFrom4([4]byte(body[:4])), binary.BigEndian.Uint16(body[8:]))
	case b[off+1] == 0x21 && l >= 36:
		src = netip.AddrPortFrom(netip.AddrFrom16([16]byte(body[:16])), binary.BigEndian.Uint16(body[32:]))
	default:
		return bad(off+1, "PROXY v2 header of an unknown family")
	}
	return src, off + 4 + l, nil
}
