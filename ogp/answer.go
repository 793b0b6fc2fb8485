package ogp

import (
	"fmt"
	"net/netip"
)

// Answer is the body of a Default Query v1 answer (spec 3.4). Request is
// the echoed RequestFlags: a section is valid only when its bit is set,
// and within a section the echoed field mask says which fields are.
type Answer struct {
	GameID  uint16
	Request RequestFlags
	Info    ServerInfo // with RequestServerInfo
	Teams   TeamList   // with RequestTeams
	Players PlayerList // with RequestPlayers
	Rules   []Rule     // with RequestRules
	AddOns  AddOnList  // with RequestAddOns
	Limits  []Limit    // with RequestLimits
}

// OS is the OperatingSystem of the server flags.
type OS uint8

// Operating systems (spec 3.4 "ServerFlags").
const (
	OSUnknown OS = 0
	OSWindows OS = 1
	OSLinux   OS = 2
	OSMac     OS = 3
)

// String returns "windows", "linux", "mac", "unknown" or "unknown(N)".
func (o OS) String() string {
	switch o {
	case OSUnknown:
		return "unknown"
	case OSWindows:
		return "windows"
	case OSLinux:
		return "linux"
	case OSMac:
		return "mac"
	}
	return fmt.Sprintf("unknown(%d)", uint8(o))
}

// ServerFlags is the SERVERINFO ServerFlags VarBitArray, which the two
// dialects lay out differently (see the package doc).
type ServerFlags struct {
	Dedicated bool
	Proxy     bool
	Password  bool // V1 only
	OS        OS   // 4 bits in V091, 3 bits in V1
}

func serverFlagsFromBits(v uint64, d Dialect) ServerFlags {
	if d == V1 {
		return ServerFlags{Dedicated: v&3 == 2, Password: v&4 != 0, Proxy: v&8 != 0, OS: OS(v >> 4 & 7)}
	}
	return ServerFlags{Dedicated: v&1 != 0, Proxy: v&2 != 0, OS: OS(v >> 2 & 15)}
}

func (f ServerFlags) bits(d Dialect) uint64 {
	var v uint64
	if d == V1 {
		v = 1 // listen
		if f.Dedicated {
			v = 2
		}
		if f.Password {
			v |= 4
		}
		if f.Proxy {
			v |= 8
		}
		return v | uint64(f.OS&7)<<4
	}
	if f.Dedicated {
		v |= 1
	}
	if f.Proxy {
		v |= 2
	}
	return v | uint64(f.OS&15)<<2
}

// ModInfo is the bMod part of SERVERINFO. V091 sends Name and Dir; V1
// sends Name and, when Name is not empty, the fields of
// [ServerInfo.ModFields].
type ModInfo struct {
	Name       Text // empty: no modification
	Dir        Text // V091
	Identifier Text // V1, ModIdentifier
	Size       uint32
	Version    Text
	URL        Text
	Author     Text
}

// MapInfo is a map of SERVERINFO. V091 sends Name and File; V1 sends Name
// and the fields of [ServerInfo.MapFields].
type MapInfo struct {
	Name     Text
	File     Text // file name without extension; empty: same as Name
	FileSize uint32
	FileMD5  [16]byte
	Version  Text
	URL      Text
	Author   Text
}

// ServerInfo is the SERVERINFO section. Fields is the echoed mask; a
// field is valid only when its bit is set.
type ServerInfo struct {
	Fields        InfoFields
	ModFields     ModFields // V1: sent after a non-empty Mod.Name
	MapFields     MapFields // V1: sent first in the map block, for both maps
	GameName      Text
	Flags         ServerFlags
	Mod           ModInfo
	ConnectPort   uint16 // 0: unknown
	HostName      Text
	HostNameColor ColorInfo // with bColoredNames
	Map           MapInfo
	NextMap       MapInfo
	GameType      Text
	GameMode      Text
	PlayerCount   uint32
	SlotMax       uint32
	BotCount      uint32
	ReservedSlots uint32
}

// TeamList is the TEAMLIST section. Count is the TeamCount; Teams holds
// the entries when Fields is not empty (entries with no field take no
// bytes, so none are materialised).
type TeamList struct {
	Count  int
	Fields TeamFields
	Teams  []Team
}

