package a2stest

import (
	"fmt"
	"strings"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/a2s/bohemia"
	"github.com/gsq-project/gsq/internal/lossy"
)

// Framing is how a fake server cuts its replies into datagrams.
type Framing uint8

const (
	// FramingSource lets the a2s.Server split long replies in the Source
	// format, fragments in order.
	FramingSource Framing = iota
	// FramingReversed splits in the Source format and sends the fragments
	// last first.
	FramingReversed
	// FramingBzip2NoSize compresses every reply that needs a split with
	// bzip2 and sends it in the 2006-era layout without the Size field
	// (Fortress Forever); a short one becomes a "split" of one fragment.
	FramingBzip2NoSize
	// FramingUnsplit never splits: a reply of any size is one datagram
	// (Rust, Squad, DayZ).
	FramingUnsplit
	// FramingGoldSource splits in the GoldSource format.
	FramingGoldSource
)

// String returns the framing's name.
func (f Framing) String() string {
	switch f {
	case FramingSource:
		return "source"
	case FramingReversed:
		return "reversed"
	case FramingBzip2NoSize:
		return "bzip2-nosize"
	case FramingUnsplit:
		return "unsplit"
	case FramingGoldSource:
		return "goldsource"
	}
	return fmt.Sprintf("Framing(%d)", uint8(f))
}

// Profile describes a fake server: how it talks, and what it says by
// default. The zero value is a modern Source server with challenges and the
// default content.
type Profile struct {
	// Name is the profile's name (for LookupProfile and gsq serve --profile).
	Name string
	// Description says which real servers it plays.
	Description string

	// NoChallenge answers without challenges, as pre-2020 servers did.
	NoChallenge bool
	// RateLimit is the a2s.Server's per-source rate limit (0 = its default,
	// negative = off).
	RateLimit float64
	// Framing is how replies are cut into datagrams.
	Framing Framing
	// SplitSize is the fragment payload size (0 = the a2s.Server default).
	SplitSize int
	// GoldSourceDual answers INFO with an obsolete GoldSource 'm' reply and
	// then the Source 'I' one, as GoldSource servers with dproto/ReUnion do.
	GoldSourceDual bool
	// Banned, if set, answers every INFO, PLAYER and RULES query at once,
	// without a challenge, with an 'l' reply carrying this text, as
	// GoldSource servers answer an address they ban. The reply is never
	// more than three times the request nor 32 bytes longer (the limit on
	// unproven replies of docs/conventions.md): a longer text is cut, so a
	// 25-byte INFO query gets up to 51 bytes of it and a 9-byte PLAYER
	// query 21. A 5-byte A2A_PING gets a bare 5-byte 'j' (the Source
	// payload would make it 20 bytes), and a challenge request nothing:
	// neither is ever longer than its request.
	Banned a2s.Text

	// Loss, Duplicate and Reorder are the probabilities (0..1) that a sent
	// datagram is dropped, sent twice, or held back and sent after the next
	// one (or after a short delay when none follows).
	Loss, Duplicate, Reorder float64
	// Seed makes the lossy decisions reproducible.
	Seed uint64

	// Info, Players and Rules are the content NewServer answers with; nil
	// ones take DefaultInfo, DefaultPlayers and DefaultRules.
	Info    *a2s.Info
	Players *a2s.Players
	Rules   *a2s.Rules
}

