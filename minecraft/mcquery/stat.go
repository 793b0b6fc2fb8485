package mcquery

import (
	"bytes"
	"encoding/binary"
	"strconv"
)

// BasicStat is the reply to a basic stat request.
type BasicStat struct {
	MOTD     Text // may hold NULs and bytes that are not UTF-8
	GameType Text // "SMP"
	Map      Text // the world's name
	// NumPlayers and MaxPlayers are the counts; -1 when the server sent
	// something that is not a number.
	NumPlayers int32
	MaxPlayers int32
	HostPort   uint16 // little-endian on the wire, unlike the rest
	HostIP     Text
}

// maxNULCandidates bounds the places tried as the end of a MOTD holding
// NULs.
const maxNULCandidates = 32

// AppendReply appends s as the reply to a basic stat request of session
// sessionID. The MOTD may hold NULs (some servers send them, and the
// parsers cope); other text may not.
func (s *BasicStat) AppendReply(b []byte, sessionID uint32) ([]byte, error) {
	for _, t := range [...]Text{s.GameType, s.Map, s.HostIP} {
		if bytes.IndexByte(t, 0) >= 0 {
			return b, ErrNULInText
		}
	}
	b = append(b, TypeStat)
	b = binary.BigEndian.AppendUint32(b, sessionID)
	b = append(append(b, s.MOTD...), 0)
	b = append(append(b, s.GameType...), 0)
	b = append(append(b, s.Map...), 0)
	b = append(strconv.AppendInt(b, int64(s.NumPlayers), 10), 0)
	b = append(strconv.AppendInt(b, int64(s.MaxPlayers), 10), 0)
	b = binary.LittleEndian.AppendUint16(b, s.HostPort)
	return append(append(b, s.HostIP...), 0), nil
}

// ParseBasicStat reads the reply to a basic stat request. A MOTD holding
// NULs is found by trying each NUL in turn (up to 32) as its end until
// the fields after it read right: two numbers, the port and the address
// ending the datagram.
func ParseBasicStat(b []byte) (sessionID uint32, s *BasicStat, err error) {
	sid, err := replyHeader(b, TypeStat, "basic-stat")
	if err != nil {
		return 0, nil, err
	}
	body := b[5:]
	tries := 0
	for i, c := range body {
		if c != 0 {
			continue
		}
		if s, ok := parseBasicRest(body, i, true); ok {
			return sid, s, nil
		}
		if tries++; tries >= maxNULCandidates {
			break
		}
	}
	first := bytes.IndexByte(body, 0)
	if first < 0 {
		return sid, nil, parseErr("basic-stat", len(b), detail(ErrTruncated, "the MOTD has no NUL"))
	}
	s, _ = parseBasicRest(body, first, false)
	if s == nil {
		return sid, nil, parseErr("basic-stat", len(b), ErrTruncated)
	}
	return sid, s, nil
}

// parseBasicRest reads a basic stat whose MOTD ends at the NUL at end;
// strict wants the counts to be numbers and the address to end the data.
func parseBasicRest(body []byte, end int, strict bool) (*BasicStat, bool) {
	s := &BasicStat{MOTD: Text(body[:end:end])}
	off := end + 1
	field := func() (Text, bool) {
		i := bytes.IndexByte(body[off:], 0)
		if i < 0 {
			return nil, false
		}
		t := Text(body[off : off+i : off+i])
		off += i + 1
		return t, true
	}
	var ok bool
	if s.GameType, ok = field(); !ok {
		return nil, false
	}
	if s.Map, ok = field(); !ok {
		return nil, false
	}
	num, ok1 := field()
	maxp, ok2 := field()
	if !ok1 || !ok2 {
		return nil, false
	}
	var numOK, maxOK bool
	s.NumPlayers, numOK = count(num)
	s.MaxPlayers, maxOK = count(maxp)
	if strict && (!numOK || !maxOK) {
		return nil, false
	}
	if len(body)-off < 2 {
		return nil, false
	}
	s.HostPort = binary.LittleEndian.Uint16(body[off:])
	off += 2
	if s.HostIP, ok = field(); !ok || strict && off != len(body) {
		return nil, false
	}
	return s, true
}

// count is t as a count, or -1 when it is not a number.
func count(t Text) (int32, bool) {
	v, err := strconv.ParseInt(string(bytes.TrimSpace(t)), 10, 32)
	if err != nil {
		return -1, false
	}
	return int32(v), true
}

// KeyValue is a key of a full stat and its value.
type KeyValue struct {
	Key   Text
	Value Text
}

// GameID is the value of a vanilla server's game_id key.
const GameID = "MINECRAFT"

// VanillaKeys are the keys of a vanilla server's full stat, in its order.
// Others send them in another order (Geyser) or add their own.
var VanillaKeys = []string{"hostname", "gametype", "game_id", "version", "plugins", "map", "numplayers", "maxplayers", "hostport", "hostip"}

// FullStat is the reply to a full stat request: its keys and values in
// the order received, and every player's name.
type FullStat struct {
	KV      []KeyValue
	Players []Text
}

// Value is the value of key, and whether the server sent it.
func (s *FullStat) Value(key string) (Text, bool) {
	for _, kv := range s.KV {
		if string(kv.Key) == key {
			return kv.Value, true
		}
	}
	return nil, false
}

// Set sets key to v, in its place when the key is there, else at the end.
func (s *FullStat) Set(key string, v Text) {
	for i := range s.KV {
		if string(s.KV[i].Key) == key {
			s.KV[i].Value = v
			return
		}
	}
	s.KV = append(s.KV, KeyValue{Key: Text(key), Value: v})
}

