package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/a2s/a2stest"
	"github.com/gsq-project/gsq/internal/sim"
	"github.com/gsq-project/gsq/minecraft/mctest"
	"github.com/gsq-project/gsq/ogp"
	"github.com/gsq-project/gsq/protocol"
	"github.com/gsq-project/gsq/rcon"
)

func init() { register(newServeCmd) }

// shutdownGrace is how long gsq serve lets open RCON sessions finish once
// interrupted.
const shutdownGrace = 5 * time.Second

// simConfig is everything a simulated server needs to start.
type simConfig struct {
	addr         string
	content      sim.Content
	ownContent   bool // content came from flags or a file, not the profile
	profile      a2stest.Profile
	noChallenge  bool
	acceptPadded bool // answer 1200-byte padded INFO without a challenge
	rateLimit    float64
	noOGP        bool
	noRCON       bool
	rconPassword string
	rconDialect  rcon.Dialect
	logf         func(format string, args ...any)
}

// startSimulation listens on cfg.addr and serves in the background until
// Shutdown: A2S and OGP on the UDP port, RCON on TCP at the same port.
func startSimulation(cfg simConfig) (*sim.Server, error) {
	udpAddr, err := net.ResolveUDPAddr("udp", cfg.addr)
	if err != nil {
		return nil, usageError("--addr %q: %v", cfg.addr, err)
	}
	s, err := sim.Listen(udpAddr, !cfg.noRCON)
	if err != nil {
		return nil, err
	}
	port := s.Addr().Port()

	var handler a2s.Handler
	if cfg.ownContent {
		info, players, rules := cfg.content.A2S(port)
		h, err := a2s.NewStaticHandler(info, players, rules)
		if err != nil {
			s.Shutdown(context.Background())
			return nil, usageError("content cannot be served over A2S: %v", err)
		}
		handler = h
	}
	r := cfg.profile.NewResponder(handler)
	r.Server.NoChallenge = r.Server.NoChallenge || cfg.noChallenge
	r.Server.AcceptPaddedInfo = cfg.acceptPadded
	if cfg.rateLimit != 0 {
		r.Server.RateLimit = cfg.rateLimit
	}
	s.Mux.A2S = r
	if !cfg.noOGP {
		answer := cfg.content.OGP(port)
		s.Mux.OGP = &ogp.Server{
			NoChallenge: cfg.noChallenge,
			RateLimit:   cfg.rateLimit,
			Handler: ogp.HandlerFunc(func(netip.AddrPort, *ogp.Query) (*ogp.Answer, error) {
				return answer, nil
			}),
		}
	}
	if !cfg.noRCON {
		s.RCON = &rcon.Server{
			Password: cfg.rconPassword,
			Dialect:  cfg.rconDialect,
			Handler:  cfg.content.RCON(),
			Logf:     cfg.logf,
		}
	}
	s.WrapWriter = cfg.profile.WrapWriter
	s.Logf = cfg.logf
	s.Start()
	return s, nil
}

type serveOptions struct {
	addr             string
	config           string
	name             string
	mapName          string
	game             string
	folder           string
	appID            uint32
	maxPlayers       int
	players          []string
	rules            []string
	profile          string
	noChallenge      bool
	acceptPadded     bool
	rateLimit        float64
	noOGP            bool
	noRCON           bool
	rconPassword     string
	rconDialect      string
	fleet            int
	basePort         int
	minecraft        string // --minecraft ADDR: Server List Ping and Query
	bedrock          string // --bedrock ADDR: Bedrock's RakNet ping
	minecraftProfile string // --minecraft-profile: an mctest profile
	loss             float64
	reorder          float64
	duplicate        float64
	seed             uint64
	master           string // --master: a master server listing the fleet (serve_fleet.go)
	consoles         consoleServeOptions
	fleetHost        string
}

