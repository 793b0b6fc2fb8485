package mctest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gsq-project/gsq/minecraft/bedrock"
	"github.com/gsq-project/gsq/minecraft/mcquery"
	"github.com/gsq-project/gsq/minecraft/slp"
)

// Profile describes a fake server: what it answers on each protocol and
// how. The zero value is a vanilla Java server with the default content,
// Query on, no Bedrock.
type Profile struct {
	// Name is the profile's name (for LookupProfile and gsq serve).
	Name string
	// Description says which real servers it plays.
	Description string

	// NoJava serves no Java protocol (SLP nor Query): a Bedrock server.
	NoJava bool
	// StatusJSON is the status JSON sent, verbatim; "" sends
	// DefaultStatus's.
	StatusJSON string
	// Trailer is sent after the JSON in the status packet, as the Better
	// Compatibility Checker mod sends its second string.
	Trailer []byte
	// NoStatus closes the connection right after the handshake, as the
	// vanilla server does with enable-status=false and while starting;
	// the legacy pings are closed too.
	NoStatus bool
	// NoPong closes the connection after the status instead of answering
	// the ping, as Velocity and BungeeCord do.
	NoPong bool
	// EchoProtocol answers with the client's protocol in version.protocol,
	// as proxies that accept several versions do.
	EchoProtocol bool
	// LegacyOnly plays a server up to 1.6: it answers the legacy pings
	// only, and closes a connection that starts with anything else (a
	// modern handshake) without a byte.
	LegacyOnly bool
	// Legacy is the reply to legacy pings; nil derives it from the
	// status, with protocol 127, as every modern server does.
	Legacy *slp.LegacyStatus
	// ByteWrites sends the replies one byte per write.
	ByteWrites bool

	// Query answers Query on the Java port (enable-query=true), or on the
	// Bedrock port beside the pings when NoJava is set (PocketMine).
	Query bool
	// FullStat is Query's content; nil derives it from the status.
	FullStat *mcquery.FullStat
	// SignedTokens gives Query tokens of all 32 bits, half negative, as
	// PocketMine and Nukkit do.
	SignedTokens bool

	// Bedrock answers RakNet pings on a port of its own.
	Bedrock bool
	// BedrockStatus is the pong's status; nil is DefaultBedrockStatus.
	BedrockStatus *bedrock.Status
}

// Profiles returns the built-in profiles, in a stable order.
func Profiles() []Profile {
	return []Profile{
		{Name: "vanilla", Description: "vanilla 1.21.1: status once per connection, pong then close, Query on", Query: true},
		{Name: "status-off", Description: "vanilla with enable-status=false: closes right after the handshake (up, not answering status)", NoStatus: true},
		{Name: "starting", Description: "vanilla still starting: closes right after the handshake, as with status off", NoStatus: true},
		{Name: "velocity", Description: "Velocity proxy: echoes the client's protocol, hover-text sample, closes after the status (no pong)",
			NoPong: true, EchoProtocol: true, StatusJSON: velocityStatus()},
		{Name: "legacy-1.6", Description: "1.6.4 server: legacy pings only (protocol 78); a modern handshake is closed",
			LegacyOnly: true, Legacy: legacy16()},
		{Name: "forge-1.12", Description: "Forge 1.12.2 (FML1): modinfo with its mod list", StatusJSON: forge112Status()},
		{Name: "forge", Description: "Forge 1.20.1: forgeData with the mod list compressed in d", StatusJSON: forgeStatus(40)},
		{Name: "neoforge", Description: "NeoForge 1.21: the isModded flag", StatusJSON: neoForgeStatus()},
		{Name: "bcc", Description: "Better Compatibility Checker: a second string after the JSON", Trailer: bccTrailer()},
		{Name: "byte-writes", Description: "vanilla whose replies arrive one byte per write", ByteWrites: true},
		{Name: "huge", Description: "a 100 KB status: a pre-1.13 favicon broken into lines and a long Forge mod list", StatusJSON: hugeStatus()},
		{Name: "geyser", Description: "Geyser: Query keys in its own order, NULs in the MOTD, and a Bedrock pong",
			Query: true, FullStat: geyserFullStat(), Bedrock: true},
		{Name: "pocketmine", Description: "PocketMine-MP: Bedrock only, and Query on the Bedrock port with negative tokens",
			NoJava: true, Bedrock: true, BedrockStatus: pocketMineStatus(), Query: true, SignedTokens: true},
		{Name: "bedrock", Description: "Bedrock Dedicated Server 1.21: a full pong", NoJava: true, Bedrock: true},
		{Name: "bedrock-empty-version", Description: "Bedrock server whose pong has an empty version and portV6 -1 (mcstatus' fixture)",
			NoJava: true, Bedrock: true, BedrockStatus: emptyVersionStatus()},
	}
}