// MOTD is the hostname key, the server's MOTD.
func (s *FullStat) MOTD() Text { v, _ := s.Value("hostname"); return v }

// NumPlayers is the numplayers key as a number; -1 when absent or not a
// number.
func (s *FullStat) NumPlayers() int32 { v, _ := s.Value("numplayers"); n, _ := count(v); return n }

// MaxPlayers is the maxplayers key as a number; -1 when absent or not a
// number.
func (s *FullStat) MaxPlayers() int32 { v, _ := s.Value("maxplayers"); n, _ := count(v); return n }

// Basic is the basic stat the server would send with the same content.
func (s *FullStat) Basic() *BasicStat {
	b := &BasicStat{MOTD: s.MOTD(), NumPlayers: s.NumPlayers(), MaxPlayers: s.MaxPlayers()}
	b.GameType, _ = s.Value("gametype")
	b.Map, _ = s.Value("map")
	b.HostIP, _ = s.Value("hostip")
	if v, ok := s.Value("hostport"); ok {
		p, _ := strconv.ParseUint(string(v), 10, 16)
		b.HostPort = uint16(p)
	}
	return b
}

// fullStatPadding follows the session id of a full stat: GameSpy 3's
// split header ("splitnum", then 0x80 for the last packet, index 0), which
// Minecraft sends though it never splits.
var fullStatPadding = []byte("splitnum\x00\x80\x00")

// playersSection starts the player list of a full stat.
var playersSection = []byte("\x01player_\x00\x00")

// AppendReply appends s as the reply to a full stat request of session
// sessionID. The hostname may hold NULs (some servers send them, and the
// parsers cope); other keys and values, and names, may not, nor may a key
// or a name be empty.
func (s *FullStat) AppendReply(b []byte, sessionID uint32) ([]byte, error) {
	for _, kv := range s.KV {
		if len(kv.Key) == 0 || bytes.IndexByte(kv.Key, 0) >= 0 || string(kv.Key) != "hostname" && bytes.IndexByte(kv.Value, 0) >= 0 {
			return b, ErrNULInText
		}
	}
	for _, p := range s.Players {
		if len(p) == 0 || bytes.IndexByte(p, 0) >= 0 {
			return b, ErrNULInText
		}
	}
	b = append(b, TypeStat)
	b = binary.BigEndian.AppendUint32(b, sessionID)
	b = append(b, fullStatPadding...)
	for _, kv := range s.KV {
		b = append(append(b, kv.Key...), 0)
		b = append(append(b, kv.Value...), 0)
	}
	b = append(b, 0)
	b = append(b, playersSection...)
	for _, p := range s.Players {
		b = append(append(b, p...), 0)
	}
	return append(b, 0), nil
}

// ParseFullStat reads the reply to a full stat request. Keys come in any
// order and are kept in it. The hostname's value may hold NULs: it ends
// where the next known key, or the end of the key list, begins.
func ParseFullStat(b []byte) (sessionID uint32, s *FullStat, err error) {
	sid, err := replyHeader(b, TypeStat, "full-stat")
	if err != nil {
		return 0, nil, err
	}
	off := 5
	if len(b)-off < len(fullStatPadding) || !bytes.Equal(b[off:off+9], fullStatPadding[:9]) {
		if len(b)-off < len(fullStatPadding) && bytes.HasPrefix(fullStatPadding, b[off:]) {
			return sid, nil, parseErr("full-stat", len(b), ErrTruncated)
		}
		return sid, nil, parseErr("full-stat", off, detail(ErrMalformed, "no splitnum header"))
	}
	off += len(fullStatPadding)
	cstr := func() (Text, error) {
		i := bytes.IndexByte(b[off:], 0)
		if i < 0 {
			return nil, parseErr("full-stat", len(b), detail(ErrTruncated, "a string has no NUL"))
		}
		t := Text(b[off : off+i : off+i])
		off += i + 1
		return t, nil
	}
	s = new(FullStat)
	for {
		key, err := cstr()
		if err != nil {
			return sid, nil, parseErr("full-stat", len(b), detail(ErrTruncated, "the key list has no end"))
		}
		if len(key) == 0 {
			break
		}
		var v Text
		if string(key) == "hostname" {
			end := motdEnd(b[off:])
			if end >= 0 {
				v, off = Text(b[off:off+end:off+end]), off+end+1
			}
		}
		if v == nil {
			if v, err = cstr(); err != nil {
				return sid, nil, err
			}
		}
		s.KV = append(s.KV, KeyValue{Key: key, Value: v})
	}
	if !bytes.HasPrefix(b[off:], playersSection) {
		if bytes.HasPrefix(playersSection, b[off:]) {
			return sid, nil, parseErr("full-stat", len(b), ErrTruncated)
		}
		return sid, nil, parseErr("full-stat", off, detail(ErrMalformed, "no player_ section after the keys"))
	}
	off += len(playersSection)
	for {
		name, err := cstr()
		if err != nil {
			return sid, nil, parseErr("full-stat", len(b), detail(ErrTruncated, "the player list has no end"))
		}
		if len(name) == 0 {
			return sid, s, nil
		}
		s.Players = append(s.Players, name)
	}
}

// motdEnd is where a hostname value starting b ends: the earliest NUL
// that is followed by another known key and a NUL, or that ends the key
// list; -1 when there is none.
func motdEnd(b []byte) int {
	end := -1
	consider := func(i int) {
		if i >= 0 && (end < 0 || i < end) {
			end = i
		}
	}
	var pat [32]byte
	for _, k := range VanillaKeys[1:] {
		p := append(append(append(pat[:0], 0), k...), 0)
		consider(bytes.Index(b, p))
	}
	consider(bytes.Index(b, append([]byte{0, 0}, playersSection...)))
	return end
}
