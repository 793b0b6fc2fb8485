package cli

// gsq serve's Minecraft modes: --minecraft ADDR answers Server List Ping
// (TCP) and Query (UDP) on one port, as a Java server with enable-query
// does; --bedrock ADDR answers RakNet's unconnected ping (UDP). The
// content is gsq serve's own (--name, --player, --max-players, ...).

import (
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gsq-project/gsq/internal/sim"
	"github.com/gsq-project/gsq/minecraft/bedrock"
	"github.com/gsq-project/gsq/minecraft/mcquery"
	"github.com/gsq-project/gsq/minecraft/mctest"
	"github.com/gsq-project/gsq/minecraft/slp"
	"github.com/gsq-project/gsq/protocol"
)

// The version a simulated Minecraft server reports when the content
// names none: 1.21.1 (protocol 767) for Java, 1.21.40 (748) for Bedrock.
const (
	mcVersion         = "1.21.1"
	mcProtocol        = 767
	bedrockVersion    = "1.21.40"
	bedrockProtocol   = 748
	bedrockServerGUID = 0x6773710000000001 // "gsq", then 1
	// maxSample is how many players the status's sample shows, as the
	// vanilla server does.
	maxSample = 12
)

// minecraftServers are the Minecraft servers gsq serve runs: Server List
// Ping and Query on one port, Bedrock on another; nil when not asked.
type minecraftServers struct {
	slp       *slp.Server
	query     *mcquery.Server
	bedrock   *bedrock.Server
	java, bed netip.AddrPort
}

// startMinecraft serves c on javaAddr (SLP over TCP, Query over UDP, the
// same port) and bedrockAddr (RakNet over UDP), those that are not "";
// with a profile (gsq serve --minecraft-profile), the profile's own
// content and quirks instead. rateLimit, when not 0, is the per-source
// rate of Query and Bedrock.
func startMinecraft(javaAddr, bedrockAddr string, c sim.Content, profile *mctest.Profile, rateLimit float64, logf func(string, ...any)) (*minecraftServers, error) {
	m := &minecraftServers{}
	// The default content's version and map are an A2S server's; a
	// Minecraft server reports its own.
	if def := sim.Default(); c.Version == def.Version {
		c.Version = ""
	}
	if c.Map == sim.Default().Map {
		c.Map = ""
	}
	if profile != nil {
		switch {
		case javaAddr != "" && profile.NoJava:
			return nil, usageError("--minecraft-profile %s plays a Bedrock server only: use --bedrock", profile.Name)
		case bedrockAddr != "" && !profile.Bedrock:
			return nil, usageError("--minecraft-profile %s plays no Bedrock server: use --minecraft", profile.Name)
		}
	}
	if javaAddr != "" {
		if err := m.startJava(javaAddr, c, profile, rateLimit, logf); err != nil {
			return nil, err
		}
	}
	if bedrockAddr != "" {
		pc, err := net.ListenPacket("udp", bedrockAddr)
		if err != nil {
			m.shutdown(context.Background())
			return nil, usageError("--bedrock %q: %v", bedrockAddr, err)
		}
		m.bed = pc.LocalAddr().(*net.UDPAddr).AddrPort()
		status := bedrockStatus(c, m.bed.Port())
		if profile != nil {
			status = profile.BedrockPongStatus()
		}
		m.bedrock = &bedrock.Server{Handler: bedrock.NewStaticHandler(status),
			ServerGUID: bedrockServerGUID, RateLimit: rateLimit, Logf: logf}
		go serveLogged(func() error { return m.bedrock.Serve(pc) }, bedrock.ErrServerClosed, logf)
	}
	return m, nil
}