// Profiles returns the built-in profiles, in a stable order.
func Profiles() []Profile {
	return []Profile{
		{
			Name:        "modern",
			Description: "Source server of today: challenge on every query, full EDF, rules split in 3 fragments of 1248 bytes",
		},
		{
			Name:        "legacy",
			Description: "pre-2020 Source server: no challenge (so no amplification protection), no EDF, small rules",
			NoChallenge: true,
			Info:        legacyInfo(),
			Rules:       makeRules(8, 8),
		},
		{
			Name:           "goldsource-dual",
			Description:    "GoldSource HLDS with dproto/ReUnion: INFO answered with 'm' then 'I', rules in GoldSource splits",
			GoldSourceDual: true,
			Framing:        FramingGoldSource,
			Info:           goldSourceInfo(),
		},
		{
			Name:        "split-out-of-order",
			Description: "Source server whose split fragments arrive last first",
			Framing:     FramingReversed,
		},
		{
			Name:        "bzip2-nosize",
			Description: "Fortress Forever (2006 engine): bzip2-compressed split without the Size field, one fragment",
			Framing:     FramingBzip2NoSize,
			Info:        fortressForeverInfo(),
		},
		{
			Name:        "oversized",
			Description: "Unreal-engine style server (Squad): ~1900-byte INFO and rules, never split",
			Framing:     FramingUnsplit,
			Info:        oversizedInfo(),
			Rules:       makeRules(60, 12),
		},
		{
			Name:        "rust",
			Description: "Rust: 280/300 players, 8-bit counts wrapped, real counts in keywords cp/mp, unsplit replies",
			Framing:     FramingUnsplit,
			Info:        rustInfo(),
			Players:     rustPlayers(),
		},
		{
			Name:        "ship",
			Description: "The Ship (AppID 2400): mode/witnesses/duration in INFO, deaths/money block after the players",
			Info:        shipInfo(),
			Players:     makePlayers(5, true),
			Rules:       makeRules(10, 6),
		},
		{
			Name:        "dayz",
			Description: "DayZ: AppID only in the GameID, server facts in the keywords, a binary mod list in ~2500-byte rules sent unsplit",
			Framing:     FramingUnsplit,
			Info:        dayzInfo(),
			Rules:       dayzRules(),
		},
		{
			Name:        "banned",
			Description: "GoldSource server that bans the client: every query answered at once, without a challenge, with an 'l' reply (cut to at most 3 times the query's size)",
			NoChallenge: true,
			Banned:      a2s.Text("You have been banned from this server."),
		},
		{
			Name:        "lossy",
			Description: "modern server on a bad network: 20% loss, 10% duplicates, 20% reordering (seed 1)",
			RateLimit:   -1,
			Loss:        0.2,
			Duplicate:   0.1,
			Reorder:     0.2,
			Seed:        1,
		},
	}
}

// LookupProfile returns the built-in profile called name. The error
// lists the known names.
func LookupProfile(name string) (Profile, error) {
	for _, p := range Profiles() {
		if p.Name == name {
			return p, nil
		}
	}
	return Profile{}, fmt.Errorf("a2stest: unknown profile %q (known: %s)", name, strings.Join(ProfileNames(), ", "))
}

// ProfileNames lists the built-in profiles' names.
func ProfileNames() []string {
	var names []string
	for _, p := range Profiles() {
		names = append(names, p.Name)
	}
	return names
}

// Content is what a server of profile p answers: its Info, Players and
// Rules, or the defaults (DefaultInfo, DefaultPlayers, DefaultRules) where
// they are nil. A test compares what a client read with it.
func (p Profile) Content() (*a2s.Info, *a2s.Players, *a2s.Rules) {
	info, players, rules := p.Info, p.Players, p.Rules
	if info == nil {
		info = DefaultInfo()
	}
	if players == nil {
		players = DefaultPlayers()
	}
	if rules == nil {
		rules = DefaultRules()
	}
	return info, players, rules
}

// handler is a StaticHandler with p's content.
func (p Profile) handler() (*a2s.StaticHandler, error) {
	return a2s.NewStaticHandler(p.Content())
}

// lossy is p's lossy knobs as a fault injector's configuration.
func (p Profile) lossy() lossy.Config {
	return lossy.Config{Loss: p.Loss, Duplicate: p.Duplicate, Reorder: p.Reorder, Seed: p.Seed}
}

