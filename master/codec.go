package master

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/gsq-project/gsq/serverlist"
)

// Wire constants (the Valve Developer Community wiki, "Master Server
// Query Protocol").
const (
	// TypeQuery is the first byte of a query, '1'.
	TypeQuery = 0x31
	// ReplyHeaderLen is the length of a reply's header, FF FF FF FF 66 0A.
	ReplyHeaderLen = 6
	// EntryLen is the length of one reply entry: 4 address bytes and a
	// big-endian port.
	EntryLen = 6
	// DefaultPageSize is how many entries a reply of this package's Server
	// holds at most, the end marker included: 231, a 1,392-byte datagram,
	// as Valve's master sent.
	DefaultPageSize = 231
	// MinQueryLen is the shortest query: 0x31, the region, "0.0.0.0:0"
	// and its NUL, and an empty filter's NUL.
	MinQueryLen = 13
	// DefaultPort is the port of Valve's Source master,
	// hl2master.steampowered.com:27011; the GoldSrc master used 27010,
	// which qstat -stm still asks by default.
	DefaultPort = 27011
)

// replyHeader starts every reply.
var replyHeader = []byte{0xFF, 0xFF, 0xFF, 0xFF, 0x66, 0x0A}

// Seed is the seed address of a first query, 0.0.0.0:0, which also ends
// a list as its last entry.
var Seed = netip.AddrPortFrom(netip.IPv4Unspecified(), 0)

// Query is a master server query: which region, from where in the list,
// and which servers.
type Query struct {
	// Region is sent as is: serverlist.RegionUSEast is 0, so ask
	// serverlist.RegionWorld for every region.
	Region serverlist.Region
	// Seed is the last address of the previous reply; the zero value
	// (or Seed) asks for the first page.
	Seed netip.AddrPort
	// Filter is the filter text (package serverlist's language), sent as
	// is; empty asks for every server.
	Filter string
}

// seed is q's seed, Seed for the zero value.
func (q *Query) seed() netip.AddrPort {
	if !q.Seed.IsValid() {
		return Seed
	}
	return q.Seed
}

// AppendBinary appends the query's datagram to b. The seed must be IPv4
// (or the zero value); the filter must hold no NUL and fit
// serverlist.MaxFilterLen; the region must fit a byte.
func (q *Query) AppendBinary(b []byte) ([]byte, error) {
	seed := q.seed()
	switch {
	case !seed.Addr().Unmap().Is4():
		return b, fmt.Errorf("%w: seed %v", ErrNotIPv4, seed)
	case strings.IndexByte(q.Filter, 0) >= 0:
		return b, ErrNULInText
	case len(q.Filter) > serverlist.MaxFilterLen:
		return b, fmt.Errorf("%w: %d bytes, the limit is %d", ErrTooLarge, len(q.Filter), serverlist.MaxFilterLen)
	case q.Region < 0 || q.Region > 0xFF:
		return b, fmt.Errorf("master: region %d does not fit a byte", int(q.Region))
	}
	b = append(b, TypeQuery, byte(q.Region))
	b = netip.AddrPortFrom(seed.Addr().Unmap(), seed.Port()).AppendTo(b)
	b = append(b, 0)
	b = append(b, q.Filter...)
	return append(b, 0), nil
}

// ParseQuery reads a query. A filter missing its final NUL reads to the
// end of the datagram; the seed must be an IPv4 "IP:port". The Query's
// Filter is a copy.
func ParseQuery(b []byte) (Query, error) {
	if len(b) < 2 || b[0] != TypeQuery {
		return Query{}, &ParseError{Message: "query", Offset: 0, Err: ErrBadHeader}
	}
	q := Query{Region: serverlist.Region(b[1])}
	rest := b[2:]
	end := bytes.IndexByte(rest, 0)
	if end < 0 {
		return Query{}, &ParseError{Message: "query", Offset: len(b), Err: ErrTruncated}
	}
	seed, err := netip.ParseAddrPort(string(rest[:end]))
	if err != nil || !seed.Addr().Is4() {
		return Query{}, &ParseError{Message: "query", Offset: 2, Err: fmt.Errorf("%w: %q", ErrBadSeed, rest[:end])}
	}
	q.Seed = seed
	filter := rest[end+1:]
	if i := bytes.IndexByte(filter, 0); i >= 0 {
		filter = filter[:i]
	}
	if len(filter) > serverlist.MaxFilterLen {
		return Query{}, &ParseError{Message: "query", Offset: 3 + end, Err: ErrTooLarge}
	}
	q.Filter = string(filter)
	return q, nil
}

// IsReply reports whether b starts as a reply does.
func IsReply(b []byte) bool { return bytes.HasPrefix(b, replyHeader) }

// AppendReply appends a reply listing addrs to b, and the end marker
// 0.0.0.0:0 after them when end is true. Every address must be IPv4, and
// none may be the end marker itself.
func AppendReply(b []byte, addrs []netip.AddrPort, end bool) ([]byte, error) {
	b = append(b, replyHeader...)
	for _, a := range addrs {
		ip := a.Addr().Unmap()
		if !ip.Is4() || a == Seed {
			return b, fmt.Errorf("%w: %v", ErrNotIPv4, a)
		}
		v4 := ip.As4()
		b = binary.BigEndian.AppendUint16(append(b, v4[:]...), a.Port())
	}
	if end {
		b = append(b, 0, 0, 0, 0, 0, 0)
	}
	return b, nil
}

// ParseReply reads a reply, appending its addresses to dst, and reports
// whether it ends the list (its last entry is 0.0.0.0:0). Entries after
// the end marker are ignored. A reply whose length is not the header and
// whole entries is malformed.
func ParseReply(b []byte, dst []netip.AddrPort) (addrs []netip.AddrPort, end bool, err error) {
	if !IsReply(b) {
		return dst, false, &ParseError{Message: "reply", Offset: 0, Err: ErrBadHeader}
	}
	body := b[ReplyHeaderLen:]
	if n := len(body) % EntryLen; n != 0 {
		return dst, false, &ParseError{Message: "reply", Offset: len(b) - n, Err: fmt.Errorf("%w: %d bytes left after the last whole entry", ErrTruncated, n)}
	}
	dst = slices.Grow(dst, len(body)/EntryLen)
	for ; len(body) > 0; body = body[EntryLen:] {
		a := netip.AddrPortFrom(netip.AddrFrom4([4]byte(body[:4])), binary.BigEndian.Uint16(body[4:6]))
		if a == Seed {
			return dst, true, nil
		}
		dst = append(dst, a)
	}
	return dst, false, nil
}

// Page returns the page of list that follows seed, as a master pages:
// list is in ascending address order (netip.AddrPort.Compare); the page
// starts after the last address at or below seed (at the start for the
// zero value or Seed: a seed that left the list meanwhile loses no
// place), and holds at most size entries, the end marker included: end
// is true when the rest of the list fits before the marker.
func Page(list []netip.AddrPort, seed netip.AddrPort, size int) (page []netip.AddrPort, end bool) {
	size = max(size, 2)
	i := 0
	if seed.IsValid() && seed != Seed {
		i, _ = slices.BinarySearchFunc(list, seed, func(a, s netip.AddrPort) int { return a.Compare(s) })
		if i < len(list) && list[i] == seed {
			i++
		}
	}
	rest := list[i:]
	if len(rest) < size {
		return rest, true
	}
	return rest[:size], false
}
