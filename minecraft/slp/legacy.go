package slp

import (
	"encoding/binary"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/gsq-project/gsq/rcon/mctext"
)

// LegacyVariant is a form of the legacy ping that servers up to 1.6 answer
// (wiki.vg, "Server List Ping", "1.6" and "Beta 1.8 to 1.3"); modern
// servers still answer all three, with protocol 127.
type LegacyVariant uint8

const (
	// LegacyBeta is FE, from Beta 1.8 to 1.3; the reply is
	// "motd§online§max". 1.4 to 1.6 servers wait about a second before
	// answering it.
	LegacyBeta LegacyVariant = iota + 1
	// Legacy14 is FE 01, from 1.4 and 1.5; the reply is
	// "§1\0protocol\0version\0motd\0online\0max".
	Legacy14
	// Legacy16 is FE 01 FA and an MC|PingHost plugin message naming the
	// host and port, from 1.6; the reply is Legacy14's.
	Legacy16
)

// String returns "beta", "1.4" or "1.6".
func (v LegacyVariant) String() string {
	switch v {
	case LegacyBeta:
		return "beta"
	case Legacy14:
		return "1.4"
	case Legacy16:
		return "1.6"
	}
	return "LegacyVariant(" + strconv.Itoa(int(v)) + ")"
}

// ModernLegacyProtocol is the protocol number every 1.7+ server puts in
// its reply to a legacy ping: a marker, not the server's protocol.
const ModernLegacyProtocol = 127

// DefaultLegacyProtocol is the protocol a 1.6 ping names: 74, 1.6.2's.
const DefaultLegacyProtocol = 74

// pingHost is the channel of the 1.6 ping's plugin message.
const pingHost = "MC|PingHost"

// LegacyPing is a legacy ping, as a client sends it.
type LegacyPing struct {
	Variant LegacyVariant
	// Protocol, Host and Port are the 1.6 form's: the client's protocol
	// (73 or more), the host and port it connected to.
	Protocol byte
	Host     string
	Port     int32
}

// AppendBinary appends the ping. The 1.6 form's host is at most
// MaxHostLen characters.
func (p LegacyPing) AppendBinary(b []byte) ([]byte, error) {
	switch p.Variant {
	case LegacyBeta:
		return append(b, 0xFE), nil
	case Legacy14:
		return append(b, 0xFE, 0x01), nil
	case Legacy16:
	default:
		return b, detail(ErrMalformed, "unknown legacy variant %d", p.Variant)
	}
	host := utf16.Encode([]rune(p.Host))
	if len(host) > MaxHostLen {
		return b, detail(ErrTooLarge, "a legacy ping's host is at most %d characters", MaxHostLen)
	}
	b = append(b, 0xFE, 0x01, 0xFA)
	b = binary.BigEndian.AppendUint16(b, uint16(len(pingHost)))
	for _, c := range pingHost {
		b = binary.BigEndian.AppendUint16(b, uint16(c))
	}
	b = binary.BigEndian.AppendUint16(b, uint16(7+2*len(host)))
	b = append(b, p.Protocol)
	b = binary.BigEndian.AppendUint16(b, uint16(len(host)))
	for _, u := range host {
		b = binary.BigEndian.AppendUint16(b, u)
	}
	return binary.BigEndian.AppendUint32(b, uint32(p.Port)), nil
}

