package a2s

import (
	"bytes"
	"math"

	"github.com/gsq-project/gsq/internal/wire"
)

// Player is one entry of an A2S_PLAYER reply.
type Player struct {
	Index    uint8   // as sent; most servers send 0 for everyone
	Name     Text    // often empty (CS2, Rust, connecting players)
	Score    int32   // signed: negative scores are common
	Duration float32 // seconds connected; The Ship's bots send -1
	Deaths   int32   // The Ship only
	Money    int32   // The Ship only
}

// Players is an A2S_PLAYER reply.
type Players struct {
	Count uint8    // the count byte as sent; it often disagrees with len(List)
	List  []Player // every entry in the packet
	Ship  bool     // The Ship's trailing deaths/money block was present
}

// playerMin is the smallest player entry: index, empty name, score, duration.
const playerMin = 1 + 1 + 4 + 4

// shipEntry is the size of one player's deaths and money in The Ship block.
const shipEntry = 8

// ParsePlayers parses an A2S_PLAYER reply (b includes the 0xFFFFFFFF
// header). Entries are read to the end of the packet: the count byte is
// kept in Count but not trusted, so servers with more than 255 players or
// a wrong count still parse. The Ship appends deaths and money for every
// player after the list; that block is recognised, whatever the AppID,
// when at an entry boundary exactly 8 bytes per entry read so far remain
// and those bytes do not read as whole player entries (so a valid
// non-Ship reply is never misread; a Ship block that happens to read as
// entries, such as 40 zero bytes, is taken as entries). A packet ending
// inside an entry is an error. The result does not alias b.
func ParsePlayers(b []byte) (*Players, error) { return parsePlayers(b, false) }

// parsePlayers is ParsePlayers; when owned, the names alias b instead of a
// copy of it.
func parsePlayers(b []byte, owned bool) (*Players, error) {
	if _, _, err := openSimple(b, "players", string(TypePlayerReply)); err != nil {
		return nil, err
	}
	if !owned {
		b = bytes.Clone(b)
	}
	d := decoder{r: newBodyReader(b), packet: "players"}
	p := &Players{Count: d.u8()}
	if d.err != nil {
		return nil, d.err
	}
	p.List = make([]Player, 0, min(int(p.Count), d.r.Len()/playerMin))
	for d.r.Len() > 0 {
		if n := len(p.List); n > 0 && d.r.Len() == n*shipEntry && !entriesToEnd(d.r) {
			p.Ship = true
			for i := range p.List {
				p.List[i].Deaths = int32(d.u32())
				p.List[i].Money = int32(d.u32())
			}
			break
		}
		var pl Player
		pl.Index = d.u8()
		pl.Name = d.text()
		pl.Score = int32(d.u32())
		pl.Duration = math.Float32frombits(d.u32())
		if d.err != nil {
			return nil, d.err
		}
		p.List = append(p.List, pl)
	}
	return p, nil
}

// entriesToEnd reports whether the rest of r reads as whole player entries.
func entriesToEnd(r wire.Reader) bool {
	for r.Len() > 0 {
		if r.Skip(1) != nil {
			return false
		}
		if _, err := r.CString(); err != nil {
			return false
		}
		if r.Skip(8) != nil {
			return false
		}
	}
	return true
}

// AppendBinary appends the reply, header included. The count byte is Count,
// or len(List) (at most 255) when Count is 0. The Ship block follows the
// list when Ship is set.
func (p *Players) AppendBinary(b []byte) ([]byte, error) {
	e := encoder{b: wire.AppendUint32(b, HeaderSimple)}
	e.u8(TypePlayerReply)
	count := p.Count
	if count == 0 {
		count = uint8(min(len(p.List), math.MaxUint8))
	}
	e.u8(count)
	for i := range p.List {
		pl := &p.List[i]
		e.u8(pl.Index)
		e.text(pl.Name)
		e.u32(uint32(pl.Score))
		e.u32(math.Float32bits(pl.Duration))
	}
	if p.Ship {
		for i := range p.List {
			e.u32(uint32(p.List[i].Deaths))
			e.u32(uint32(p.List[i].Money))
		}
	}
	return e.result(b)
}