// LookupProfile returns the built-in profile called name. The error lists
// the known names.
func LookupProfile(name string) (Profile, error) {
	for _, p := range Profiles() {
		if p.Name == name {
			return p, nil
		}
	}
	return Profile{}, fmt.Errorf("mctest: unknown profile %q (known: %s)", name, strings.Join(ProfileNames(), ", "))
}

// ProfileNames lists the built-in profiles' names.
func ProfileNames() []string {
	var names []string
	for _, p := range Profiles() {
		names = append(names, p.Name)
	}
	return names
}

// statusJSON is the status JSON the profile sends.
func (p Profile) statusJSON() []byte {
	if p.StatusJSON != "" {
		return []byte(p.StatusJSON)
	}
	b, err := DefaultStatus().AppendJSON(nil)
	if err != nil {
		panic(err) // the default status always encodes
	}
	return b
}

// Status is the profile's status JSON, parsed.
func (p Profile) Status() *slp.Status {
	s, err := slp.ParseStatus(p.statusJSON(), &slp.ParseOptions{KeepFavicon: true})
	if err != nil {
		panic(fmt.Sprintf("mctest: profile %q: %v", p.Name, err))
	}
	return s
}

// LegacyStatus is the profile's reply to legacy pings.
func (p Profile) LegacyStatus() *slp.LegacyStatus {
	if p.Legacy != nil {
		return p.Legacy
	}
	s := p.Status()
	proto := int32(slp.ModernLegacyProtocol)
	ls := &slp.LegacyStatus{Protocol: &proto, MOTD: s.Description.Legacy()}
	if s.Version != nil {
		ls.Version = s.Version.Name
	}
	if s.Players != nil && s.Players.Online != nil && s.Players.Max != nil {
		ls.Online, ls.Max = *s.Players.Online, *s.Players.Max
	}
	return ls
}

// QueryStat is the profile's Query content: FullStat, or one derived from
// the status as the vanilla server fills it.
func (p Profile) QueryStat() *mcquery.FullStat {
	if p.FullStat != nil {
		return p.FullStat
	}
	s := p.Status()
	fs := &mcquery.FullStat{}
	version, online, maxp := "", int32(0), int32(0)
	if s.Version != nil {
		version = s.Version.Name
	}
	if s.Players != nil {
		if s.Players.Online != nil {
			online = *s.Players.Online
		}
		if s.Players.Max != nil {
			maxp = *s.Players.Max
		}
		for _, pl := range s.Players.Sample {
			if !pl.Fake {
				fs.Players = append(fs.Players, mcquery.Text(pl.Name))
			}
		}
	}
	for _, kv := range [][2]string{{"hostname", s.Description.Legacy()}, {"gametype", "SMP"}, {"game_id", "MINECRAFT"},
		{"version", version}, {"plugins", ""}, {"map", "world"}, {"numplayers", fmt.Sprint(online)},
		{"maxplayers", fmt.Sprint(maxp)}, {"hostport", "25565"}, {"hostip", "127.0.0.1"}} {
		fs.Set(kv[0], mcquery.Text(kv[1]))
	}
	return fs
}

// BedrockPongStatus is the profile's Bedrock status.
func (p Profile) BedrockPongStatus() *bedrock.Status {
	if p.BedrockStatus != nil {
		return p.BedrockStatus
	}
	return DefaultBedrockStatus()
}

func i32(v int32) *int32 { return &v }