// ParseLegacyPing reads a legacy ping from the start of b, as a server
// does, with the 1.6 form's exact rules (wiki.vg; the vanilla server's
// LegacyQueryHandler): the channel is MC|PingHost, the length after it is
// 7 plus twice the host's, the protocol is 73 or more and the port at most
// 65535. It returns the ping and the bytes it took.
//
// FE alone reads as LegacyBeta and FE 01 alone as Legacy14; both are also
// the start of a longer form, so a server reading a stream should wait a
// moment for more before it takes them. A prefix of the 1.6 form fails
// with ErrTruncated.
func ParseLegacyPing(b []byte) (LegacyPing, int, error) {
	bad := func(off int, format string, args ...any) (LegacyPing, int, error) {
		return LegacyPing{}, 0, parseErr("legacy-ping", off, detail(ErrMalformed, format, args...))
	}
	switch {
	case len(b) == 0:
		return LegacyPing{}, 0, parseErr("legacy-ping", 0, ErrTruncated)
	case b[0] != 0xFE:
		return bad(0, "a legacy ping starts with FE, not %02X", b[0])
	case len(b) == 1:
		return LegacyPing{Variant: LegacyBeta}, 1, nil
	case b[1] != 0x01:
		return bad(1, "FE is followed by 01, not %02X", b[1])
	case len(b) == 2:
		return LegacyPing{Variant: Legacy14}, 2, nil
	case b[2] != 0xFA:
		return bad(2, "FE 01 is followed by FA, not %02X", b[2])
	}
	off := 3
	u16 := func() (uint16, bool) {
		if len(b)-off < 2 {
			return 0, false
		}
		off += 2
		return binary.BigEndian.Uint16(b[off-2:]), true
	}
	short := func() (LegacyPing, int, error) {
		return LegacyPing{}, 0, parseErr("legacy-ping", len(b), ErrTruncated)
	}
	n, ok := u16()
	if !ok {
		return short()
	}
	if int(n) != len(pingHost) {
		return bad(3, "the channel is %d characters, not MC|PingHost's 11", n)
	}
	for _, c := range pingHost {
		u, ok := u16()
		if !ok {
			return short()
		}
		if rune(u) != c {
			return bad(off-2, "the channel is not MC|PingHost")
		}
	}
	restOff := off
	rest, ok := u16()
	if !ok {
		return short()
	}
	if len(b)-off < 3 {
		return short()
	}
	p := LegacyPing{Variant: Legacy16, Protocol: b[off]}
	off++
	hostLen, _ := u16()
	if int(rest) != 7+2*int(hostLen) {
		return bad(restOff, "the length after the channel is %d, not 7+2×%d", rest, hostLen)
	}
	if p.Protocol < 73 {
		return bad(restOff+2, "protocol %d is below 1.6's 73", p.Protocol)
	}
	if len(b)-off < 2*int(hostLen)+4 {
		return short()
	}
	units := make([]uint16, hostLen)
	for i := range units {
		units[i], _ = u16()
	}
	if i := unpairedSurrogate(units); i >= 0 {
		return bad(off-2*len(units)+2*i, "the host is not UTF-16: an unpaired surrogate")
	}
	p.Host = string(utf16.Decode(units))
	p.Port = int32(binary.BigEndian.Uint32(b[off:]))
	off += 4
	if p.Port < 0 || p.Port > 65535 {
		return bad(off-4, "port %d is beyond 65535", p.Port)
	}
	return p, off, nil
}

// LegacyStatus is a server's reply to a legacy ping.
type LegacyStatus struct {
	// Protocol is the protocol the reply names: nil in the beta format,
	// which has none; ModernLegacyProtocol (127) from a 1.7+ server, which
	// is then not the server's protocol (see Modern).
	Protocol *int32
	Version  string // "" in the beta format
	MOTD     string // with its § codes
	Online   int32
	Max      int32
}

// Modern reports whether the reply came from a 1.7+ server: its protocol
// is the marker 127.
func (s *LegacyStatus) Modern() bool { return s.Protocol != nil && *s.Protocol == ModernLegacyProtocol }

// maxLegacyUnits is the most UTF-16 units a legacy reply's length can
// announce.
const maxLegacyUnits = 0xFFFF