// Team is a TEAMLISTENTRY.
type Team struct {
	Name        Text
	NameColor   ColorInfo // with bColoredNames
	Score       int32
	AveragePing uint16 // milliseconds
	AverageLoss uint16
	PlayerCount uint32
	Color       uint16 // RGB565
}

// PlayerList is the PLAYERLIST section, shaped like [TeamList].
type PlayerList struct {
	Count   int
	Fields  PlayerFields
	Players []Player
}

// Player is a PLAYERLISTENTRY.
type Player struct {
	Flags     PlayerState
	Slot      uint32
	Name      Text
	NameColor ColorInfo // with bColoredNames
	Team      int32     // index into the team list; -1 not assigned, -2 spectator
	Class     Text
	Race      Text
	Score     int32
	Frags     int32
	Kills     uint32
	Deaths    uint32
	Suicides  uint32
	TeamKills uint32
	ID        uint32 // server-wide unique
	GlobalID  Text
	Ping      uint16 // milliseconds
	Loss      uint16
	Model     Text
	Time      uint16 // seconds on the server
	IPv4      uint32 // V091 PlayerIPv4, a little-endian UINT32
	Address   []byte // V1 PlayerAddress, raw
}

// Addr returns the player's address: from IPv4 in V091 (the UINT32 a.b.c.d
// is a<<24|b<<16|c<<8|d), or from a 4- or 16-byte V1 Address. ok is false
// when there is none.
func (p *Player) Addr() (addr netip.Addr, ok bool) {
	if p.Address != nil {
		return netip.AddrFromSlice(p.Address)
	}
	if p.IPv4 == 0 {
		return netip.Addr{}, false
	}
	v := p.IPv4
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// Rule is a RULELISTENTRY.
type Rule struct {
	Key   Text
	Value Text
}

// AddOnList is the ADDONLIST section, shaped like [TeamList].
type AddOnList struct {
	Count  int
	Fields AddOnFields
	AddOns []AddOn
}

// AddOn is an ADDONLISTENTRY.
type AddOn struct {
	Flags     AddOnState
	ShortName Text
	LongName  Text
	Version   Text
}

// LimitType is the kind of a limit.
type LimitType uint8

// Limit types (spec 3.4 "LIMITLISTENTRY").
const (
	LimitTime        LimitType = 0 // seconds
	LimitPlayerScore LimitType = 1
	LimitRounds      LimitType = 2
	LimitTeamScore   LimitType = 3
)

// String returns "time", "player-score", "rounds", "team-score" or
// "unknown(N)".
func (t LimitType) String() string {
	switch t {
	case LimitTime:
		return "time"
	case LimitPlayerScore:
		return "player-score"
	case LimitRounds:
		return "rounds"
	case LimitTeamScore:
		return "team-score"
	}
	return fmt.Sprintf("unknown(%d)", uint8(t))
}

// Limit is a LIMITLISTENTRY.
type Limit struct {
	Type    LimitType // 4 bits
	HasLeft bool      // bLimitLeft: Left is valid
	Limit   uint32
	Left    uint32
}

// Minimum encoded entry sizes, for the count sanity checks.
const (
	minRuleLen  = 2 // two empty SzStrings
	minLimitLen = 2 // LimitType and Limit
)

// AppendBinary appends the answer body in V091; see [Answer.Append].
func (a *Answer) AppendBinary(b []byte) ([]byte, error) { return a.Append(b, V091) }

// Append appends the answer body in dialect d. Only the sections in
// a.Request and the fields in each echoed mask are written. A list's
// count is the length of its slice, or Count when the slice is empty.
func (a *Answer) Append(b []byte, d Dialect) ([]byte, error) {
	e := encoder{b: b, d: d}
	a.encode(&e)
	return e.result()
}

func (a *Answer) encode(e *encoder) {
	colored := a.Request&RequestColoredNames != 0
	e.u16(a.GameID)
	e.bitArray(uint64(a.Request))
	if a.Request&RequestServerInfo != 0 {
		a.Info.encode(e, colored)
	}
	if a.Request&RequestTeams != 0 {
		l := &a.Teams
		encodeList(e, l.Teams, l.Count, uint64(l.Fields), func(t *Team) { t.encode(e, l.Fields, colored) })
	}
	if a.Request&RequestPlayers != 0 {
		l := &a.Players
		encodeList(e, l.Players, l.Count, uint64(l.Fields), func(p *Player) { p.encode(e, l.Fields, colored) })
	}
	if a.Request&RequestRules != 0 {
		e.count(len(a.Rules), maxU32)
		for _, r := range a.Rules {
			e.text(r.Key)
			e.text(r.Value)
		}
	}
	if a.Request&RequestAddOns != 0 {
		l := &a.AddOns
		encodeList(e, l.AddOns, l.Count, uint64(l.Fields), func(x *AddOn) { x.encode(e, l.Fields) })
	}
	if a.Request&RequestLimits != 0 {
		e.count(len(a.Limits), maxU32)
		for _, l := range a.Limits {
			v := uint64(l.Type&15) << 1
			if l.HasLeft {
				v |= 1
			}
			e.bitArray(v)
			e.varUint(l.Limit)
			if l.HasLeft {
				e.varUint(l.Left)
			}
		}
	}
}

// encodeList writes a TEAMLIST, PLAYERLIST or ADDONLIST: the count, the
// mask when the count is not 0, and the entries when the mask is not
// empty.
func encodeList[T any](e *encoder, list []T, count int, fields uint64, enc func(*T)) {
	n := listLen(len(list), count)
	e.count(n, maxU32)
	if n != 0 {
		e.bitArray(fields)
	}
	if fields != 0 {
		e.limit(n, int64(len(list)))
		for i := range list {
			enc(&list[i])
		}
	}
}

// maxU32 is the largest VarUINT8-32, as an int.
const maxU32 = 1<<32 - 1

// listLen is the count to send: the entries, or count when there are none.
func listLen(entries, count int) int {
	if entries > 0 {
		return entries
	}
	return count
}

func (s *ServerInfo) encode(e *encoder, colored bool) {
	f := s.Fields
	e.bitArray(infoToWire(f, e.d))
	if f&InfoGameName != 0 {
		e.text(s.GameName)
	}
	if f&InfoServerFlags != 0 {
		e.bitArray(s.Flags.bits(e.d))
	}
	if e.d == V1 {
		s.encodeV1(e, colored)
	} else {
		s.encodeV091(e, colored)
	}
	s.encodeCounts(e)
}

// encodeV091 writes ModName .. GameMode in the v0.91 order.
func (s *ServerInfo) encodeV091(e *encoder, colored bool) {
	f := s.Fields
	if f&InfoMod != 0 {
		e.text(s.Mod.Name)
		e.text(s.Mod.Dir)
	}
	if f&InfoConnectPort != 0 {
		e.u16(s.ConnectPort)
	}
	s.encodeHostName(e, colored)
	if f&InfoMap != 0 {
		e.text(s.Map.Name)
		e.text(s.Map.File)
	}
	if f&InfoNextMap != 0 {
		e.text(s.NextMap.Name)
		e.text(s.NextMap.File)
	}
	s.encodeGameTypeMode(e)
}

// encodeV1 writes HostName .. the map block in the SDK order.
func (s *ServerInfo) encodeV1(e *encoder, colored bool) {
	f := s.Fields
	s.encodeHostName(e, colored)
	if f&InfoConnectPort != 0 {
		e.u16(s.ConnectPort)
	}
	if f&InfoMod != 0 {
		e.text(s.Mod.Name)
		if len(s.Mod.Name) != 0 {
			m := s.ModFields
			e.bitArray(uint64(m))
			if m&ModIdentifier != 0 {
				e.text(s.Mod.Identifier)
			}
			if m&ModSize != 0 {
				e.u32(s.Mod.Size)
			}
			if m&ModVersion != 0 {
				e.text(s.Mod.Version)
			}
			if m&ModURL != 0 {
				e.text(s.Mod.URL)
			}
			if m&ModAuthor != 0 {
				e.text(s.Mod.Author)
			}
		}
	}
	s.encodeGameTypeMode(e)
	if f&InfoMap != 0 {
		e.bitArray(uint64(s.MapFields))
		s.Map.encodeV1(e, s.MapFields)
		if f&InfoNextMap != 0 {
			s.NextMap.encodeV1(e, s.MapFields)
		}
	}
}

func (s *ServerInfo) encodeHostName(e *encoder, colored bool) {
	if s.Fields&InfoHostName != 0 {
		e.text(s.HostName)
		if colored {
			e.colorInfo(s.HostNameColor)
		}
	}
}

func (s *ServerInfo) encodeGameTypeMode(e *encoder) {
	if s.Fields&InfoGameType != 0 {
		e.text(s.GameType)
	}
	if s.Fields&InfoGameMode != 0 {
		e.text(s.GameMode)
	}
}

func (s *ServerInfo) encodeCounts(e *encoder) {
	f := s.Fields
	if f&InfoPlayerCount != 0 {
		e.varUint(s.PlayerCount)
	}
	if f&InfoSlotMax != 0 {
		e.varUint(s.SlotMax)
	}
	if f&InfoBotCount != 0 {
		e.varUint(s.BotCount)
	}
	if f&InfoReservedSlots != 0 {
		e.varUint(s.ReservedSlots)
	}
}

func (m *MapInfo) encodeV1(e *encoder, f MapFields) {
	e.text(m.Name)
	if f&MapFileName != 0 {
		e.text(m.File)
	}
	if f&MapFileSize != 0 {
		e.u32(m.FileSize)
	}
	if f&MapFileMD5 != 0 {
		e.b = append(e.b, m.FileMD5[:]...)
	}
	if f&MapVersion != 0 {
		e.text(m.Version)
	}
	if f&MapURL != 0 {
		e.text(m.URL)
	}
	if f&MapAuthor != 0 {
		e.text(m.Author)
	}
}

func (t *Team) encode(e *encoder, f TeamFields, colored bool) {
	if f&TeamName != 0 {
		e.text(t.Name)
		if colored {
			e.colorInfo(t.NameColor)
		}
	}
	if f&TeamScore != 0 {
		e.varSint(t.Score)
	}
	if f&TeamAveragePing != 0 {
		e.u16(t.AveragePing)
	}
	if f&TeamAverageLoss != 0 {
		e.u16(t.AverageLoss)
	}
	if f&TeamPlayerCount != 0 {
		e.varUint(t.PlayerCount)
	}
	if f&TeamColor != 0 {
		e.u16(t.Color)
	}
}

func (p *Player) encode(e *encoder, f PlayerFields, colored bool) {
	if f&PlayerFlags != 0 {
		e.bitArray(uint64(p.Flags))
	}
	if f&PlayerSlot != 0 {
		e.varUint(p.Slot)
	}
	if f&PlayerName != 0 {
		e.text(p.Name)
		if colored {
			e.colorInfo(p.NameColor)
		}
	}
	if f&PlayerTeam != 0 {
		e.varSint(p.Team)
	}
	if f&PlayerClass != 0 {
		e.text(p.Class)
	}
	if f&PlayerRace != 0 {
		e.text(p.Race)
	}
	if f&PlayerScore != 0 {
		e.varSint(p.Score)
	}
	if f&PlayerFrags != 0 {
		e.varSint(p.Frags)
	}
	if f&PlayerKills != 0 {
		e.varUint(p.Kills)
	}
	if f&PlayerDeaths != 0 {
		e.varUint(p.Deaths)
	}
	if f&PlayerSuicides != 0 {
		e.varUint(p.Suicides)
	}
	if f&PlayerTeamKills != 0 {
		e.varUint(p.TeamKills)
	}
	if f&PlayerID != 0 {
		e.u32(p.ID)
	}
	if f&PlayerGlobalID != 0 {
		e.text(p.GlobalID)
	}
	if f&PlayerPing != 0 {
		e.u16(p.Ping)
	}
	if f&PlayerLoss != 0 {
		e.u16(p.Loss)
	}
	if f&PlayerModel != 0 {
		e.text(p.Model)
	}
	if f&PlayerTime != 0 {
		e.u16(p.Time)
	}
	if f&PlayerAddress != 0 {
		if e.d == V1 {
			e.varUint(uint32(len(p.Address)))
			e.b = append(e.b, p.Address...)
		} else {
			e.u32(p.IPv4)
		}
	}
}

func (a *AddOn) encode(e *encoder, f AddOnFields) {
	if f&AddOnFlags != 0 {
		e.bitArray(uint64(a.Flags))
	}
	if f&AddOnShortName != 0 {
		e.text(a.ShortName)
	}
	if f&AddOnLongName != 0 {
		e.text(a.LongName)
	}
	if f&AddOnVersion != 0 {
		e.text(a.Version)
	}
}