// DefaultStatus is the vanilla profile's status: 1.21.1, 3 of 20 players
// with their sample, a component MOTD, a favicon and the secure-chat flag.
func DefaultStatus() *slp.Status {
	secure := true
	return &slp.Status{
		Version: &slp.Version{Name: "1.21.1", Protocol: i32(767)},
		Players: &slp.Players{Online: i32(3), Max: i32(20), Sample: []slp.Player{
			{Name: "thinkofdeath", ID: "4566e69f-c907-48ee-8d71-d7ba5aa00d20"},
			{Name: "Dinnerbone", ID: "61699b2e-d327-4a01-9f1e-0ea8c3f06bc6"},
			{Name: "Notch", ID: "069a79f4-44e9-4726-a5be-fca90e38aaf5"},
		}},
		Description:        slp.Description{Raw: json.RawMessage(`{"text":"A gsq ","extra":[{"text":"Minecraft","color":"gold","bold":true},{"text":" server"}]}`)},
		Favicon:            slp.NewFavicon(fakePNG(600)),
		EnforcesSecureChat: &secure,
	}
}

// fakePNG is n bytes that start like a PNG: enough for a favicon's hash
// and size.
func fakePNG(n int) []byte {
	b := []byte("\x89PNG\r\n\x1a\n")
	for len(b) < n {
		b = append(b, byte(len(b)*7))
	}
	return b
}

// DefaultBedrockStatus is the bedrock profile's status, as BDS 1.21
// sends it.
func DefaultBedrockStatus() *bedrock.Status {
	return &bedrock.Status{
		Edition: bedrock.Text("MCPE"), MOTD: bedrock.Text("gsq Bedrock server"), Protocol: i32(748),
		Version: bedrock.Text("1.21.40"), Online: i32(2), Max: i32(10), ServerID: bedrock.Text("-305653527360353208"),
		LevelName: bedrock.Text("Bedrock level"), GameMode: bedrock.Text("Survival"), GameModeID: i32(1),
		PortV4: i32(19132), PortV6: i32(19133),
	}
}

func emptyVersionStatus() *bedrock.Status {
	return &bedrock.Status{
		Edition: bedrock.Text("MCPE"), MOTD: bedrock.Text("§r§4G§r§6a§r§ey§r§2B§r§1o§r§9w§r§ds§r§4e§r§6r"), Protocol: i32(422),
		Online: i32(1), Max: i32(69), ServerID: bedrock.Text("3767071975391053022"),
		GameMode: bedrock.Text("Default"), GameModeID: i32(1), PortV4: i32(19132), PortV6: i32(-1),
	}
}

func pocketMineStatus() *bedrock.Status {
	s := DefaultBedrockStatus()
	s.MOTD, s.LevelName, s.ServerID = bedrock.Text("PocketMine-MP Server"), bedrock.Text("PocketMine-MP"), bedrock.Text("-4821590232140155302")
	return s
}

func velocityStatus() string {
	return `{"version":{"name":"Velocity 3.3.0-SNAPSHOT","protocol":767},` +
		`"players":{"online":120,"max":500,"sample":[` +
		`{"name":"§6Welcome to the network","id":"00000000-0000-0000-0000-000000000000"},` +
		`{"name":"§7Lobby: 120 online","id":"00000000-0000-0000-0000-000000000000"}]},` +
		`"description":"§bA gsq §lproxy§r\n§7two lines"}`
}

func legacy16() *slp.LegacyStatus {
	return &slp.LegacyStatus{Protocol: i32(78), Version: "1.6.4", MOTD: "A §6legacy§r server", Online: 2, Max: 20}
}

func forge112Status() string {
	return `{"description":{"text":"A Forge 1.12.2 server"},"players":{"max":20,"online":1},` +
		`"version":{"name":"1.12.2","protocol":340},"modinfo":{"type":"FML","modList":[` +
		`{"modid":"minecraft","version":"1.12.2"},{"modid":"mcp","version":"9.42"},` +
		`{"modid":"FML","version":"8.0.99.99"},{"modid":"forge","version":"14.23.5.2860"},` +
		`{"modid":"jei","version":"4.16.1.302"}]}}`
}

