package bedrock

import (
	"bytes"
	"encoding/binary"
	"strconv"

	"github.com/gsq-project/gsq/internal/rawtext"
)

// Text is a string exactly as the server sent it: String returns every
// byte, UTF8 decodes for display (valid UTF-8 as is, other bytes as
// Latin-1).
type Text = rawtext.Text

// RakNet's offline message ids.
const (
	IDUnconnectedPing     byte = 0x01
	IDUnconnectedPingOpen byte = 0x02 // answered only when the server has open slots
	IDUnconnectedPong     byte = 0x1C
)

// Magic is RakNet's offline message magic.
var Magic = [16]byte{0x00, 0xFF, 0xFF, 0x00, 0xFE, 0xFE, 0xFE, 0xFE, 0xFD, 0xFD, 0xFD, 0xFD, 0x12, 0x34, 0x56, 0x78}

// Sizes.
const (
	// PingLen is the length of an unconnected ping: id, time, magic,
	// client GUID.
	PingLen = 1 + 8 + 16 + 8
	// pongHeaderLen is a pong's length before its status string.
	pongHeaderLen = 1 + 8 + 8 + 16 + 2
	// MaxStatusLen bounds the status string a pong may carry: real ones
	// are a few hundred bytes, and a pong is one datagram of the path's
	// MTU. A longer one is refused with ErrTooLarge.
	MaxStatusLen = 4096
)

// Ping is an unconnected ping.
type Ping struct {
	Time       int64 // echoed in the pong
	ClientGUID int64
	// OpenConnections asks with id 0x02, which a server answers only
	// when it has open slots.
	OpenConnections bool
}

// AppendBinary appends the 33-byte ping.
func (p Ping) AppendBinary(b []byte) ([]byte, error) {
	id := IDUnconnectedPing
	if p.OpenConnections {
		id = IDUnconnectedPingOpen
	}
	b = append(b, id)
	b = binary.BigEndian.AppendUint64(b, uint64(p.Time))
	b = append(b, Magic[:]...)
	return binary.BigEndian.AppendUint64(b, uint64(p.ClientGUID)), nil
}

// ParsePing reads an unconnected ping: 33 bytes (more are ignored, as
// RakNet servers do).
func ParsePing(b []byte) (Ping, error) {
	if len(b) < 1 {
		return Ping{}, parseErr("ping", 0, ErrTruncated)
	}
	if b[0] != IDUnconnectedPing && b[0] != IDUnconnectedPingOpen {
		return Ping{}, parseErr("ping", 0, detail(ErrUnexpectedType, "id 0x%02x", b[0]))
	}
	if len(b) < PingLen {
		return Ping{}, parseErr("ping", len(b), ErrTruncated)
	}
	if !bytes.Equal(b[9:25], Magic[:]) {
		return Ping{}, parseErr("ping", 9, ErrBadMagic)
	}
	return Ping{
		Time:            int64(binary.BigEndian.Uint64(b[1:])),
		ClientGUID:      int64(binary.BigEndian.Uint64(b[25:])),
		OpenConnections: b[0] == IDUnconnectedPingOpen,
	}, nil
}

// Pong is an unconnected pong.
type Pong struct {
	Time       int64 // the ping's
	ServerGUID int64
	Status     Text // the ;-separated status string, raw (see ParseStatus)
}

// AppendBinary appends the pong. Status is at most MaxStatusLen bytes.
func (p Pong) AppendBinary(b []byte) ([]byte, error) {
	if len(p.Status) > MaxStatusLen {
		return b, detail(ErrTooLarge, "a status of %d bytes (the limit is %d)", len(p.Status), MaxStatusLen)
	}
	b = append(b, IDUnconnectedPong)
	b = binary.BigEndian.AppendUint64(b, uint64(p.Time))
	b = binary.BigEndian.AppendUint64(b, uint64(p.ServerGUID))
	b = append(b, Magic[:]...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(p.Status)))
	return append(b, p.Status...), nil
}

// PongTime reads the echoed time of the pong b, when b starts like one:
// a client matches the pong to its ping by it before it reads the rest.
func PongTime(b []byte) (int64, bool) {
	if len(b) < 9 || b[0] != IDUnconnectedPong {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(b[1:])), true
}