// fleetOnlyFlags apply to --fleet only, and singleOnlyFlags to one server.
var (
	fleetOnlyFlags  = []string{"base-port", "fleet-host", "loss", "reorder", "duplicate", "seed", "master"}
	singleOnlyFlags = []string{"addr", "config", "name", "map", "game", "folder", "app-id", "max-players", "player", "rule",
		"profile", "accept-padded-info", "rate-limit", "no-ogp", "no-rcon", "rcon-password", "rcon-dialect", protocol.Minecraft.Name, protocol.Bedrock.Name, "minecraft-profile"}
)

// defaultServeAddr is where gsq serve listens: loopback, on A2S's
// conventional port, where OGP and RCON answer too.
var defaultServeAddr = netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), a2s.DefaultPort).String()

func newServeCmd(env *Env) *cobra.Command {
	o := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run a simulated game server (A2S, OGP and RCON) on loopback",
		Long: `Run a simulated game server until interrupted.

A2S and OGP answer on one UDP port; RCON listens on the same TCP port.
--webrcon, --battleye, --telnet and --palworld ADDR add the consoles of
Rust (WebRCON), DayZ and Arma (BattlEye RCon, UDP), 7 Days to Die
(telnet) and Palworld (REST API), each on its own address, serving the
same name, map and players, with --rcon-password as their password.
The content (name, map, players, rules) comes from flags or a YAML file
with the same field names (name, map, folder, game, app_id, max_players,
bots, version, keywords, password, vac, players: [{name, score, duration}],
rules: [{name, value}]); the file also fills what OGP reports beyond A2S
(next_map, game_type, game_mode, reserved_slots, teams: [{name, score,
players}], addons: [{short_name, long_name, version, active}], limits:
[{type: time|player-score|rounds|team-score, limit, left}]). OGP answers
every section and field it is asked for, empty where the content has
nothing, so that a client can tell "none" from "not supported". --profile
picks a quirk profile (how the server talks: challenges, splits,
GoldSource double replies, loss, ...); without content flags it also
serves the profile's own content.

Queries need a challenge, as on servers since 2020, and until a client
proves it no reply is larger than its request (--no-challenge and the
legacy and banned profiles skip the challenge, as the servers they play
do). One address may send 25 A2S and 50 OGP requests a second (bursts of
twice that) unless --rate-limit says otherwise. Once interrupted, the
server stops answering UDP at once and gives open RCON sessions up to 5 s.

With --fleet N it runs N servers on ports --base-port to --base-port+N-1,
each with its own name, players and rules, answering A2S and OGP v0.91 on
its port (no RCON, no rate limit, one file descriptor each); --loss,
--reorder and --duplicate inject faults, drawn from --seed. --master
IP:PORT also runs a master server there (Valve's master server protocol,
UDP) that lists the fleet, so that 'gsq discover --master IP:PORT | gsq
scan' finds and queries it.

--minecraft ADDR serves the same content as a Minecraft Java server:
Server List Ping (and the legacy pings) over TCP and Query over UDP, on
the one port, as a server with enable-query does (the name is the MOTD,
§ codes allowed; the status shows a sample of up to 12 players, Query
every one). --bedrock ADDR answers Bedrock's RakNet ping. Without --addr,
these run alone; with it, beside the A2S, OGP and RCON server. Query
needs a challenge and answers 25 requests a second per address, Bedrock
5 pongs (no reply is larger than 512 bytes), unless --rate-limit says
otherwise. --minecraft-profile plays one of the fake servers of gsq's
tests instead, with its content and quirks (status off, a proxy without
pong, a 1.6 server, Forge, one byte per write, ...):
` + minecraftProfileHelp() + `

The RCON password comes from --rcon-password or GSQ_RCON_PASSWORD; without
one, RCON refuses every login.

Profiles:
` + profileHelp(),
		Example: `  gsq serve --addr ` + defaultServeAddr + `
  gsq serve --name "My server" --map cp_badlands --player Alice:10:5m --rule mp_timelimit=30
  gsq serve --config server.yaml --rcon-password secret
  gsq serve --profile goldsource-dual
  gsq serve --fleet 1000 --base-port 20000 --loss 0.05
  gsq serve --fleet 3000 --master 127.0.0.1:27011
  gsq serve --rcon-password secret --webrcon ` + loopbackDefault(protocol.WebRcon) + ` --battleye 127.0.0.1:2306 --telnet 127.0.0.1:8081 --palworld 127.0.0.1:8212
  gsq serve --minecraft ` + loopbackDefault(protocol.Minecraft) + ` --bedrock ` + loopbackDefault(protocol.Bedrock) + ` --name "§aMy server" --player Steve --max-players 20`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runServe(cmd.Context(), env, cmd, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.addr, "addr", defaultServeAddr, "address to serve on (UDP for A2S and OGP, TCP for RCON)")
	f.StringVar(&o.config, "config", "", "YAML file with the server's content")
	f.StringVar(&o.name, "name", "", "server name")
	f.StringVar(&o.mapName, "map", "", "map name")
	f.StringVar(&o.game, "game", "", "game description")
	f.StringVar(&o.folder, "folder", "", "game folder (mod directory)")
	f.Var(&numberFlag[uint32]{p: &o.appID, min: 0, max: math.MaxUint32}, "app-id", "Steam `AppID`")
	f.Var(&numberFlag[int]{p: &o.maxPlayers, min: 0, max: 65535}, "max-players", "player `slots`")
	f.StringArrayVar(&o.players, "player", nil, "a player, NAME[:SCORE[:DURATION]] (repeatable)")
	f.StringArrayVar(&o.rules, "rule", nil, "a rule, NAME=VALUE (repeatable)")
	f.StringVar(&o.profile, "profile", "", "quirk profile: "+strings.Join(a2stest.ProfileNames(), ", "))
	f.BoolVar(&o.noChallenge, "no-challenge", false, "answer without challenges, like pre-2020 servers (no amplification protection)")
	f.BoolVar(&o.acceptPadded, "accept-padded-info", false, "answer A2S_INFO requests padded to 1200 bytes without a challenge, when the reply is no larger")
	f.Var(&numberFlag[float64]{p: &o.rateLimit, min: math.Inf(-1), max: math.Inf(1)}, "rate-limit", "`requests` per second accepted from one address (0 = default: 25 for A2S, 50 for OGP; negative = off)")
	f.BoolVar(&o.noOGP, "no-ogp", false, "do not answer OGP")
	f.StringVar(&o.minecraft, protocol.Minecraft.Name, "", "also serve as a Minecraft Java server on `ADDR`: Server List Ping over TCP and Query over UDP")
	f.StringVar(&o.bedrock, protocol.Bedrock.Name, "", "also serve as a Minecraft Bedrock server on `ADDR` (UDP)")
	f.StringVar(&o.minecraftProfile, "minecraft-profile", "", "the Minecraft servers play this profile, content and quirks: "+strings.Join(mctest.ProfileNames(), ", "))
	f.BoolVar(&o.noRCON, "no-rcon", false, "do not listen for RCON")
	f.StringVar(&o.rconPassword, "rcon-password", "", "RCON password (or GSQ_RCON_PASSWORD)")
	f.StringVar(&o.rconDialect, "rcon-dialect", "source", "RCON dialect: source, cs2 or minecraft")
	f.Var(&numberFlag[int]{p: &o.fleet, min: 1, max: 65535}, "fleet", "run `N` simulated A2S and OGP servers instead of one")
	o.basePort = 20000
	f.Var(&numberFlag[int]{p: &o.basePort, min: 1, max: 65535}, "base-port", "first `port` of the fleet (keep the fleet below 32768, where Linux hands out ephemeral ports)")
	f.StringVar(&o.fleetHost, "fleet-host", "127.0.0.1", "the IP address the fleet listens on (another loopback address, 127.0.0.2 and up, gives another 64k ports)")
	f.Var(&numberFlag[float64]{p: &o.loss, min: 0, max: 1}, "loss", "fleet: `probability` that a reply datagram is dropped")
	f.Var(&numberFlag[float64]{p: &o.reorder, min: 0, max: 1}, "reorder", "fleet: `probability` that a reply datagram is held back behind the next (2 ms at most)")
	f.Var(&numberFlag[float64]{p: &o.duplicate, min: 0, max: 1}, "duplicate", "fleet: `probability` that a reply datagram is sent twice")
	o.seed = 1
	f.Var(&numberFlag[uint64]{p: &o.seed, min: 0, max: math.MaxUint64}, "seed", "fleet: `seed` of the fault injection")
	f.StringVar(&o.master, "master", "", "fleet: run a master server on `IP:PORT` (UDP) that lists the fleet")
	addConsoleServeFlags(f, &o.consoles)
	_ = cmd.RegisterFlagCompletionFunc("profile", cobra.FixedCompletions(a2stest.ProfileNames(), cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("rcon-dialect", cobra.FixedCompletions(rconDialects, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func runServe(ctx context.Context, env *Env, cmd *cobra.Command, o *serveOptions) error {
	fleet := cmd.Flags().Changed("fleet")
	wrong, why := append(singleOnlyFlags, consoleServeFlags...), "does not apply to --fleet"
	if !fleet {
		wrong, why = fleetOnlyFlags, "applies to --fleet only (a single server takes --profile lossy)"
	}
	for _, name := range wrong {
		if cmd.Flags().Changed(name) {
			return usageError("--%s %s", name, why)
		}
	}
	// The servers log from their own goroutines: one lock for stderr.
	stderr := &lockedWriter{w: env.Stderr}
	if fleet {
		return runFleet(ctx, stderr, o)
	}
	cfg, err := serveConfig(env, stderr, cmd, o)
	if err != nil {
		return err
	}
	mc := o.minecraft != "" || o.bedrock != ""
	profile, err := minecraftProfile(cmd, o)
	if err != nil {
		return err
	}
	var s *sim.Server
	if !mc || cmd.Flags().Changed("addr") {
		if s, err = startSimulation(cfg); err != nil {
			return err
		}
		describeSimulation(stderr, s, cfg)
	}
	var m *minecraftServers
	if mc {
		if m, err = startMinecraft(o.minecraft, o.bedrock, cfg.content, profile, cfg.rateLimit, cfg.logf); err != nil {
			if s != nil {
				s.Shutdown(context.Background())
			}
			return err
		}
		m.describe(stderr, cfg.content, profile)
	}
	consoles, err := startConsoles(&o.consoles, cfg.content, cfg.rconPassword)
	if err != nil {
		if s != nil {
			s.Shutdown(context.Background())
		}
		if m != nil {
			m.shutdown(context.Background())
		}
		return err
	}
	consoles.describe(stderr)
	<-ctx.Done()
	fmt.Fprintln(stderr, "gsq: shutting down")
	consoles.close()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	var errs []error
	if s != nil {
		errs = append(errs, s.Shutdown(shutdownCtx))
	}
	if m != nil {
		errs = append(errs, m.shutdown(shutdownCtx))
	}
	return errors.Join(errs...)
}

// serveConfig turns the flags into a simConfig: profile first, then the
// file, then the content flags on top.
func serveConfig(env *Env, stderr io.Writer, cmd *cobra.Command, o *serveOptions) (simConfig, error) {
	cfg := simConfig{
		addr:         o.addr,
		content:      sim.Default(),
		noChallenge:  o.noChallenge,
		acceptPadded: o.acceptPadded,
		rateLimit:    o.rateLimit,
		noOGP:        o.noOGP,
		noRCON:       o.noRCON,
		rconPassword: o.rconPassword,
		logf: func(format string, args ...any) {
			fmt.Fprintf(stderr, "gsq: "+format+"\n", args...)
		},
	}
	if cfg.rconPassword == "" {
		cfg.rconPassword = env.Getenv("GSQ_RCON_PASSWORD")
	}
	dialect, err := rcon.ParseDialect(o.rconDialect)
	if err != nil {
		return cfg, usageError("--rcon-dialect: %v", err)
	}
	cfg.rconDialect = dialect
	if o.profile != "" {
		p, err := a2stest.LookupProfile(o.profile)
		if err != nil {
			return cfg, usageError("unknown profile %q (known: %s)", o.profile, strings.Join(a2stest.ProfileNames(), ", "))
		}
		cfg.profile = p
	} else {
		cfg.ownContent = true
	}
	if o.config != "" {
		c, err := loadContent(o.config)
		if err != nil {
			return cfg, err
		}
		cfg.content, cfg.ownContent = c, true
	}
	c := &cfg.content
	set := func(flag string, apply func()) {
		if cmd.Flags().Changed(flag) {
			apply()
			cfg.ownContent = true
		}
	}
	set("name", func() { c.Name = o.name })
	set("map", func() { c.Map = o.mapName })
	set("game", func() { c.Game = o.game })
	set("folder", func() { c.Folder = o.folder })
	set("app-id", func() { c.AppID = o.appID })
	set("max-players", func() { c.MaxPlayers = o.maxPlayers })
	if len(o.players) > 0 {
		c.Players = nil
		for _, s := range o.players {
			p, err := parsePlayer(s)
			if err != nil {
				return cfg, usageError("%v", err)
			}
			c.Players = append(c.Players, p)
		}
		cfg.ownContent = true
	}
	if len(o.rules) > 0 {
		c.Rules = nil
		for _, s := range o.rules {
			r, err := parseRule(s)
			if err != nil {
				return cfg, usageError("%v", err)
			}
			c.Rules = append(c.Rules, r)
		}
		cfg.ownContent = true
	}
	if err := c.Validate(); err != nil {
		return cfg, usageError("%v", err)
	}
	return cfg, nil
}

// lockedWriter serializes writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// describeSimulation prints what a simulation serves, on stderr.
func describeSimulation(w io.Writer, s *sim.Server, cfg simConfig) {
	addr := s.Addr()
	fmt.Fprintf(w, "gsq: serving on %s\n", addr)
	fmt.Fprintf(w, "gsq:   a2s   udp %s", addr)
	if cfg.profile.Name != "" {
		fmt.Fprintf(w, " (profile %s: %s)", cfg.profile.Name, cfg.profile.Description)
	}
	if cfg.noChallenge || cfg.profile.NoChallenge {
		fmt.Fprint(w, ", no challenge")
	} else if cfg.acceptPadded {
		fmt.Fprint(w, ", padded INFO answered without a challenge")
	}
	fmt.Fprintln(w)
	if s.Mux.OGP != nil {
		fmt.Fprintf(w, "gsq:   ogp   udp %s\n", addr)
	}
	if s.RCON != nil {
		auth := "password set"
		if cfg.rconPassword == "" {
			auth = "no password: every login is refused"
		}
		fmt.Fprintf(w, "gsq:   rcon  tcp %s (%s dialect, %s)\n", addr, cfg.rconDialect, auth)
	}
	if cfg.ownContent {
		c := cfg.content
		rules := fmt.Sprintf("%d rules", len(c.Rules))
		if len(c.Rules) == 1 {
			rules = "1 rule"
		}
		fmt.Fprintf(w, "gsq:   %q on %s, %d/%d players, %s\n", c.Name, c.Map, len(c.Players), c.MaxPlayers, rules)
	} else {
		fmt.Fprintf(w, "gsq:   the %s profile's own content\n", cfg.profile.Name)
	}
	fmt.Fprintf(w, "gsq: try: gsq query %s\n", addr)
}

// profileHelp lists the a2stest quirk profiles with what each plays.
func profileHelp() string {
	var b strings.Builder
	for _, p := range a2stest.Profiles() {
		fmt.Fprintf(&b, "  %-19s %s\n", p.Name, p.Description)
	}
	return strings.TrimRight(b.String(), "\n")
}