// startJava serves Server List Ping and, unless the profile has it off,
// Query on javaAddr.
func (m *minecraftServers) startJava(javaAddr string, c sim.Content, profile *mctest.Profile, rateLimit float64, logf func(string, ...any)) error {
	tcp, udp, err := listenSamePort(javaAddr)
	if err != nil {
		return usageError("--minecraft %q: %v", javaAddr, err)
	}
	m.java = tcp.Addr().(*net.TCPAddr).AddrPort()
	var sh slp.Handler
	var qh mcquery.Handler
	signed := false
	if profile != nil {
		sh, signed = profile.SLPHandler(), profile.SignedTokens
		if profile.Query {
			qh = profile.QueryHandler()
		}
		tcp = profile.WrapListener(tcp)
	} else {
		status := minecraftStatus(c)
		var h *slp.StaticHandler
		var q *mcquery.StaticHandler
		if h, err = slp.NewStaticHandler(status); err == nil {
			q, err = mcquery.NewStaticHandler(minecraftFullStat(c, status, m.java))
		}
		if err != nil {
			tcp.Close()
			udp.Close()
			return usageError("content cannot be served over Minecraft's protocols: %v", err)
		}
		sh, qh = h, q
	}
	m.slp = &slp.Server{Handler: sh, Logf: logf}
	go serveLogged(func() error { return m.slp.Serve(tcp) }, slp.ErrServerClosed, logf)
	if qh == nil {
		udp.Close() // Query off: the port is closed, as with enable-query=false
		return nil
	}
	m.query = &mcquery.Server{Handler: qh, SignedTokens: signed, RateLimit: rateLimit, Logf: logf}
	go serveLogged(func() error { return m.query.Serve(udp) }, mcquery.ErrServerClosed, logf)
	return nil
}

// serveLogged runs serve, and logs why it ended unless Shutdown ended it
// (closed).
func serveLogged(serve func() error, closed error, logf func(string, ...any)) {
	if err := serve(); err != nil && !errors.Is(err, closed) {
		logf("%v", err)
	}
}

// listenSamePort listens on addr over TCP and UDP on the same port; with
// port 0, on a free port that both have (tried a few times).
func listenSamePort(addr string) (net.Listener, net.PacketConn, error) {
	var err error
	for range 10 {
		var l net.Listener
		if l, err = net.Listen("tcp", addr); err != nil {
			return nil, nil, err
		}
		var pc net.PacketConn
		if pc, err = net.ListenPacket("udp", l.Addr().String()); err == nil {
			return l, pc, nil
		}
		l.Close()
	}
	return nil, nil, err
}

// shutdown stops every server, and waits for them within ctx.
func (m *minecraftServers) shutdown(ctx context.Context) error {
	var errs []error
	if m.slp != nil {
		errs = append(errs, m.slp.Shutdown(ctx))
	}
	if m.query != nil {
		errs = append(errs, m.query.Shutdown(ctx))
	}
	if m.bedrock != nil {
		errs = append(errs, m.bedrock.Shutdown(ctx))
	}
	return errors.Join(errs...)
}

// describe prints what m serves, on stderr.
func (m *minecraftServers) describe(w io.Writer, c sim.Content, profile *mctest.Profile) {
	if m.slp != nil {
		fmt.Fprintf(w, "gsq:   minecraft tcp %s (Server List Ping and the legacy pings)\n", m.java)
	}
	if m.query != nil {
		fmt.Fprintf(w, "gsq:   mcquery   udp %s (Query, challenged, rate-limited per source)\n", m.java)
	}
	if m.bedrock != nil {
		fmt.Fprintf(w, "gsq:   bedrock   udp %s (RakNet ping; pongs capped in size and rate-limited per source)\n", m.bed)
	}
	if profile != nil {
		fmt.Fprintf(w, "gsq:   the %s profile: %s\n", profile.Name, profile.Description)
	} else {
		fmt.Fprintf(w, "gsq:   %q, %d/%d players\n", c.Name, len(c.Players), c.MaxPlayers)
	}
	if m.slp != nil {
		fmt.Fprintf(w, "gsq: try: gsq query --protocol minecraft %s\n", m.java)
	}
	if m.bedrock != nil {
		fmt.Fprintf(w, "gsq: try: gsq query --protocol bedrock %s\n", m.bed)
	}
}

// minecraftProfile is the mctest profile --minecraft-profile names, nil
// for none. It plays its own content, so the content flags do not go
// with it.
func minecraftProfile(cmd *cobra.Command, o *serveOptions) (*mctest.Profile, error) {
	if o.minecraftProfile == "" {
		return nil, nil
	}
	if o.minecraft == "" && o.bedrock == "" {
		return nil, usageError("--minecraft-profile needs --minecraft or --bedrock")
	}
	p, err := mctest.LookupProfile(o.minecraftProfile)
	if err != nil {
		return nil, usageError("--minecraft-profile: %v", err)
	}
	for _, name := range []string{"config", "name", "map", "max-players", "player"} {
		if cmd.Flags().Changed(name) {
			return nil, usageError("--minecraft-profile serves the profile's own content: drop --%s", name)
		}
	}
	return &p, nil
}