// ParsePong reads an unconnected pong. The status string's length is
// checked against MaxStatusLen and the datagram before it is read; bytes
// after it are ignored. Status aliases b.
func ParsePong(b []byte) (Pong, error) {
	if len(b) < 1 {
		return Pong{}, parseErr("pong", 0, ErrTruncated)
	}
	if b[0] != IDUnconnectedPong {
		return Pong{}, parseErr("pong", 0, detail(ErrUnexpectedType, "id 0x%02x", b[0]))
	}
	if len(b) < pongHeaderLen {
		return Pong{}, parseErr("pong", len(b), ErrTruncated)
	}
	if !bytes.Equal(b[17:33], Magic[:]) {
		return Pong{}, parseErr("pong", 17, ErrBadMagic)
	}
	n := int(binary.BigEndian.Uint16(b[33:]))
	if n > MaxStatusLen {
		return Pong{}, parseErr("pong", 33, detail(ErrTooLarge, "a status of %d bytes (the limit is %d)", n, MaxStatusLen))
	}
	if len(b)-pongHeaderLen < n {
		return Pong{}, parseErr("pong", len(b), ErrTruncated)
	}
	return Pong{
		Time:       int64(binary.BigEndian.Uint64(b[1:])),
		ServerGUID: int64(binary.BigEndian.Uint64(b[9:])),
		Status:     Text(b[pongHeaderLen : pongHeaderLen+n : pongHeaderLen+n]),
	}, nil
}

// Status is a Bedrock server's status. Only the fields the server sent,
// and sent non-empty, are set; a number that does not read is left nil.
type Status struct {
	Edition    Text // "MCPE", or "MCEE" for Education Edition
	MOTD       Text // the first MOTD line, § codes kept
	Protocol   *int32
	Version    Text
	Online     *int32
	Max        *int32
	ServerID   Text // a 64-bit number, often negative, as sent
	LevelName  Text // the second MOTD line: the world's name
	GameMode   Text // "Survival", "Creative" ...
	GameModeID *int32
	PortV4     *int32 // -1 or 0 when the server does not listen there
	PortV6     *int32
	// Extra holds the fields past the twelfth, as sent.
	Extra []Text
}

// ParseStatus reads a pong's status string leniently: fields are split on
// ';', the trailing empty one dropped; any may be missing or empty.
// Fields alias s. It does not fail: even an empty string is a status
// (mc-monitor met servers that send one).
func ParseStatus(s []byte) *Status {
	st := new(Status)
	fields := bytes.Split(s, []byte{';'})
	if n := len(fields); n > 0 && len(fields[n-1]) == 0 {
		fields = fields[:n-1]
	}
	get := func(i int) Text {
		if i < len(fields) && len(fields[i]) > 0 {
			f := fields[i]
			return Text(f[:len(f):len(f)])
		}
		return nil
	}
	num := func(i int) *int32 {
		t := get(i)
		if t == nil {
			return nil
		}
		v, err := strconv.ParseInt(string(bytes.TrimSpace(t)), 10, 32)
		if err != nil {
			return nil
		}
		n := int32(v)
		return &n
	}
	st.Edition, st.MOTD, st.Protocol, st.Version = get(0), get(1), num(2), get(3)
	st.Online, st.Max, st.ServerID, st.LevelName = num(4), num(5), get(6), get(7)
	st.GameMode, st.GameModeID, st.PortV4, st.PortV6 = get(8), num(9), num(10), num(11)
	for i := 12; i < len(fields); i++ {
		st.Extra = append(st.Extra, get(i))
	}
	return st
}

// AppendStatus appends s as a status string, ';'-separated with a
// trailing ';', as BDS sends it: the first six fields always, the
// others up to the last one set. A field holding ';' fails with ErrMalformed.
func (s *Status) AppendStatus(b []byte) ([]byte, error) {
	numText := func(p *int32) Text {
		if p == nil {
			return nil
		}
		return Text(strconv.Itoa(int(*p)))
	}
	fields := append([]Text{s.Edition, s.MOTD, numText(s.Protocol), s.Version, numText(s.Online), numText(s.Max),
		s.ServerID, s.LevelName, s.GameMode, numText(s.GameModeID), numText(s.PortV4), numText(s.PortV6)}, s.Extra...)
	last := 5
	for i, f := range fields {
		if bytes.IndexByte(f, ';') >= 0 {
			return b, detail(ErrMalformed, "status field %d holds ';'", i)
		}
		if len(f) > 0 {
			last = i
		}
	}
	for _, f := range fields[:last+1] {
		b = append(append(b, f...), ';')
	}
	return b, nil
}