// DefaultInfo is the INFO of the modern profile: a CS:S-like server with
// every EDF field.
func DefaultInfo() *a2s.Info {
	return &a2s.Info{
		Format:        a2s.TypeInfoReply,
		Protocol:      17,
		Name:          a2s.Text("gsq test server"),
		Map:           a2s.Text("de_dust2"),
		Folder:        a2s.Text("cstrike"),
		Game:          a2s.Text("Counter-Strike: Source"),
		ShortAppID:    240,
		Players:       3,
		MaxPlayers:    24,
		Bots:          1,
		ServerType:    'd',
		Environment:   'l',
		VAC:           1,
		Version:       a2s.Text("1.0.0.22"),
		EDF:           a2s.EDFPort | a2s.EDFSteamID | a2s.EDFSpectator | a2s.EDFKeywords | a2s.EDFGameID,
		Port:          27015,
		SteamID:       90000000000000001,
		SpectatorPort: 27020,
		SpectatorName: a2s.Text("gsq SourceTV"),
		Keywords:      a2s.Text("alltalk,increased_maxplayers,gsq"),
		GameID:        240,
	}
}

// DefaultPlayers is the player list of the modern profile (3 players).
func DefaultPlayers() *a2s.Players { return makePlayers(3, false) }

// DefaultRules is the rule list of the modern profile: 100 rules, about
// 3000 bytes, so 3 fragments at the default split size.
func DefaultRules() *a2s.Rules { return makeRules(100, 12) }

func makePlayers(n int, ship bool) *a2s.Players {
	p := &a2s.Players{Count: uint8(n), Ship: ship}
	for i := range n {
		pl := a2s.Player{
			Index:    uint8(i),
			Name:     a2s.Text(fmt.Sprintf("player %d", i)),
			Score:    int32(i*7 - 3),
			Duration: float32(i)*61.5 + 0.25,
		}
		if ship {
			pl.Deaths, pl.Money = int32(i), int32(2500+i*100)
		}
		p.List = append(p.List, pl)
	}
	return p
}

// makeRules returns n rules whose values are pad bytes long.
func makeRules(n, pad int) *a2s.Rules {
	r := &a2s.Rules{Count: uint16(n)}
	for i := range n {
		r.List = append(r.List, a2s.Rule{
			Name:  a2s.Text(fmt.Sprintf("gsq_rule_%03d", i)),
			Value: a2s.Text(fmt.Sprintf("%d-%s", i, strings.Repeat("v", pad))),
		})
	}
	return r
}

func legacyInfo() *a2s.Info {
	i := DefaultInfo()
	i.Protocol = 7
	i.Name = a2s.Text("gsq legacy server")
	i.EDF, i.Port, i.SteamID, i.SpectatorPort, i.SpectatorName, i.Keywords, i.GameID = 0, 0, 0, 0, nil, nil, 0
	return i
}

func goldSourceInfo() *a2s.Info {
	i := DefaultInfo()
	i.Protocol = 48
	i.Name = a2s.Text("gsq goldsource server")
	i.Folder, i.Game, i.ShortAppID, i.GameID = a2s.Text("cstrike"), a2s.Text("Counter-Strike"), 10, 10
	i.Version = a2s.Text("1.1.2.7/Stdio")
	return i
}

func fortressForeverInfo() *a2s.Info {
	i := DefaultInfo()
	i.Name = a2s.Text("gsq fortress forever")
	i.Map, i.Folder, i.Game = a2s.Text("ff_2fort"), a2s.Text("FortressForever"), a2s.Text("Fortress Forever")
	i.ShortAppID, i.GameID = 0, 253530
	return i
}

func oversizedInfo() *a2s.Info {
	i := DefaultInfo()
	i.Name = a2s.Text("gsq oversized server")
	i.Folder, i.Game, i.ShortAppID, i.GameID = a2s.Text("squad"), a2s.Text("Squad"), 0, 393380
	var kw strings.Builder
	for n := 0; kw.Len() < 1750; n++ {
		fmt.Fprintf(&kw, "tag%03d:value,", n)
	}
	i.Keywords = a2s.Text(kw.String())
	return i
}

