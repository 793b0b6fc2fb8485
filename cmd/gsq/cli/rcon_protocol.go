package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gsq-project/gsq/battleye"
	"github.com/gsq-project/gsq/console"
	"github.com/gsq-project/gsq/palworld"
	"github.com/gsq-project/gsq/protocol"
	"github.com/gsq-project/gsq/rcon"
	"github.com/gsq-project/gsq/sdtd"
	"github.com/gsq-project/gsq/webrcon"
)

// This file picks the console protocol of `gsq rcon` (issue 21): Source
// and Minecraft RCON (package rcon), Rust's WebRCON, BattlEye RCon,
// Palworld's REST API and the 7 Days to Die telnet console, each a
// console.Session, chosen by --protocol, a URL scheme or a configured
// server's protocol key; and it tells a user whose Source RCON login
// found another console which protocol to use.

// The --protocol values, as issue 21 names them. WebRCON is a query
// protocol too (gsq query --protocol webrcon): its name is the
// registry's.
const (
	protoBattlEye = "battleye"
	protoPalworld = "palworld"
	protoTelnet   = "telnet"
)

// Source and Minecraft RCON are package rcon's dialects (whose name
// "minecraft" the registry's Server List Ping shares).
var (
	protoWebRcon   = protocol.WebRcon.Name
	protoSource    = rcon.DialectSource.String()
	protoMinecraft = rcon.DialectMinecraft.String()
)

// consoleProtocols lists --protocol's values.
var consoleProtocols = []string{protoSource, protoMinecraft, protoWebRcon, protoBattlEye, protoPalworld, protoTelnet}

// consoleSchemes maps the URL schemes gsq rcon takes to their protocol;
// rcon:// is Source or Minecraft RCON, by the port or --dialect.
var consoleSchemes = map[string]string{
	"rcon":       "",
	protoWebRcon: protoWebRcon,
	"battleye":   protoBattlEye,
	"telnet":     protoTelnet,
	"palworld":   protoPalworld,
}

// consoleDefaultPort is each protocol's standard port (0 for RCON, whose
// port follows the dialect).
func consoleDefaultPort(proto string) uint16 {
	switch proto {
	case protoWebRcon:
		return protocol.WebRcon.DefaultPort
	case protoBattlEye:
		return battleye.DefaultPort
	case protoTelnet:
		return sdtd.DefaultPort
	case protoPalworld:
		return palworld.DefaultPort
	}
	return 0
}

// consoleTransport names the transport of proto, for messages.
func consoleTransport(proto string) string {
	if proto == protoBattlEye {
		return "udp"
	}
	return "tcp"
}

// isRconProtocol reports whether proto is served by package rcon.
func isRconProtocol(proto string) bool {
	return proto == "" || proto == protoSource || proto == protoMinecraft
}

// parseProtocol checks a --protocol or config value.
func parseProtocol(s string) (string, error) {
	for _, p := range consoleProtocols {
		if s == p {
			return p, nil
		}
	}
	return "", fmt.Errorf("unknown protocol %q (known: %s)", s, strings.Join(consoleProtocols, ", "))
}

// isConsoleURL reports whether s is a URL of a scheme gsq rcon takes.
func isConsoleURL(s string) bool {
	scheme, _, ok := strings.Cut(s, "://")
	_, known := consoleSchemes[strings.ToLower(scheme)]
	return ok && known
}

// consoleURL is what a SCHEME://[:PASSWORD@]HOST[:PORT] argument says.
type consoleURL struct {
	proto    string  // "" for rcon://
	address  string  // HOST[:PORT]
	password *string // when the URL has one
}

// parseConsoleURL reads a console URL (isConsoleURL(s) holds).
func parseConsoleURL(s string) (consoleURL, error) {
	u, err := url.Parse(s)
	scheme := "rcon"
	if err == nil {
		scheme = strings.ToLower(u.Scheme)
	}
	if err != nil || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return consoleURL{}, fmt.Errorf("bad URL: want %s://[:PASSWORD@]HOST[:PORT]", scheme)
	}
	c := consoleURL{proto: consoleSchemes[scheme], address: u.Host}
	if pw, ok := u.User.Password(); ok {
		c.password = &pw
	}
	return c, nil
}

