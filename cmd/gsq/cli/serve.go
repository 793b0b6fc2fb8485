package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/a2s/a2stest"
	"github.com/gsq-project/gsq/internal/sim"
	"github.com/gsq-project/gsq/ogp"
	"github.com/gsq-project/gsq/rcon"
)

func init() { register(newServeCmd) }

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

// simulation is a running simulated game server: A2S and OGP share one UDP
// socket (both start with 0xFFFFFFFF; OGP continues with "OGP\x00"), and
// RCON listens on TCP at the same port.
type simulation struct {
	udp  *net.UDPConn
	tcp  net.Listener
	a2s  *a2s.Server
	ogp  *ogp.Server
	rcon *rcon.Server
	wg   sync.WaitGroup
}

// startSimulation listens and serves in the background until Shutdown.
func startSimulation(cfg simConfig) (*simulation, error) {
	udpAddr, err := net.ResolveUDPAddr("udp", cfg.addr)
	if err != nil {
		return nil, usageError("--addr %q: %v", cfg.addr, err)
	}
	udp, tcp, err := listenPair(udpAddr, !cfg.noRCON)
	if err != nil {
		return nil, err
	}
	s := &simulation{udp: udp, tcp: tcp}
	port := uint16(udp.LocalAddr().(*net.UDPAddr).Port)

	var handler a2s.Handler
	if cfg.ownContent {
		info, players, rules := cfg.content.A2S(port)
		h, err := a2s.NewStaticHandler(info, players, rules)
		if err != nil {
			udp.Close()
			if tcp != nil {
				tcp.Close()
			}
			return nil, usageError("content cannot be served over A2S: %v", err)
		}
		handler = h
	}
	s.a2s = cfg.profile.NewA2SServer(handler)
	if cfg.noChallenge {
		s.a2s.NoChallenge = true
	}
	s.a2s.AcceptPaddedInfo = cfg.acceptPadded
	if cfg.rateLimit != 0 {
		s.a2s.RateLimit = cfg.rateLimit
	}
	if !cfg.noOGP {
		answer := cfg.content.OGP(port)
		s.ogp = &ogp.Server{
			NoChallenge: cfg.noChallenge,
			RateLimit:   cfg.rateLimit,
			Handler: ogp.HandlerFunc(func(netip.AddrPort, *ogp.Query) (*ogp.Answer, error) {
				return answer, nil
			}),
		}
	}
	if tcp != nil {
		s.rcon = &rcon.Server{
			Password: cfg.rconPassword,
			Dialect:  cfg.rconDialect,
			Handler:  cfg.content.RCON(),
			Logf:     cfg.logf,
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if err := s.rcon.Serve(tcp); err != nil && !errors.Is(err, rcon.ErrServerClosed) && cfg.logf != nil {
				cfg.logf("rcon: %v", err)
			}
		}()
	}
	writer := cfg.profile.WrapWriter(udp)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.serveUDP(writer)
	}()
	return s, nil
}

// listenPair listens on UDP at addr and, with tcp, on TCP at the same
// port. When addr asks for any free port (0), the UDP port the kernel picks
// may be taken on TCP, so it tries a few ports before giving up.
func listenPair(addr *net.UDPAddr, tcp bool) (*net.UDPConn, net.Listener, error) {
	tries := 1
	if addr.Port == 0 {
		tries = 20
	}
	var lastErr error
	for range tries {
		udp, err := net.ListenUDP("udp", addr)
		if err != nil {
			return nil, nil, err // a *net.OpError: "listen udp ADDR: ..."
		}
		if !tcp {
			return udp, nil, nil
		}
		l, err := net.Listen("tcp", udp.LocalAddr().String())
		if err == nil {
			return udp, l, nil
		}
		udp.Close()
		lastErr = err
	}
	return nil, nil, lastErr
}

// serveUDP reads datagrams until the socket closes and hands each to the
// protocol it belongs to.
func (s *simulation) serveUDP(w a2s.PacketWriter) {
	buf := make([]byte, 64*1024)
	for {
		n, from, err := s.udp.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue // a transient error such as ICMP feedback
		}
		b := buf[:n]
		if ogp.Is(b) {
			if s.ogp != nil {
				s.ogp.HandlePacket(w, from, b)
			}
			continue
		}
		s.a2s.HandlePacket(w, from, b)
	}
}

// Addr is the address the simulation serves on (UDP and TCP).
func (s *simulation) Addr() netip.AddrPort { return s.udp.LocalAddr().(*net.UDPAddr).AddrPort() }

// Shutdown stops serving: UDP at once, RCON after open sessions end or ctx
// expires.
func (s *simulation) Shutdown(ctx context.Context) error {
	s.udp.Close()
	var err error
	if s.rcon != nil {
		err = s.rcon.Shutdown(ctx)
	}
	s.wg.Wait()
	return err
}

type serveOptions struct {
	addr         string
	config       string
	name         string
	mapName      string
	game         string
	folder       string
	appID        uint32
	maxPlayers   int
	players      []string
	rules        []string
	profile      string
	noChallenge  bool
	acceptPadded bool
	rateLimit    float64
	noOGP        bool
	noRCON       bool
	rconPassword string
	rconDialect  string
	fleet        int
	basePort     int
	loss         float64
	reorder      float64
	duplicate    float64
	seed         int64
}