// forgeMods is a Forge 1.20.1 mod list of n mods, each with a channel.
func forgeMods(n int) *slp.Mods {
	m := &slp.Mods{Mods: []slp.Mod{{ID: "minecraft", Version: "1.20.1"}, {ID: "forge", Version: "ANY"}}}
	m.Channels = []slp.Channel{{Name: "forge:tier_sorting", Version: "1.0", Required: false}, {Name: "minecraft:register", Version: "FML3", Required: true}}
	for i := range n {
		id := fmt.Sprintf("gsqmod%03d", i)
		m.Mods = append(m.Mods, slp.Mod{ID: id, Version: fmt.Sprintf("1.%d.0", i), IgnoreServerOnly: i%7 == 3})
		m.Channels = append(m.Channels, slp.Channel{Name: id + ":main", Version: "1", Required: i%2 == 0})
	}
	return m
}

func forgeStatus(n int) string {
	d := slp.EncodeForgeData(slp.ForgeDataPayload(forgeMods(n)))
	dj, _ := json.Marshal(d)
	return `{"version":{"name":"1.20.1","protocol":763},"players":{"online":0,"max":20},` +
		`"description":{"text":"A Forge server"},"enforcesSecureChat":true,` +
		`"forgeData":{"channels":[],"mods":[],"truncated":false,"fmlNetworkVersion":3,"d":` + string(dj) + `}}`
}

func neoForgeStatus() string {
	return `{"version":{"name":"1.21.1","protocol":767},"players":{"online":0,"max":20},` +
		`"description":"A NeoForge server","enforcesSecureChat":false,"isModded":true}`
}

// bccTrailer is the Better Compatibility Checker's second string: a
// String of JSON. (Printed as text, its VarInt length of 86 reads as the
// "V" that some write before the JSON.)
func bccTrailer() []byte {
	return slp.AppendString(nil, `{"releaseType":"RELEASE","projectId":"gsq-pack","name":"gsq pack","version":"1.0.0.0000"}`)
}

// hugeStatus is a status of about 110 KB: a favicon of 50 KB whose base64
// is broken into lines of 76 characters (before 1.13), and a forgeData
// list of 1,000 mods.
func hugeStatus() string {
	fav := slp.NewFavicon(fakePNG(50000)).DataURL()
	data := strings.TrimPrefix(fav, "data:image/png;base64,")
	var lines strings.Builder
	for len(data) > 76 {
		lines.WriteString(data[:76] + "\n")
		data = data[76:]
	}
	lines.WriteString(data)
	fj, _ := json.Marshal("data:image/png;base64," + lines.String())
	base := forgeStatus(1000)
	return base[:len(base)-1] + `,"favicon":` + string(fj) + `}`
}

// geyserFullStat is Geyser's Query reply: keys in its own order, the MOTD
// with a NUL and bytes that are not UTF-8.
func geyserFullStat() *mcquery.FullStat {
	fs := &mcquery.FullStat{Players: []mcquery.Text{mcquery.Text("Steve"), mcquery.Text(".BedrockAlex")}}
	for _, kv := range [][2]string{{"hostname", "Geyser \x00 \xa7bserver \xe9"}, {"gametype", "SMP"}, {"game_id", "MINECRAFT"},
		{"version", "Geyser (git-master-abc123) 1.21.1"}, {"plugins", ""}, {"map", "Geyser"},
		{"numplayers", "2"}, {"maxplayers", "100"}, {"hostport", "19132"}, {"hostip", "0.0.0.0"}} {
		fs.Set(kv[0], mcquery.Text(kv[1]))
	}
	// Geyser's order: its own keys first, the counts before the MOTD.
	order := []string{"gametype", "game_id", "numplayers", "maxplayers", "hostname", "version", "plugins", "map", "hostport", "hostip"}
	sorted := make([]mcquery.KeyValue, 0, len(order))
	for _, k := range order {
		v, _ := fs.Value(k)
		sorted = append(sorted, mcquery.KeyValue{Key: mcquery.Text(k), Value: v})
	}
	fs.KV = sorted
	return fs
}