// pickProtocol settles the protocol from --protocol, the URL's scheme and
// the configured server's key, in that order, and checks that the RCON
// flags fit it. It returns the protocol ("" means Source or Minecraft by
// the port) and the dialect to use.
func pickProtocol(flagProto, urlProto, configProto string, flagSet bool, dialect, profile string) (string, string, error) {
	proto := configProto
	if urlProto != "" {
		proto = urlProto
	}
	if flagSet {
		if urlProto != "" && flagProto != urlProto {
			return "", "", fmt.Errorf("--protocol %s contradicts the URL's %s://", flagProto, urlProto)
		}
		proto = flagProto
	}
	if !isRconProtocol(proto) {
		if dialect != "" {
			return "", "", fmt.Errorf("--dialect applies to Source and Minecraft RCON, not --protocol %s", proto)
		}
		if profile != "" {
			return "", "", fmt.Errorf("--profile applies to Source and Minecraft RCON, not --protocol %s", proto)
		}
		return proto, "", nil
	}
	switch {
	case proto == protoMinecraft && dialect != "" && dialect != protoMinecraft,
		proto == protoSource && dialect == protoMinecraft:
		return "", "", fmt.Errorf("--dialect %s contradicts --protocol %s", dialect, proto)
	case proto != "" && dialect == "":
		dialect = proto
	}
	return proto, dialect, nil
}

// consoleAddress is the address to dial for a protocol other than RCON:
// HOST[:PORT], the protocol's port by default.
func consoleAddress(address, proto string) (string, error) {
	hp, err := parseHostPort(address, consoleDefaultPort(proto))
	if err != nil {
		return "", err
	}
	return net.JoinHostPort(hp.host, strconv.Itoa(int(hp.port))), nil
}

// protocolName is the protocol a target speaks, for messages.
func (t *rconTarget) protocolName() string {
	if isRconProtocol(t.protocol) {
		return t.opts.Dialect.String() + " RCON"
	}
	return t.protocol
}

// consoleDumper returns a Debug hook for the protocols other than RCON:
// each message (a frame, a datagram, a line, an HTTP body) as its
// direction, size and text, the password masked by the client.
func consoleDumper(w io.Writer, addr string) func(dir string, peer netip.AddrPort, b []byte) {
	return dumper(w, addr, func(_ string, b []byte) string {
		return fmt.Sprintf("%q\n", abbreviate(strings.ToValidUTF8(string(b), "\uFFFD"), 200))
	})
}

// followPoll is how often a follow of Palworld's REST API, which pushes
// nothing, asks for the player list to report joins and leaves.
const followPoll = 5 * time.Second

// dial connects and logs in within the timeout, over the target's
// protocol.
func (t *rconTarget) dial(ctx context.Context) (console.Session, error) {
	o := &t.opts
	switch t.protocol {
	case protoWebRcon:
		return session(webrcon.Dial(ctx, t.addr, t.password, &webrcon.Options{
			Timeout: o.Timeout, KeepAlive: o.KeepAlive, OnReconnect: o.OnReconnect, Logf: o.Logf, Debug: o.Debug}))
	case protoBattlEye:
		return session(battleye.Dial(ctx, t.addr, t.password, &battleye.Options{
			Timeout: o.Timeout, KeepAlive: o.KeepAlive, OnReconnect: o.OnReconnect, Logf: o.Logf, Debug: o.Debug}))
	case protoTelnet:
		return session(sdtd.Dial(ctx, t.addr, t.password, &sdtd.Options{
			Timeout: o.Timeout, KeepAlive: o.KeepAlive, OnReconnect: o.OnReconnect, Logf: o.Logf, Debug: o.Debug}))
	case protoPalworld:
		popts := &palworld.Options{Timeout: o.Timeout, Logf: o.Logf, Debug: o.Debug}
		if t.follow {
			popts.PollInterval = followPoll
		}
		return session(palworld.Dial(ctx, t.addr, t.password, popts))
	}
	return session(rcon.Dial(ctx, t.addr, t.password, o))
}

// session returns a client as a console.Session, and no session (rather
// than a typed nil) with an error.
func session[C console.Session](c C, err error) (console.Session, error) {
	if err != nil {
		return nil, err
	}
	return c, nil
}

// exec runs one command within the timeout and returns its raw output.
// An RCON client hands its buffer over, so a long output exists once.
func (t *rconTarget) exec(ctx context.Context, s console.Session, cmd string) (*rcon.Response, error) {
	ctx, cancel := context.WithTimeout(ctx, t.opts.Timeout)
	defer cancel()
	if c, ok := s.(*rcon.Client); ok {
		return c.Do(ctx, cmd)
	}
	out, err := s.Exec(ctx, cmd)
	return &rcon.Response{Body: []byte(out)}, err
}