func newServeCmd(env *Env) *cobra.Command {
	o := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run a simulated game server (A2S, OGP and RCON) on loopback",
		Long: `Run a simulated game server until interrupted.

A2S and OGP answer on one UDP port; RCON listens on the same TCP port.
The content (name, map, players, rules) comes from flags or a YAML file
with the same field names (name, map, folder, game, app_id, max_players,
bots, version, keywords, password, vac, players: [{name, score, duration}],
rules: [{name, value}]). --profile picks a quirk profile (how the server
talks: challenges, splits, GoldSource double replies, loss, ...); without
content flags it also serves the profile's own content.

With --fleet N it runs N servers on ports --base-port to --base-port+N-1,
each with its own name, players and rules, answering A2S and OGP v0.91 on
its port (no RCON); --loss, --reorder and --duplicate inject faults.

The RCON password comes from --rcon-password or GSQ_RCON_PASSWORD; without
one, RCON refuses every login.

Profiles:
` + profileHelp(),
		Example: `  gsq serve --addr 127.0.0.1:27015
  gsq serve --name "My server" --map cp_badlands --player Alice:10:5m --rule mp_timelimit=30
  gsq serve --config server.yaml --rcon-password secret
  gsq serve --profile goldsource-dual
  gsq serve --fleet 1000 --base-port 20000 --loss 0.05`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runServe(cmd.Context(), env, cmd, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.addr, "addr", "127.0.0.1:27015", "address to serve on (UDP for A2S and OGP, TCP for RCON)")
	f.StringVar(&o.config, "config", "", "YAML file with the server's content")
	f.StringVar(&o.name, "name", "", "server name")
	f.StringVar(&o.mapName, "map", "", "map name")
	f.StringVar(&o.game, "game", "", "game description")
	f.StringVar(&o.folder, "folder", "", "game folder (mod directory)")
	f.Uint32Var(&o.appID, "app-id", 0, "Steam AppID")
	f.IntVar(&o.maxPlayers, "max-players", 0, "player slots")
	f.StringArrayVar(&o.players, "player", nil, "a player, NAME[:SCORE[:DURATION]] (repeatable)")
	f.StringArrayVar(&o.rules, "rule", nil, "a rule, NAME=VALUE (repeatable)")
	f.StringVar(&o.profile, "profile", "", "quirk profile: "+strings.Join(a2stest.ProfileNames(), ", "))
	f.BoolVar(&o.noChallenge, "no-challenge", false, "answer without challenges, like pre-2020 servers (no amplification protection)")
	f.BoolVar(&o.acceptPadded, "accept-padded-info", false, "answer A2S_INFO requests padded to 1200 bytes without a challenge, when the reply is no larger")
	f.Float64Var(&o.rateLimit, "rate-limit", 0, "requests per second accepted from one address (0 = default, negative = off)")
	f.BoolVar(&o.noOGP, "no-ogp", false, "do not answer OGP")
	f.BoolVar(&o.noRCON, "no-rcon", false, "do not listen for RCON")
	f.StringVar(&o.rconPassword, "rcon-password", "", "RCON password (or GSQ_RCON_PASSWORD)")
	f.StringVar(&o.rconDialect, "rcon-dialect", "source", "RCON dialect: source, cs2 or minecraft")
	f.IntVar(&o.fleet, "fleet", 0, "run N simulated A2S and OGP servers instead of one")
	f.IntVar(&o.basePort, "base-port", 20000, "first port of the fleet (keep the fleet below 32768, where Linux hands out ephemeral ports)")
	f.Float64Var(&o.loss, "loss", 0, "fleet: probability that a reply datagram is dropped")
	f.Float64Var(&o.reorder, "reorder", 0, "fleet: probability that a reply datagram is held back behind the next")
	f.Float64Var(&o.duplicate, "duplicate", 0, "fleet: probability that a reply datagram is sent twice")
	f.Int64Var(&o.seed, "seed", 1, "fleet: seed of the fault injection")
	return cmd
}

func runServe(ctx context.Context, env *Env, cmd *cobra.Command, o *serveOptions) error {
	for _, p := range []struct {
		name string
		v    float64
	}{{"--loss", o.loss}, {"--reorder", o.reorder}, {"--duplicate", o.duplicate}} {
		if p.v < 0 || p.v > 1 {
			return usageError("%s must be between 0 and 1", p.name)
		}
	}
	if o.fleet != 0 {
		return runFleet(ctx, env, o)
	}
	cfg, err := serveConfig(env, cmd, o)
	if err != nil {
		return err
	}
	s, err := startSimulation(cfg)
	if err != nil {
		return err
	}
	describeSimulation(env.Stderr, s, cfg)
	<-ctx.Done()
	fmt.Fprintln(env.Stderr, "gsq: shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return s.Shutdown(shutdownCtx)
}

// serveConfig turns the flags into a simConfig: profile first, then the
// file, then the content flags on top.
func serveConfig(env *Env, cmd *cobra.Command, o *serveOptions) (simConfig, error) {
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
			fmt.Fprintf(env.Stderr, "gsq: "+format+"\n", args...)
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
		p, ok := a2stest.ProfileByName(o.profile)
		if !ok {
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

// describeSimulation prints what a simulation serves, on stderr.
func describeSimulation(w io.Writer, s *simulation, cfg simConfig) {
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
	if s.ogp != nil {
		fmt.Fprintf(w, "gsq:   ogp   udp %s\n", addr)
	}
	if s.rcon != nil {
		auth := "password set"
		if cfg.rconPassword == "" {
			auth = "no password: every login is refused"
		}
		fmt.Fprintf(w, "gsq:   rcon  tcp %s (%s dialect, %s)\n", addr, cfg.rconDialect, auth)
	}
	if cfg.ownContent {
		c := cfg.content
		fmt.Fprintf(w, "gsq:   %q on %s, %d/%d players, %d rules\n", c.Name, c.Map, len(c.Players), c.MaxPlayers, len(c.Rules))
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
