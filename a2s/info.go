package a2s

import (
	"bytes"
	"fmt"

	"github.com/gsq-project/gsq/internal/wire"
)

// AppIDTheShip is The Ship's Steam AppID; its A2S_INFO reply carries the
// extra [ShipInfo] fields.
const AppIDTheShip = 2400

// Extra Data Flag bits of a Source A2S_INFO reply: each set bit means the
// matching optional fields follow the version string.
const (
	EDFPort      uint8 = 0x80 // Port
	EDFSteamID   uint8 = 0x10 // SteamID
	EDFSpectator uint8 = 0x40 // SpectatorPort and SpectatorName (SourceTV)
	EDFKeywords  uint8 = 0x20 // Keywords
	EDFGameID    uint8 = 0x01 // GameID
)

// ServerType is the server type byte of A2S_INFO, normalised to lower case
// (the GoldSource 'm' reply uses 'D', 'L' and 'P').
type ServerType byte

// Server types.
const (
	ServerUnknown      ServerType = 0   // sent by Rag Doll Kung Fu and SiN 1
	ServerDedicated    ServerType = 'd' // dedicated server
	ServerNonDedicated ServerType = 'l' // listen (non-dedicated) server
	ServerProxy        ServerType = 'p' // SourceTV relay or HLTV proxy
)

// String returns "dedicated", "non-dedicated", "proxy" or "unknown".
func (s ServerType) String() string {
	switch s {
	case ServerDedicated:
		return "dedicated"
	case ServerNonDedicated:
		return "non-dedicated"
	case ServerProxy:
		return "proxy"
	}
	return "unknown"
}

// Environment is the operating system byte of A2S_INFO, normalised to lower
// case (the GoldSource 'm' reply uses 'L' and 'W').
type Environment byte

// Environments. Mac servers send 'm' or, since Left 4 Dead, 'o'.
const (
	EnvironmentLinux   Environment = 'l'
	EnvironmentWindows Environment = 'w'
	EnvironmentMac     Environment = 'm'
	EnvironmentMacOld  Environment = 'o'
)

// String returns "linux", "windows", "mac" or "unknown".
func (e Environment) String() string {
	switch e {
	case EnvironmentLinux:
		return "linux"
	case EnvironmentWindows:
		return "windows"
	case EnvironmentMac, EnvironmentMacOld:
		return "mac"
	}
	return "unknown"
}

// Info is an A2S_INFO reply, either the Source 'I' format or the obsolete
// GoldSource 'm' format. Fields a format does not carry are zero.
type Info struct {
	Format      byte // TypeInfoReply ('I') or TypeInfoReplyGoldSource ('m'); 0 encodes as 'I'
	Protocol    uint8
	Address     Text // 'm' only: the server's "IP:port"
	Name        Text
	Map         Text
	Folder      Text
	Game        Text
	ShortAppID  uint16 // the raw 16-bit AppID field ('I' only; 0 on many modern games, see AppID)
	Players     uint8
	MaxPlayers  uint8
	Bots        uint8
	ServerType  ServerType
	Environment Environment
	Visibility  uint8     // 0 public, 1 password protected
	VAC         uint8     // 0 unsecured, 1 secured
	Ship        *ShipInfo // The Ship only, else nil
	IsMod       bool      // 'm' only: the Mod byte was set
	Mod         *ModInfo  // 'm' only: the mod section, if the server sent it
	// NoBots ('m' only) reports a reply that ended before the Bots byte,
	// as some non-Steam GoldSource servers send (WoozyMasta/a2s issue #6); Bots
	// is 0 then, for want of a value.
	NoBots  bool
	Version Text // 'I' only

	EDF           uint8  // extra data flag as sent; 0 if absent
	Port          uint16 // EDFPort
	SteamID       uint64 // EDFSteamID
	SpectatorPort uint16 // EDFSpectator
	SpectatorName Text   // EDFSpectator
	Keywords      Text   // EDFKeywords
	GameID        uint64 // EDFGameID
}

// ShipInfo holds the extra A2S_INFO fields sent by The Ship.
type ShipInfo struct {
	Mode      uint8 // 0 hunt, 1 elimination, 2 duel, 3 deathmatch, 4 VIP team, 5 team elimination
	Witnesses uint8 // witnesses needed to arrest a player
	Duration  uint8 // seconds before a witnessed player is arrested
}

// ModInfo is the mod section of a GoldSource 'm' A2S_INFO reply.
type ModInfo struct {
	Link         Text
	DownloadLink Text
	Version      uint32
	Size         uint32 // bytes
	Type         uint8  // 0 single and multiplayer, 1 multiplayer only
	DLL          uint8  // 0 uses the Half-Life DLL, 1 its own
}

