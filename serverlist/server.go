package serverlist

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/gsq-project/gsq/a2s"
)

// Region is a region code of the master server query protocol (the
// Valve Developer Community wiki, "Master Server Query Protocol"), which
// the Web API's records carry too.
type Region int

// The regions.
const (
	RegionUSEast       Region = 0x00
	RegionUSWest       Region = 0x01
	RegionSouthAmerica Region = 0x02
	RegionEurope       Region = 0x03
	RegionAsia         Region = 0x04
	RegionAustralia    Region = 0x05
	RegionMiddleEast   Region = 0x06
	RegionAfrica       Region = 0x07
	// RegionWorld is "the rest of the world", and in a query "every
	// region".
	RegionWorld Region = 0xFF
	// RegionNone is the Web API's region of a server that set none.
	RegionNone Region = -1
)

// regionNames are the regions' names, as String writes them and
// ParseRegion reads them.
var regionNames = []struct {
	r     Region
	names []string
}{
	{RegionUSEast, []string{"us-east", "use"}},
	{RegionUSWest, []string{"us-west", "usw"}},
	{RegionSouthAmerica, []string{"south-america", "sa"}},
	{RegionEurope, []string{"europe", "eu"}},
	{RegionAsia, []string{"asia", "as"}},
	{RegionAustralia, []string{"australia", "au"}},
	{RegionMiddleEast, []string{"middle-east", "me"}},
	{RegionAfrica, []string{"africa", "af"}},
	{RegionWorld, []string{"world", "all"}},
	{RegionNone, []string{"none"}},
}

// String returns the region's name ("europe"), or its number.
func (r Region) String() string {
	for _, n := range regionNames {
		if n.r == r {
			return n.names[0]
		}
	}
	return strconv.Itoa(int(r))
}

// ParseRegion reads a region's name or short name ("europe", "eu",
// "world", "all"), ignoring case, or its code (0 to 7, 255). The error
// lists the names.
func ParseRegion(s string) (Region, error) {
	for _, n := range regionNames {
		for _, name := range n.names {
			if strings.EqualFold(s, name) && n.r != RegionNone {
				return n.r, nil
			}
		}
	}
	if v, err := strconv.Atoi(s); err == nil && (v >= 0 && v <= 7 || v == 0xFF) {
		return Region(v), nil
	}
	var names []string
	for _, n := range regionNames[:len(regionNames)-1] {
		names = append(names, n.names[0]+" ("+n.names[1]+")")
	}
	return 0, fmt.Errorf("serverlist: unknown region %q (known: %s, or a code 0-7, 255)", s, strings.Join(names, ", "))
}

// relayPrefix is where the Web API lists servers behind Steam Datagram
// Relay: 169.254.0.0/16, link-local, which no query reaches (the field
// notes' reading of rust-gamedig#110, unverified by Valve).
var relayPrefix = netip.MustParsePrefix("169.254.0.0/16")

// IsRelay reports whether a is an address of 169.254.0.0/16, where the
// Steam Web API lists servers that are reached through Steam Datagram
// Relay (their "fake IPs"): no A2S query reaches them, so a scanner skips
// them and says so.
func IsRelay(a netip.AddrPort) bool { return relayPrefix.Contains(a.Addr().Unmap()) }

// Server is one game server as a server list describes it: the fields of
// a GetServerList record (SteamKit's
// CGameServers_GetServerList_Response.Server), and the few more that a
// filter reads and no list returns (Password, Proxy, White, GameData),
// which a [Fleet] needs to answer filters. A field a list left out is
// zero.
type Server struct {
	// Addr is the query address ("addr"): where A2S answers.
	Addr netip.AddrPort
	// GamePort is the port players connect to; SpecPort the SourceTV
	// port, 0 for none.
	GamePort   uint16
	SpecPort   uint16
	SteamID    uint64
	Name       string
	AppID      uint32
	GameDir    string
	Version    string
	Product    string
	Region     Region
	Players    int
	MaxPlayers int
	Bots       int
	Map        string
	Secure     bool // VAC-secured
	Dedicated  bool
	// OS is "l" (Linux), "w" (Windows) or "m"/"o" (macOS), as A2S sends
	// it.
	OS string
	// GameType is the server's tags (sv_tags, A2S's keywords), comma
	// separated, as `\gametype\` filters them.
	GameType string

	// Password reports a password-protected server (`\password\`).
	Password bool
	// Proxy reports a spectator proxy, SourceTV or HLTV (`\proxy\`).
	Proxy bool
	// White reports a server on Valve's whitelist (`\white\`).
	White bool
	// GameData is the server's hidden tags, comma separated
	// (`\gamedata\`, `\gamedataor\`), which Left 4 Dead servers set.
	GameData string
}

// Relay reports whether the server's address is a Steam Datagram Relay
// address (see [IsRelay]).
func (s *Server) Relay() bool { return IsRelay(s.Addr) }

// GameAddr is the address players connect to: the query address's IP
// with GamePort, or the query address when GamePort is 0.
func (s *Server) GameAddr() netip.AddrPort {
	if s.GamePort == 0 {
		return s.Addr
	}
	return netip.AddrPortFrom(s.Addr.Addr(), s.GamePort)
}

// Tags returns GameType split at its commas, blanks trimmed and empty
// tags dropped.
func (s *Server) Tags() []string { return splitTags(s.GameType) }

func splitTags(list string) []string {
	var out []string
	for t := range strings.SplitSeq(list, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// FromA2S describes the server that answers A2S at addr with info, as a
// server list would: the names decoded for display, the AppID from the
// GameID when there is one (its low 24 bits, the AppID a server list
// filters by), the game port from the EDF (or addr's port), the region
// RegionWorld. A fleet of simulated servers lists itself with it.
func FromA2S(addr netip.AddrPort, info *a2s.Info) Server {
	s := Server{
		Addr:       addr,
		GamePort:   info.Port,
		SpecPort:   info.SpectatorPort,
		SteamID:    info.SteamID,
		Name:       info.Name.UTF8(),
		AppID:      uint32(info.ShortAppID),
		GameDir:    info.Folder.UTF8(),
		Version:    info.Version.UTF8(),
		Product:    info.Folder.UTF8(),
		Region:     RegionWorld,
		Players:    int(info.Players),
		MaxPlayers: int(info.MaxPlayers),
		Bots:       int(info.Bots),
		Map:        info.Map.UTF8(),
		Secure:     info.VAC == 1,
		Dedicated:  info.ServerType == a2s.ServerDedicated,
		Proxy:      info.ServerType == a2s.ServerProxy,
		Password:   info.Visibility == 1,
		GameType:   info.Keywords.UTF8(),
	}
	if info.GameID != 0 {
		s.AppID = uint32(info.GameID & 0xFFFFFF)
	}
	if s.GamePort == 0 {
		s.GamePort = addr.Port()
	}
	if info.Environment != 0 {
		s.OS = string(rune(info.Environment))
	}
	return s
}