// AppendBinary appends the reply: FF, the text's length in UTF-16 units
// and the UTF-16BE text, in the 1.4 format when Protocol is set and the
// beta one otherwise, whose MOTD loses its § codes: § separates its
// fields.
func (s *LegacyStatus) AppendBinary(b []byte) ([]byte, error) {
	var text string
	online, max := strconv.Itoa(int(s.Online)), strconv.Itoa(int(s.Max))
	if s.Protocol != nil {
		text = "§1\x00" + strconv.Itoa(int(*s.Protocol)) + "\x00" + s.Version + "\x00" + s.MOTD + "\x00" + online + "\x00" + max
	} else {
		text = strings.ReplaceAll(mctext.Strip(s.MOTD), "§", "") + "§" + online + "§" + max
	}
	units := utf16.Encode([]rune(text))
	if len(units) > maxLegacyUnits {
		return b, detail(ErrTooLarge, "a legacy reply of %d UTF-16 units", len(units))
	}
	b = append(b, 0xFF)
	b = binary.BigEndian.AppendUint16(b, uint16(len(units)))
	for _, u := range units {
		b = binary.BigEndian.AppendUint16(b, u)
	}
	return b, nil
}

// LegacyReplyLen is the length of the legacy reply that starts b, from
// its header: 3 bytes and two per UTF-16 unit. It fails with ErrTruncated
// when b is shorter than the header.
func LegacyReplyLen(b []byte) (int, error) {
	if len(b) < 3 {
		return 0, parseErr("legacy", len(b), ErrTruncated)
	}
	if b[0] != 0xFF {
		return 0, parseErr("legacy", 0, detail(ErrUnexpectedPacket, "a legacy reply starts with FF, not %02X", b[0]))
	}
	return 3 + 2*int(binary.BigEndian.Uint16(b[1:])), nil
}

// ParseLegacyReply reads a reply to a legacy ping: FF, a length in UTF-16
// units and the UTF-16BE text. Text that is "§1" and five NUL-separated
// fields is the 1.4 format; any other is the beta format, whose last two
// §-separated fields are the counts. A count that is not a number reads
// as -1. Bytes after the announced length are ignored.
func ParseLegacyReply(b []byte) (*LegacyStatus, error) {
	n, err := LegacyReplyLen(b)
	if err != nil {
		return nil, err
	}
	if len(b) < n {
		off := len(b)
		if (len(b)-3)%2 != 0 {
			return nil, parseErr("legacy", off, detail(ErrTruncated, "the reply ends inside a UTF-16 unit"))
		}
		return nil, parseErr("legacy", off, ErrTruncated)
	}
	units := make([]uint16, (n-3)/2)
	for i := range units {
		units[i] = binary.BigEndian.Uint16(b[3+2*i:])
	}
	if i := unpairedSurrogate(units); i >= 0 {
		return nil, parseErr("legacy", 3+2*i, detail(ErrMalformed, "the reply is not UTF-16: an unpaired surrogate"))
	}
	text := string(utf16.Decode(units))
	s := new(LegacyStatus)
	if rest, ok := strings.CutPrefix(text, "§1\x00"); ok {
		f := strings.Split(rest, "\x00")
		if len(f) != 5 {
			return nil, parseErr("legacy", 3, detail(ErrMalformed, "the 1.4 format has 5 fields after §1, not %d", len(f)))
		}
		p := atoi32(f[0])
		s.Protocol, s.Version, s.MOTD, s.Online, s.Max = &p, f[1], f[2], atoi32(f[3]), atoi32(f[4])
		return s, nil
	}
	f := strings.Split(text, "§")
	if len(f) < 3 {
		return nil, parseErr("legacy", 3, detail(ErrMalformed, "the beta format has 3 §-separated fields, not %d", len(f)))
	}
	s.MOTD = strings.Join(f[:len(f)-2], "§")
	s.Online, s.Max = atoi32(f[len(f)-2]), atoi32(f[len(f)-1])
	return s, nil
}

// unpairedSurrogate is the index of the first surrogate of units that is
// not half of a pair, or -1.
func unpairedSurrogate(units []uint16) int {
	for i := 0; i < len(units); i++ {
		switch u := units[i]; {
		case u >= 0xD800 && u < 0xDC00:
			if i+1 >= len(units) || units[i+1] < 0xDC00 || units[i+1] >= 0xE000 {
				return i
			}
			i++
		case u >= 0xDC00 && u < 0xE000:
			return i
		}
	}
	return -1
}

// atoi32 is s as an int32, or -1 when it is not one.
func atoi32(s string) int32 {
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
	if err != nil {
		return -1
	}
	return int32(v)
}