// The common commands of the other consoles, for the shell's Tab
// completion.
var (
	rustCommands = []string{"serverinfo", "playerlist", "status", "say", "kick", "ban", "banid", "unban", "banlist",
		"server.save", "server.writecfg", "console.tail", "chat.tail", "oxide.plugins", "oxide.reload", "restart", "quit"}
	battlEyeCommands = []string{"players", "bans", "admins", "say", "kick", "ban", "addBan", "removeBan", "loadBans",
		"writeBans", "missions", "version", "loadScripts", "loadEvents", "MaxPing", "#restart", "#shutdown", "#lock", "#unlock"}
	sdtdCommands = []string{"listplayers", "lp", "version", "gettime", "gt", "say", "kick", "ban", "admin", "whitelist",
		"help", "saveworld", "sa", "shutdown", "listents", "le", "mem", "settime", "spawnairdrop", "weather"}
)

// palworldCommands are the names palworld.Commands lists ("players |
// showplayers  GET players" names two).
func palworldCommands() []string {
	var names []string
	for _, line := range palworld.Commands {
		usage, _, _ := strings.Cut(line, "  ")
		fields := strings.Fields(usage)
		for i, f := range fields {
			if i == 0 || i > 1 && fields[i-1] == "|" {
				names = append(names, f)
			}
		}
	}
	return names
}

// shellCommands are the commands the shell completes.
func (t *rconTarget) shellCommands() []string {
	switch t.protocol {
	case protoWebRcon:
		return rustCommands
	case protoBattlEye:
		return battlEyeCommands
	case protoTelnet:
		return sdtdCommands
	case protoPalworld:
		return palworldCommands()
	}
	if t.opts.Dialect == rcon.DialectMinecraft {
		return minecraftCommands
	}
	return sourceCommands
}

// detectTimeout bounds each probe of detectProtocol.
const detectTimeout = 2 * time.Second

// wrongProtocolError is a login that failed because the port serves
// another console: it names the protocol to use.
type wrongProtocolError struct {
	addr   string
	asked  string // the protocol tried
	served string // the protocol found
	use    string // how to reach it: flags and address
	err    error  // the login's error
}

func (e *wrongProtocolError) Error() string {
	return fmt.Sprintf("%s does not speak %s: it serves %s", e.addr, e.asked, e.served)
}

func (e *wrongProtocolError) Unwrap() error { return e.err }

// isWrongProtocol reports whether err is a login to another console.
func isWrongProtocol(err error) bool {
	var wp *wrongProtocolError
	return errors.As(err, &wp)
}

