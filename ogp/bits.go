package ogp

import (
	"fmt"
	"math/bits"
	"strings"
)

// A VarBitArray (spec 3.4) carries 7 data bits per byte; bit 7 of a byte
// says another byte follows. This package keeps a VarBitArray in a uint64
// where spec bit "n.x" is bit n*7+x, so arrays of up to 9 bytes (63 bits)
// are representable. Every mask type below is such a value.

// maxBitArrayLen is the longest VarBitArray the decoder reads: the type
// has no length limit of its own, so a peer could send an endless one.
const maxBitArrayLen = 16

// appendBitArray appends v as a minimal VarBitArray (at least one byte,
// continuation bit on every byte but the last).
func appendBitArray(b []byte, v uint64) []byte {
	for {
		c := byte(v & 0x7F)
		v >>= 7
		if v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// bitArrayLen is len(appendBitArray(nil, v)).
func bitArrayLen(v uint64) int {
	if v == 0 {
		return 1
	}
	return (bits.Len64(v) + 6) / 7
}

// bitName names one bit of a mask type for String.
type bitName struct {
	bit  uint64
	name string
}

// maskString lists the names of the bits set in v, and any unnamed rest
// in hex, joined by "|".
func maskString(v uint64, names []bitName) string {
	if v == 0 {
		return "0"
	}
	var parts []string
	for _, n := range names {
		if v&n.bit != 0 {
			parts = append(parts, n.name)
			v &^= n.bit
		}
	}
	if v != 0 {
		parts = append(parts, fmt.Sprintf("%#x", v))
	}
	return strings.Join(parts, "|")
}

// HeadFlags is the header's VarBitArray (spec 3.1).
type HeadFlags uint64

// Header flags.
const (
	FlagAnswer    HeadFlags = 1 << 0 // bit 0.0 bAnswer
	FlagChallenge HeadFlags = 1 << 1 // bit 0.1 bChallengeNumber
	FlagRequestID HeadFlags = 1 << 2 // bit 0.2 bRequestID
	FlagSplit     HeadFlags = 1 << 3 // bit 0.3 bSplit
	// FlagUTF8 is bit 0.4: "(bPassword)", reserved, in v0.91 (it carries no
	// field and this package never sets it in V091); bUTF8 in V1.
	FlagUTF8 HeadFlags = 1 << 4
)

var headFlagNames = []bitName{
	{uint64(FlagAnswer), "answer"}, {uint64(FlagChallenge), "challenge"}, {uint64(FlagRequestID), "request-id"},
	{uint64(FlagSplit), "split"}, {uint64(FlagUTF8), "utf8"},
}

// String lists the flags, e.g. "answer|challenge".
func (f HeadFlags) String() string { return maskString(uint64(f), headFlagNames) }

// RequestFlags says which sections a Default Query asks for and an answer
// carries (spec 3.4 "RequestFlags").
type RequestFlags uint64

// Request flags.
const (
	RequestServerInfo   RequestFlags = 1 << 0       // bit 0.0 bServerInfo
	RequestTeams        RequestFlags = 1 << 1       // bit 0.1 bTeamList
	RequestPlayers      RequestFlags = 1 << 2       // bit 0.2 bPlayerList
	RequestRules        RequestFlags = 1 << 3       // bit 0.3 bRuleList
	RequestAddOns       RequestFlags = 1 << 4       // bit 0.4 bAddOnList
	RequestLimits       RequestFlags = 1 << 5       // bit 0.5 bLimitList
	RequestColoredNames RequestFlags = 1 << (7 + 0) // bit 1.0 bColoredNames

	// RequestAll is every section plus coloured names.
	RequestAll = RequestServerInfo | RequestTeams | RequestPlayers | RequestRules | RequestAddOns |
		RequestLimits | RequestColoredNames
)

var requestNames = []bitName{
	{uint64(RequestServerInfo), "info"}, {uint64(RequestTeams), "teams"}, {uint64(RequestPlayers), "players"},
	{uint64(RequestRules), "rules"}, {uint64(RequestAddOns), "addons"}, {uint64(RequestLimits), "limits"},
	{uint64(RequestColoredNames), "colors"},
}

// String lists the sections, e.g. "info|players".
func (f RequestFlags) String() string { return maskString(uint64(f), requestNames) }

// InfoFields selects SERVERINFO fields. The values are the v0.91 bit
// positions; [V1] moves some of them on the wire (the codec translates).
type InfoFields uint64

// Server info fields.
const (
	InfoGameName      InfoFields = 1 << 0        // bit 0.0 bGameName
	InfoServerFlags   InfoFields = 1 << 1        // bit 0.1 bServerFlags
	InfoMod           InfoFields = 1 << 2        // bit 0.2 bMod (V1: 1.0)
	InfoConnectPort   InfoFields = 1 << 3        // bit 0.3 bConnectPort
	InfoHostName      InfoFields = 1 << (7 + 0)  // bit 1.0 bHostName (V1: 0.2)
	InfoMap           InfoFields = 1 << (7 + 1)  // bit 1.1 bMap (V1: 1.3)
	InfoNextMap       InfoFields = 1 << (7 + 2)  // bit 1.2 bNextMap (V1: 1.4)
	InfoGameType      InfoFields = 1 << (7 + 3)  // bit 1.3 bGameType (V1: 1.1)
	InfoGameMode      InfoFields = 1 << (7 + 4)  // bit 1.4 bGameMode (V1: 1.2)
	InfoPlayerCount   InfoFields = 1 << (14 + 0) // bit 2.0 bPlayerCount
	InfoSlotMax       InfoFields = 1 << (14 + 1) // bit 2.1 bSlotMax
	InfoBotCount      InfoFields = 1 << (14 + 2) // bit 2.2 bBotCount
	InfoReservedSlots InfoFields = 1 << (14 + 3) // bit 2.3 bReservedSlots

	// InfoAll is every server info field.
	InfoAll = InfoGameName | InfoServerFlags | InfoMod | InfoConnectPort | InfoHostName | InfoMap | InfoNextMap |
		InfoGameType | InfoGameMode | InfoPlayerCount | InfoSlotMax | InfoBotCount | InfoReservedSlots
)

var infoNames = []bitName{
	{uint64(InfoGameName), "game-name"}, {uint64(InfoServerFlags), "server-flags"}, {uint64(InfoMod), "mod"},
	{uint64(InfoConnectPort), "connect-port"}, {uint64(InfoHostName), "host-name"}, {uint64(InfoMap), "map"},
	{uint64(InfoNextMap), "next-map"}, {uint64(InfoGameType), "game-type"}, {uint64(InfoGameMode), "game-mode"},
	{uint64(InfoPlayerCount), "player-count"}, {uint64(InfoSlotMax), "slot-max"}, {uint64(InfoBotCount), "bot-count"},
	{uint64(InfoReservedSlots), "reserved-slots"},
}

// String lists the fields, e.g. "game-name|host-name".
func (f InfoFields) String() string { return maskString(uint64(f), infoNames) }

// v1InfoBits maps each InfoFields bit to its V1 wire bit (see the package doc).
var v1InfoBits = [...]struct{ logical, wire InfoFields }{
	{InfoGameName, 1 << 0}, {InfoServerFlags, 1 << 1}, {InfoHostName, 1 << 2}, {InfoConnectPort, 1 << 3},
	{InfoMod, 1 << 7}, {InfoGameType, 1 << 8}, {InfoGameMode, 1 << 9}, {InfoMap, 1 << 10}, {InfoNextMap, 1 << 11},
	{InfoPlayerCount, 1 << 14}, {InfoSlotMax, 1 << 15}, {InfoBotCount, 1 << 16}, {InfoReservedSlots, 1 << 17},
}

// infoToWire translates f to d's wire bits; unknown bits pass through.
func infoToWire(f InfoFields, d Dialect) uint64 {
	if d != V1 {
		return uint64(f)
	}
	var w InfoFields
	for _, m := range v1InfoBits {
		if f&m.logical != 0 {
			w |= m.wire
		}
	}
	return uint64(w | f&^InfoAll)
}

// infoFromWire is the inverse of infoToWire.
func infoFromWire(w uint64, d Dialect) InfoFields {
	if d != V1 {
		return InfoFields(w)
	}
	var f InfoFields
	var known InfoFields
	for _, m := range v1InfoBits {
		known |= m.wire
		if InfoFields(w)&m.wire != 0 {
			f |= m.logical
		}
	}
	return f | InfoFields(w)&^known
}

// TeamFields selects TEAMLISTENTRY fields (spec 3.4 "TeamFields").
type TeamFields uint64

// Team fields.
const (
	TeamName        TeamFields = 1 << 0 // bit 0.0 bTeamName
	TeamScore       TeamFields = 1 << 1 // bit 0.1 bTeamScore
	TeamAveragePing TeamFields = 1 << 2 // bit 0.2 bTeamAveragePing
	TeamAverageLoss TeamFields = 1 << 3 // bit 0.3 bTeamAverageLoss
	TeamPlayerCount TeamFields = 1 << 4 // bit 0.4 bTeamPlayerCount
	TeamColor       TeamFields = 1 << 5 // bit 0.5 bTeamColor

	// TeamAll is every team field.
	TeamAll = TeamName | TeamScore | TeamAveragePing | TeamAverageLoss | TeamPlayerCount | TeamColor
)

var teamNames = []bitName{
	{uint64(TeamName), "name"}, {uint64(TeamScore), "score"}, {uint64(TeamAveragePing), "average-ping"},
	{uint64(TeamAverageLoss), "average-loss"}, {uint64(TeamPlayerCount), "player-count"}, {uint64(TeamColor), "color"},
}

// String lists the fields.
func (f TeamFields) String() string { return maskString(uint64(f), teamNames) }

// PlayerFields selects PLAYERLISTENTRY fields (spec 3.4 "PlayerFields").
type PlayerFields uint64

// Player fields.
const (
	PlayerFlags     PlayerFields = 1 << 0        // bit 0.0 bPlayerFlags
	PlayerSlot      PlayerFields = 1 << 1        // bit 0.1 bPlayerSlot
	PlayerName      PlayerFields = 1 << 2        // bit 0.2 bPlayerName
	PlayerTeam      PlayerFields = 1 << 3        // bit 0.3 bPlayerTeam
	PlayerClass     PlayerFields = 1 << 4        // bit 0.4 bPlayerClass
	PlayerRace      PlayerFields = 1 << 5        // bit 0.5 bPlayerRace
	PlayerScore     PlayerFields = 1 << (7 + 0)  // bit 1.0 bPlayerScore
	PlayerFrags     PlayerFields = 1 << (7 + 1)  // bit 1.1 bPlayerFrags
	PlayerKills     PlayerFields = 1 << (7 + 2)  // bit 1.2 bPlayerKills
	PlayerDeaths    PlayerFields = 1 << (7 + 3)  // bit 1.3 bPlayerDeath
	PlayerSuicides  PlayerFields = 1 << (7 + 4)  // bit 1.4 bPlayerSuicides
	PlayerTeamKills PlayerFields = 1 << (7 + 5)  // bit 1.5 bPlayerTeamKills
	PlayerID        PlayerFields = 1 << (14 + 0) // bit 2.0 bPlayerID
	PlayerGlobalID  PlayerFields = 1 << (14 + 1) // bit 2.1 bPlayerGlobalID
	PlayerPing      PlayerFields = 1 << (14 + 2) // bit 2.2 bPlayerPing
	PlayerLoss      PlayerFields = 1 << (14 + 3) // bit 2.3 bPlayerLoss
	PlayerModel     PlayerFields = 1 << (14 + 4) // bit 2.4 bPlayerModel
	PlayerTime      PlayerFields = 1 << (14 + 5) // bit 2.5 bPlayerTime
	// PlayerAddress is bit 3.0: bPlayerIPv4 (a UINT32) in V091,
	// bPlayerAddress (a length-prefixed address) in V1.
	PlayerAddress PlayerFields = 1 << (21 + 0)

	// PlayerAll is every player field.
	PlayerAll = PlayerFlags | PlayerSlot | PlayerName | PlayerTeam | PlayerClass | PlayerRace | PlayerScore |
		PlayerFrags | PlayerKills | PlayerDeaths | PlayerSuicides | PlayerTeamKills | PlayerID | PlayerGlobalID |
		PlayerPing | PlayerLoss | PlayerModel | PlayerTime | PlayerAddress
)

var playerNames = []bitName{
	{uint64(PlayerFlags), "flags"}, {uint64(PlayerSlot), "slot"}, {uint64(PlayerName), "name"},
	{uint64(PlayerTeam), "team"}, {uint64(PlayerClass), "class"}, {uint64(PlayerRace), "race"},
	{uint64(PlayerScore), "score"}, {uint64(PlayerFrags), "frags"}, {uint64(PlayerKills), "kills"},
	{uint64(PlayerDeaths), "deaths"}, {uint64(PlayerSuicides), "suicides"}, {uint64(PlayerTeamKills), "team-kills"},
	{uint64(PlayerID), "id"}, {uint64(PlayerGlobalID), "global-id"}, {uint64(PlayerPing), "ping"},
	{uint64(PlayerLoss), "loss"}, {uint64(PlayerModel), "model"}, {uint64(PlayerTime), "time"},
	{uint64(PlayerAddress), "address"},
}

// String lists the fields.
func (f PlayerFields) String() string { return maskString(uint64(f), playerNames) }

// AddOnFields selects ADDONLISTENTRY fields (spec 3.4 "AddOnFields").
type AddOnFields uint64

// Add-on fields.
const (
	AddOnFlags     AddOnFields = 1 << 0 // bit 0.0 bAddOnFlags
	AddOnShortName AddOnFields = 1 << 1 // bit 0.1 bAddOnShortName
	AddOnLongName  AddOnFields = 1 << 2 // bit 0.2 bAddOnLongName
	AddOnVersion   AddOnFields = 1 << 3 // bit 0.3 bAddOnVersion

	// AddOnAll is every add-on field.
	AddOnAll = AddOnFlags | AddOnShortName | AddOnLongName | AddOnVersion
)

var addOnNames = []bitName{
	{uint64(AddOnFlags), "flags"}, {uint64(AddOnShortName), "short-name"}, {uint64(AddOnLongName), "long-name"},
	{uint64(AddOnVersion), "version"},
}

// String lists the fields.
func (f AddOnFields) String() string { return maskString(uint64(f), addOnNames) }

// ModFields selects the extra mod fields of the [V1] dialect, sent after
// a non-empty ModName. The SDK layout gives the field order only, so bit x
// is the x-th field of that order.
type ModFields uint64

// Mod fields ([V1] only).
const (
	ModIdentifier ModFields = 1 << 0
	ModSize       ModFields = 1 << 1
	ModVersion    ModFields = 1 << 2
	ModURL        ModFields = 1 << 3
	ModAuthor     ModFields = 1 << 4

	// ModAll is every mod field.
	ModAll = ModIdentifier | ModSize | ModVersion | ModURL | ModAuthor
)

var modNames = []bitName{
	{uint64(ModIdentifier), "identifier"}, {uint64(ModSize), "size"}, {uint64(ModVersion), "version"},
	{uint64(ModURL), "url"}, {uint64(ModAuthor), "author"},
}

// String lists the fields.
func (f ModFields) String() string { return maskString(uint64(f), modNames) }

// MapFields selects the extra map fields of the [V1] dialect; the same
// mask serves the current and the next map. Bit x is the x-th field of
// the SDK's order.
type MapFields uint64

// Map fields ([V1] only).
const (
	MapFileName MapFields = 1 << 0
	MapFileSize MapFields = 1 << 1
	MapFileMD5  MapFields = 1 << 2
	MapVersion  MapFields = 1 << 3
	MapURL      MapFields = 1 << 4
	MapAuthor   MapFields = 1 << 5

	// MapAll is every map field.
	MapAll = MapFileName | MapFileSize | MapFileMD5 | MapVersion | MapURL | MapAuthor
)

var mapNames = []bitName{
	{uint64(MapFileName), "file-name"}, {uint64(MapFileSize), "file-size"}, {uint64(MapFileMD5), "file-md5"},
	{uint64(MapVersion), "version"}, {uint64(MapURL), "url"}, {uint64(MapAuthor), "author"},
}

// String lists the fields.
func (f MapFields) String() string { return maskString(uint64(f), mapNames) }

// PlayerState is a player's PlayerFlags VarBitArray.
type PlayerState uint64

// Player states.
const (
	StateAlive PlayerState = 1 << 0       // bit 0.0 bAlive
	StateDead  PlayerState = 1 << 1       // bit 0.1 bDead
	StateBot   PlayerState = 1 << 2       // bit 0.2 bBot
	StateBomb  PlayerState = 1 << (7 + 0) // bit 1.0 (bBomp), a suggestion in v0.91
	StateVIP   PlayerState = 1 << (7 + 1) // bit 1.1 (bVIP), a suggestion in v0.91
)

var stateNames = []bitName{
	{uint64(StateAlive), "alive"}, {uint64(StateDead), "dead"}, {uint64(StateBot), "bot"},
	{uint64(StateBomb), "bomb"}, {uint64(StateVIP), "vip"},
}

// String lists the states, e.g. "alive|bot".
func (s PlayerState) String() string { return maskString(uint64(s), stateNames) }

// AddOnState is an add-on's AddOnFlags VarBitArray.
type AddOnState uint64

// Add-on states.
const (
	AddOnActive    AddOnState = 1 << 0 // bit 0.0 bActive
	AddOnAntiCheat AddOnState = 1 << 1 // bit 0.1 bAntiCheatTool
	AddOnMutator   AddOnState = 1 << 2 // bit 0.2 bMutator
	AddOnAdminTool AddOnState = 1 << 3 // bit 0.3 bAdminTool
)

var addOnStateNames = []bitName{
	{uint64(AddOnActive), "active"}, {uint64(AddOnAntiCheat), "anti-cheat"}, {uint64(AddOnMutator), "mutator"},
	{uint64(AddOnAdminTool), "admin-tool"},
}

// String lists the states.
func (s AddOnState) String() string { return maskString(uint64(s), addOnStateNames) }