func rustInfo() *a2s.Info {
	i := DefaultInfo()
	i.Name = a2s.Text("gsq rust server")
	i.Map, i.Folder, i.Game = a2s.Text("Procedural Map"), a2s.Text("rust"), a2s.Text("Rust")
	i.ShortAppID, i.GameID = 0, 252490
	i.Players, i.MaxPlayers, i.Bots = 280&0xFF, 300&0xFF, 0 // 8-bit fields wrap: 24 and 44
	i.Keywords = a2s.Text("mp300,cp280,ptrak,qp0,v2567,born1700000000,gmrust,oxide,modded")
	return i
}

func dayzInfo() *a2s.Info {
	i := DefaultInfo()
	i.Name = a2s.Text("gsq dayz server")
	i.Map, i.Folder, i.Game = a2s.Text("chernarusplus"), a2s.Text("dayz"), a2s.Text("DayZ")
	i.ShortAppID, i.GameID = 0, 221100
	i.Players, i.MaxPlayers, i.Bots = 41, 60, 0
	i.ServerType, i.Environment = 'd', 'w'
	i.Version = a2s.Text("1.26.159040")
	i.Keywords = a2s.Text("battleye,no3rd,external,privHive,shard123,lqs2,etm4.000000,entm8.000000,mod,14:05")
	return i
}

// dayzRules are DayZ-style rules: the chunks of a version 2 Server
// Browser Protocol message listing 100 mods (about 2500 bytes in all),
// then the text rules.
func dayzRules() *a2s.Rules {
	br := &bohemia.Browser{Signatures: []a2s.Text{a2s.Text("dayz"), a2s.Text("gsq")}}
	for n := range 100 {
		br.Mods = append(br.Mods, bohemia.Mod{
			Hash:       uint32(0x01000100 + n), // escaped bytes on the wire
			WorkshopID: uint64(1559212036 + n*1000),
			Name:       a2s.Text(fmt.Sprintf("gsq mod %02d", n)),
		})
	}
	msg, err := br.Append(nil)
	if err != nil {
		panic(err)
	}
	list, err := bohemia.Chunks(msg)
	if err != nil {
		panic(err)
	}
	list = append(list, a2s.Rule{Name: a2s.Text("allowedBuild"), Value: a2s.Text("0")},
		a2s.Rule{Name: a2s.Text("dedicated"), Value: a2s.Text("1")},
		a2s.Rule{Name: a2s.Text("island"), Value: a2s.Text("chernarusplus")})
	return &a2s.Rules{Count: uint16(len(list)), List: list}
}

func shipInfo() *a2s.Info {
	i := DefaultInfo()
	i.Protocol = 7
	i.Name = a2s.Text("gsq ship server")
	i.Map, i.Folder, i.Game = a2s.Text("batavier"), a2s.Text("ship"), a2s.Text("The Ship")
	i.ShortAppID, i.Players, i.MaxPlayers, i.Bots = 2400, 5, 16, 0
	i.ServerType, i.Environment = 'l', 'w'
	i.Ship = &a2s.ShipInfo{Mode: 1, Witnesses: 3, Duration: 3}
	i.Version = a2s.Text("1.0.0.4")
	i.EDF, i.Port, i.SteamID, i.SpectatorPort, i.SpectatorName, i.Keywords, i.GameID = 0, 0, 0, 0, nil, nil, 0
	return i
}

// rustPlayers is 280 players, the count byte wrapped to 24 as Rust sends it.
func rustPlayers() *a2s.Players {
	p := makePlayers(280, false)
	for i := range p.List {
		p.List[i].Name = a2s.Text(fmt.Sprintf("%s%d", strings.Repeat("r", i%5), i+1))
	}
	return p
}