// minecraftProfileHelp lists the mctest profiles with what each plays.
func minecraftProfileHelp() string {
	var b strings.Builder
	for _, p := range mctest.Profiles() {
		fmt.Fprintf(&b, "  %-22s %s\n", p.Name, p.Description)
	}
	return strings.TrimRight(b.String(), "\n")
}

// minecraftStatus is the status JSON of c: the name as the MOTD (§
// codes allowed), the version, the counts and a sample of at most 12
// players with the UUIDs an offline-mode server gives them.
func minecraftStatus(c sim.Content) *slp.Status {
	version := c.Version
	if version == "" {
		version = mcVersion
	}
	online, maxp := int32(len(c.Players)), int32(c.MaxPlayers)
	s := &slp.Status{
		Version:     &slp.Version{Name: version, Protocol: ptrTo(int32(mcProtocol))},
		Players:     &slp.Players{Online: &online, Max: &maxp},
		Description: slp.TextDescription(c.Name),
	}
	for i, p := range c.Players {
		if i == maxSample {
			break
		}
		s.Players.Sample = append(s.Players.Sample, slp.Player{Name: p.Name, ID: offlineUUID(p.Name)})
	}
	return s
}

// offlineUUID is the UUID an offline-mode server gives a player: the
// name-based (version 3, MD5) UUID of "OfflinePlayer:" and the name.
func offlineUUID(name string) string {
	h := md5.Sum([]byte("OfflinePlayer:" + name))
	h[6] = h[6]&0x0f | 0x30
	h[8] = h[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

// minecraftFullStat is Query's full stat of c, as the vanilla server
// fills it from the same state as its status: every player, the map as
// the world's name, the port the server answers on.
func minecraftFullStat(c sim.Content, s *slp.Status, addr netip.AddrPort) *mcquery.FullStat {
	world := c.Map
	if world == "" {
		world = "world"
	}
	fs := &mcquery.FullStat{}
	for _, kv := range [][2]string{{"hostname", s.Description.Legacy()}, {"gametype", "SMP"}, {"game_id", mcquery.GameID},
		{"version", s.Version.Name}, {"plugins", ""}, {"map", world},
		{"numplayers", strconv.Itoa(len(c.Players))}, {"maxplayers", strconv.Itoa(c.MaxPlayers)},
		{"hostport", strconv.Itoa(int(addr.Port()))}, {"hostip", addr.Addr().String()}} {
		fs.Set(kv[0], mcquery.Text(kv[1]))
	}
	for _, p := range c.Players {
		fs.Players = append(fs.Players, mcquery.Text(p.Name))
	}
	return fs
}

// bedrockStatus is the pong status of c, served on port.
func bedrockStatus(c sim.Content, port uint16) *bedrock.Status {
	version := c.Version
	if version == "" {
		version = bedrockVersion
	}
	level := c.Map
	if level == "" {
		level = "Bedrock level"
	}
	return &bedrock.Status{
		Edition: bedrock.Text("MCPE"), MOTD: bedrock.Text(c.Name), Protocol: ptrTo(int32(bedrockProtocol)),
		Version: bedrock.Text(version), Online: ptrTo(int32(len(c.Players))), Max: ptrTo(int32(c.MaxPlayers)),
		ServerID: bedrock.Text(strconv.FormatInt(bedrockServerGUID, 10)), LevelName: bedrock.Text(level),
		GameMode: bedrock.Text("Survival"), GameModeID: ptrTo(int32(1)), PortV4: ptrTo(int32(port)), PortV6: ptrTo(int32(-1)),
	}
}

// loopbackDefault is the address of p's default port on 127.0.0.1, for help
// texts.
func loopbackDefault(p *protocol.Protocol) string {
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), p.DefaultPort).String()
}

// ptrTo returns a pointer to v.
func ptrTo[T any](v T) *T { return &v }