// AppID returns the Steam AppID: the low 24 bits of GameID when the reply
// carries a nonzero GameID (the 16-bit field is truncated and is 0 on many
// modern games), else ShortAppID.
func (in *Info) AppID() uint32 {
	if in.EDF&EDFGameID != 0 && in.GameID != 0 {
		return uint32(in.GameID & 0xFFFFFF)
	}
	return uint32(in.ShortAppID)
}

// PlayerCounts returns the player and slot counts. Servers with more than
// 255 slots (Rust) overflow the byte fields and put the real values in the
// keywords as "cp<N>" (current players) and "mp<N>" (max players); those
// override the bytes when present.
func (in *Info) PlayerCounts() (players, max int) {
	players, max = int(in.Players), int(in.MaxPlayers)
	if in.EDF&EDFKeywords == 0 {
		return players, max
	}
	for kw := range bytes.SplitSeq(in.Keywords, []byte(",")) {
		if len(kw) < 3 || len(kw) > 11 || kw[1] != 'p' || kw[0] != 'c' && kw[0] != 'm' {
			continue
		}
		n, ok := keywordCount(kw[2:])
		if !ok {
			continue
		}
		if kw[0] == 'c' {
			players = n
		} else {
			max = n
		}
	}
	return players, max
}

// keywordCount reads the decimal digits of a cp/mp keyword (at most 9 of
// them, so the count fits any int), without allocating: PlayerCounts runs
// for every server a scan prints.
func keywordCount(digits []byte) (int, bool) {
	n := 0
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// infoBlock lets ParseInfo allocate the Info and its optional parts at once.
type infoBlock struct {
	info Info
	ship ShipInfo
	mod  ModInfo
}

// ParseInfo parses an A2S_INFO reply, 'I' or 'm'. b is the whole message
// including the 0xFFFFFFFF header (reassembled if it was split). The result
// does not alias b: its Text fields share one copy of it.
//
// The Ship's extra fields are read when ShortAppID is 2400. When it is not
// and the reply fails to parse, leaves bytes unread, or says AppID 2400 in
// its GameID, it is parsed again with them, and that reading wins if it
// parses and its GameID says AppID 2400. A VAC byte other than 0 or 1 is
// rejected with ErrMalformed: it means the server left a field out and
// every later field would be garbage. Bytes after the last announced field
// are ignored. See the package documentation for the 'm' mod section.
func ParseInfo(b []byte) (*Info, error) { return parseInfo(b, false, nil) }

// parseInfo is ParseInfo; when owned, the Text fields alias b instead of a
// copy of it (the client hands over buffers it will not touch again). The
// result is built in blk when it is not nil.
func parseInfo(b []byte, owned bool, blk *infoBlock) (*Info, error) {
	_, t, err := openSimple(b, "info", "Im")
	if err != nil {
		return nil, err
	}
	if !owned {
		b = bytes.Clone(b)
	}
	if blk == nil {
		blk = new(infoBlock)
	}
	d := decoder{r: newBodyReader(b), packet: "info"}
	if t == TypeInfoReplyGoldSource {
		blk.info.parseGoldSource(&d, &blk.mod)
		if d.err != nil {
			return nil, d.err
		}
		return &blk.info, nil
	}
	start := d
	blk.info.parseSource(&d, &blk.ship, false)
	if blk.info.Ship == nil && (d.err != nil || d.r.Len() > 0 || blk.info.AppID() == AppIDTheShip) {
		var alt Info
		d2 := start
		alt.parseSource(&d2, &blk.ship, true)
		if d2.err == nil && alt.AppID() == AppIDTheShip {
			blk.info, d = alt, d2
		}
	}
	if d.err != nil {
		return nil, d.err
	}
	return &blk.info, nil
}

func (in *Info) parseSource(d *decoder, ship *ShipInfo, forceShip bool) {
	in.Format = TypeInfoReply
	in.Protocol = d.u8()
	in.Name = d.text()
	in.Map = d.text()
	in.Folder = d.text()
	in.Game = d.text()
	in.ShortAppID = d.u16()
	in.Players = d.u8()
	in.MaxPlayers = d.u8()
	in.Bots = d.u8()
	in.ServerType = ServerType(lower(d.u8()))
	in.Environment = Environment(lower(d.u8()))
	in.Visibility = d.u8()
	in.VAC = d.vac()
	if in.ShortAppID == AppIDTheShip || forceShip {
		ship.Mode = d.u8()
		ship.Witnesses = d.u8()
		ship.Duration = d.u8()
		in.Ship = ship
	}
	in.Version = d.text()
	if d.err != nil || d.r.Len() == 0 {
		return
	}
	in.EDF = d.u8()
	if in.EDF&EDFPort != 0 {
		in.Port = d.u16()
	}
	if in.EDF&EDFSteamID != 0 {
		in.SteamID = d.u64()
	}
	if in.EDF&EDFSpectator != 0 {
		in.SpectatorPort = d.u16()
		in.SpectatorName = d.text()
	}
	if in.EDF&EDFKeywords != 0 {
		in.Keywords = d.text()
	}
	if in.EDF&EDFGameID != 0 {
		in.GameID = d.u64()
	}
}

// modTail is the size of the fields after the mod section of an 'm' reply.
const modTail = 2 // VAC, Bots

func (in *Info) parseGoldSource(d *decoder, mod *ModInfo) {
	in.Format = TypeInfoReplyGoldSource
	in.Address = d.text()
	in.Name = d.text()
	in.Map = d.text()
	in.Folder = d.text()
	in.Game = d.text()
	in.Players = d.u8()
	in.MaxPlayers = d.u8()
	in.Protocol = d.u8()
	in.ServerType = ServerType(lower(d.u8()))
	in.Environment = Environment(lower(d.u8()))
	in.Visibility = d.u8()
	in.IsMod = d.u8() != 0
	// Some servers (Sven Co-op, non-Steam builds) set the Mod byte but
	// leave the section out: only read it if more than VAC+Bots remain.
	if in.IsMod && d.err == nil && d.r.Len() > modTail {
		mod.Link = d.text()
		mod.DownloadLink = d.text()
		d.u8() // NUL byte
		mod.Version = d.u32()
		mod.Size = d.u32()
		mod.Type = d.u8()
		mod.DLL = d.u8()
		in.Mod = mod
	}
	in.VAC = d.vac()
	if d.err == nil && d.r.Len() == 0 {
		in.NoBots = true
		return
	}
	in.Bots = d.u8()
}

// vac reads the VAC byte and rejects values other than 0 and 1.
func (d *decoder) vac() uint8 {
	off := d.r.Offset()
	v := d.u8()
	if d.err == nil && v > 1 {
		d.err = parseErr(d.packet, off,
			fmt.Errorf("%w: VAC byte 0x%02x is not 0 or 1 (a field is missing)", ErrMalformed, v))
	}
	return v
}

// AppendBinary appends the reply, header included, in the format named by
// Format. The Ship block is written when Ship is not nil, the 'm' mod
// section when Mod is not nil, and the EDF fields whose bit is set in EDF.
// Text fields must not contain NUL bytes. Server type and environment are
// written as stored, lower case, in both formats (the spec's 'm' capture
// uses lower case too).
func (in *Info) AppendBinary(b []byte) ([]byte, error) {
	e := encoder{b: wire.AppendUint32(b, HeaderSimple)}
	switch in.Format {
	case TypeInfoReplyGoldSource:
		in.appendGoldSource(&e)
	case TypeInfoReply, 0:
		in.appendSource(&e)
	default:
		return b, fmt.Errorf("%w 0x%02x for info", ErrUnexpectedType, in.Format)
	}
	return e.result(b)
}

func (in *Info) appendSource(e *encoder) {
	e.u8(TypeInfoReply)
	e.u8(in.Protocol)
	e.text(in.Name)
	e.text(in.Map)
	e.text(in.Folder)
	e.text(in.Game)
	e.u16(in.ShortAppID)
	e.u8(in.Players)
	e.u8(in.MaxPlayers)
	e.u8(in.Bots)
	e.u8(byte(in.ServerType))
	e.u8(byte(in.Environment))
	e.u8(in.Visibility)
	e.u8(in.VAC)
	if in.Ship != nil {
		e.u8(in.Ship.Mode)
		e.u8(in.Ship.Witnesses)
		e.u8(in.Ship.Duration)
	}
	e.text(in.Version)
	if in.EDF == 0 {
		return
	}
	e.u8(in.EDF)
	if in.EDF&EDFPort != 0 {
		e.u16(in.Port)
	}
	if in.EDF&EDFSteamID != 0 {
		e.u64(in.SteamID)
	}
	if in.EDF&EDFSpectator != 0 {
		e.u16(in.SpectatorPort)
		e.text(in.SpectatorName)
	}
	if in.EDF&EDFKeywords != 0 {
		e.text(in.Keywords)
	}
	if in.EDF&EDFGameID != 0 {
		e.u64(in.GameID)
	}
}

func (in *Info) appendGoldSource(e *encoder) {
	e.u8(TypeInfoReplyGoldSource)
	e.text(in.Address)
	e.text(in.Name)
	e.text(in.Map)
	e.text(in.Folder)
	e.text(in.Game)
	e.u8(in.Players)
	e.u8(in.MaxPlayers)
	e.u8(in.Protocol)
	e.u8(byte(in.ServerType))
	e.u8(byte(in.Environment))
	e.u8(in.Visibility)
	if in.IsMod || in.Mod != nil {
		e.u8(1)
	} else {
		e.u8(0)
	}
	if m := in.Mod; m != nil {
		e.text(m.Link)
		e.text(m.DownloadLink)
		e.u8(0)
		e.u32(m.Version)
		e.u32(m.Size)
		e.u8(m.Type)
		e.u8(m.DLL)
	}
	e.u8(in.VAC)
	if !in.NoBots {
		e.u8(in.Bots)
	}
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