// detectProtocol looks, after a Source or Minecraft RCON login failed
// with err, for the console the port serves instead, without sending a
// password: a 7 Days to Die console speaks first, Palworld's REST API
// answers 401 with a Basic challenge, a WebSocket server (Rust's WebRCON)
// answers an HTTP request. A refused port on a host whose Palworld REST
// API answers on its own port (Palworld's RCON is being withdrawn) is
// found too. It returns err unchanged when nothing is found.
func (t *rconTarget) detectProtocol(ctx context.Context, err error) error {
	if !isRconProtocol(t.protocol) || errors.Is(err, rcon.ErrAuthFailed) && !errors.Is(err, rcon.ErrConnClosed) {
		return err
	}
	host, port, splitErr := net.SplitHostPort(t.addr)
	if splitErr != nil {
		return err
	}
	asked := t.protocolName()
	found := func(proto, served, addr string) error {
		use := "--protocol " + proto + " " + net.JoinHostPort(host, port)
		if addr != t.addr {
			use = "--protocol " + proto + " " + addr
		}
		return &wrongProtocolError{addr: t.addr, asked: asked, served: served, use: use, err: err}
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		rest := net.JoinHostPort(host, strconv.Itoa(int(cmp.Or(t.restPort, palworld.DefaultPort))))
		if palworld.Probe(ctx, rest, &palworld.Options{Timeout: detectTimeout}) == nil {
			return found(protoPalworld, "nothing, but Palworld's REST API answers on "+rest+" (Palworld is withdrawing its RCON)", rest)
		}
		return err
	}
	if errors.Is(err, context.Canceled) || errors.As(err, new(*net.DNSError)) {
		return err
	}
	// The 7 Days to Die console speaks first, so its probe sends nothing
	// (anything sent could count toward its lockout) and comes first,
	// unless the login met silence (a console that speaks first would
	// have answered). The HTTP probes then run at once, bounded together,
	// Palworld's first, since any HTTP server answers the WebSocket probe.
	ctx, cancel := context.WithTimeout(ctx, 2*detectTimeout)
	defer cancel()
	if !errors.Is(err, rcon.ErrNoAuthResponse) && sdtd.Probe(ctx, t.addr, &sdtd.Options{Timeout: detectTimeout}) == nil {
		return found(protoTelnet, "the 7 Days to Die telnet console", t.addr)
	}
	probes := []struct {
		proto, served string
		probe         func() error
	}{
		{protoPalworld, "Palworld's REST API", func() error { return palworld.Probe(ctx, t.addr, &palworld.Options{Timeout: detectTimeout}) }},
		{protoWebRcon, "HTTP, as Rust's WebRCON does", func() error { return webrcon.Probe(ctx, t.addr, &webrcon.Options{Timeout: detectTimeout}) }},
	}
	// A probe's success counts once every probe before it has failed.
	type outcome struct {
		i   int
		err error
	}
	outcomes := make(chan outcome, len(probes))
	for i, p := range probes {
		go func() { outcomes <- outcome{i, p.probe()} }()
	}
	results := make([]error, len(probes))
	pending := make([]bool, len(probes))
	for i := range pending {
		pending[i] = true
	}
	for range probes {
		o := <-outcomes
		results[o.i], pending[o.i] = o.err, false
		for i, p := range probes {
			if pending[i] {
				break
			}
			if results[i] == nil {
				return found(p.proto, p.served, t.addr)
			}
		}
	}
	return err
}

// consoleHint suggests what to check after err of a protocol other than
// RCON; it returns "" when it has nothing to say.
func consoleHint(t *rconTarget, err error) string {
	var wp *wrongProtocolError
	switch {
	case errors.As(err, &wp):
		return "use: gsq rcon " + wp.use
	case isRconProtocol(t.protocol):
		return ""
	case errors.Is(err, sdtd.ErrLockedOut):
		return "the server closed the connection before its password prompt: 7 Days to Die blocks an address after repeated wrong passwords (TelnetFailedLoginLimit), and only time lifts it"
	case errors.Is(err, console.ErrAuthFailed) && t.protocol == protoTelnet:
		return "the server refused the password; gsq never sends it again, since 7 Days to Die counts every failure toward a lockout and a success does not reset the count"
	case errors.Is(err, console.ErrAuthFailed) && t.protocol == protoWebRcon:
		return "Rust refused the password (the rcon.password of the server); " + passwordRiskNote(t.password)
	case errors.Is(err, console.ErrAuthFailed):
		return "the server refused the password"
	case errors.Is(err, battleye.ErrNoResponse):
		return fmt.Sprintf("no answer to the login within %v: BattlEye RCon is off (RConPort and RConPassword in BEServer_x64.cfg), the server is still loading its mission, or this is not its RCon port (udp, %d by default)", t.opts.Timeout, battleye.DefaultPort)
	case errors.Is(err, webrcon.ErrNotWebRcon):
		return "the port does not answer HTTP: is it the rcon.port of a server started with +rcon.web 1?"
	case errors.Is(err, palworld.ErrNotPalworld):
		return "the port serves HTTP, but not Palworld's REST API: set RESTAPIEnabled=True and RESTAPIPort in PalWorldSettings.ini"
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Sprintf("nothing listens on %s/%s: is the console enabled, and is this its port (%d by default)?", t.addr, consoleTransport(t.protocol), consoleDefaultPort(t.protocol))
	case errors.Is(err, console.ErrTimeout):
		return fmt.Sprintf("no complete answer within %v: the command may take longer (raise --timeout); --debug shows what arrived", t.opts.Timeout)
	}
	return ""
}

// passwordRiskNote says which characters of the password Rust may
// mishandle, if any.
func passwordRiskNote(password string) string {
	if risk := webrcon.PasswordRisk(password); risk != "" {
		return "the password holds " + risk + ", which Rust admins are told to avoid (Facepunch/webrcon#9)"
	}
	return "gsq sends it percent-encoded in the URL path"
}
