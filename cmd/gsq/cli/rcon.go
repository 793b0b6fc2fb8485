package cli

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/gsq-project/gsq/battleye"
	"github.com/gsq-project/gsq/console"
	"github.com/gsq-project/gsq/internal/jsonenc"
	"github.com/gsq-project/gsq/internal/yamlconf"
	"github.com/gsq-project/gsq/palworld"
	"github.com/gsq-project/gsq/rcon"
	"github.com/gsq-project/gsq/rcon/mctext"
	"github.com/gsq-project/gsq/result"
	"github.com/gsq-project/gsq/sdtd"
	"github.com/gsq-project/gsq/webrcon"
)

func init() { register(newRconCmd) }

// Default RCON ports.
const (
	sourceRconPort    = rcon.DefaultSourcePort
	minecraftRconPort = rcon.DefaultMinecraftPort
)

// rconOptions are the flags of `gsq rcon`.
type rconOptions struct {
	password        string
	passwordFile    string
	script          string
	json            bool
	wait            time.Duration
	continueOnError bool
	dialect         string
	profile         string
	timeout         time.Duration
	noColor         bool
	config          string
	host            string
	debug           bool
	keepAlive       time.Duration
	looseIDs        bool
	encoding        string
	printConfig     bool
	protocol        string
	follow          bool
}

func newRconCmd(env *Env) *cobra.Command {
	o := &rconOptions{}
	cmd := &cobra.Command{
		Use:   "rcon [HOST[:PORT]|NAME|SCHEME://[:PASSWORD@]HOST[:PORT]] [COMMAND...]",
		Short: "Run commands on a server's console: Source, Minecraft, WebRCON, BattlEye, Palworld, telnet",
		Long: `Run commands on a game server's remote console: Source RCON or
Minecraft RCON by default, or, with --protocol, a URL scheme or a
configured server's protocol key:

  --protocol  scheme       games                       default port
  source      rcon://      Source engine, Rust legacy  ` + fmt.Sprint(sourceRconPort) + `/tcp
  minecraft   rcon://      Minecraft, Palworld RCON    ` + fmt.Sprint(minecraftRconPort) + `/tcp
  webrcon     webrcon://   Rust (+rcon.web 1)          ` + fmt.Sprint(webrcon.DefaultPort) + `/tcp
  battleye    battleye://  DayZ, Arma 2/3, Reforger    ` + fmt.Sprint(battleye.DefaultPort) + `/udp
  palworld    palworld://  Palworld (REST API)         ` + fmt.Sprint(palworld.DefaultPort) + `/tcp
  telnet      telnet://    7 Days to Die               ` + fmt.Sprint(sdtd.DefaultPort) + `/tcp

A Source RCON login that finds another console (a 7 Days to Die telnet
port, Palworld's REST API, an HTTP or WebSocket port such as Rust's
WebRCON) says which --protocol to use. Palworld's REST API maps the
console commands onto its endpoints:

  ` + strings.Join(palworld.Commands, "\n  ") + `

--follow prints what the server says unasked (chat, joins and leaves,
kills, reports, log lines) as it comes, one line each ("[chat/global]
Name: text"), or one JSON object each with --json, until Ctrl-C; the
commands given run first. Over Palworld's REST API, which pushes
nothing, joins and leaves come from the player list, asked every 5s.

Each COMMAND argument runs as one command. -f FILE runs a script: one
command per line, blank lines and lines starting with # or ; skipped. With no
command and a piped stdin, stdin is read as a script. With no command and
a terminal, gsq opens an interactive shell with line editing, Ctrl-R
history search, Tab completion of command names and history kept in
$XDG_STATE_HOME/gsq/rcon_history; :q or Ctrl-D leaves it. A lost
connection is dialled again in the background, at once if it had served
a command, else after a pause of 1 s doubling up to 30 s; the next command
waits for it, and gsq says so between commands.

The server is the first argument, or --host (then every argument is a
command). With $RCON_HOST or $MCRCON_HOST set (the port from $RCON_PORT or
$MCRCON_PORT when the host has none) every argument is a command, as with
rcon-cli and mcrcon, unless the first is an rcon:// URL or the NAME of a
configured server.

No profile is needed: gsq finds out how the server ends its answers,
which ids it puts on them, whether it takes a probe with the command, and
whether it is legacy Rust, from what the server does (--debug says what
it found). A --profile only spares the first commands of a connection
those tests.

Waits: --timeout (5s) bounds connecting and logging in together, and each
command, whatever it waits for (the server, a reconnection). A port that
accepts the connection and never answers fails after --timeout, exit 3;
so does a server that answers a wrong password with silence (ARK). A
server that logs in and never answers a command fails after another
--timeout, exit 3. The worst case is --timeout for the login plus
--timeout per command run (only the first, unless --continue-on-error).

The port defaults to ` + fmt.Sprint(sourceRconPort) + ` (source, cs2) or ` + fmt.Sprint(minecraftRconPort) + ` (minecraft). Without
--dialect, port 25575 means minecraft and any other port source. Write
IPv6 addresses as [addr]:port.

The password comes from --password, --password-file, the named server's
config entry, an rcon:// URL, $GSQ_RCON_PASSWORD, $RCON_PASSWORD,
$MCRCON_PASS or the file named by $RCON_PASSWORD_FILE, in that order, or
else from a prompt when stdin is a terminal. --password and URLs are
visible to other users in ps; prefer a file or the environment.
--debug dumps every packet on stderr, with the password masked.

NAME selects a server of the config file ($XDG_CONFIG_HOME/gsq/config.yaml,
by default ~/.config/gsq/config.yaml); flags override its settings:

  servers:
    survival:
      address: mc.example.com:25575
      password_env: SURVIVAL_RCON_PASSWORD   # or password, password_file
      dialect: minecraft
      timeout: 5s
    cs:
      address: 10.0.0.5
      password_file: /run/secrets/cs_rcon
      profile: ""                            # a game profile, see below

Game profiles (--profile), all optional:` + profileList() + `

Minecraft § colour codes are rendered when stdout is a terminal and
stripped otherwise (--no-color or $NO_COLOR strip them always).

Exit codes: 0 ok, 1 failure, 2 usage error, 3 timeout or unreachable,
4 wrong password.`,
		Example: `  gsq rcon 127.0.0.1 status
  RCON_PASSWORD=secret gsq rcon mc.example.com:25575 list "say hello"
  gsq rcon --json -f nightly.txt survival
  echo status | gsq rcon --password-file /run/secrets/rcon 10.0.0.5
  gsq rcon webrcon://:secret@rust.example.com serverinfo
  gsq rcon --protocol battleye -p secret 10.0.0.7:2306 players
  gsq rcon --follow --json telnet://:secret@127.0.0.1:8081`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && o.host == "" && envHost(env) == "" {
				return usageError("rcon needs a HOST[:PORT], the NAME of a configured server, --host or $RCON_HOST")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRcon(cmd.Context(), env, cmd, o, args)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.password, "password", "p", "", "RCON password (visible in ps; prefer --password-file or $RCON_PASSWORD)")
	f.StringVar(&o.passwordFile, "password-file", "", "read the password from this file")
	f.StringVarP(&o.script, "file", "f", "", "run the commands of this script file (- for stdin)")
	f.BoolVar(&o.json, "json", false, `print one JSON object per command: {"command","output","error"}`)
	durationFlag(cmd, &o.wait, "wait", 0, "pause between commands")
	f.BoolVar(&o.continueOnError, "continue-on-error", false, "run the remaining commands after one fails")
	f.StringVar(&o.dialect, "dialect", "", "RCON dialect: "+strings.Join(rconDialects, ", ")+" (default from the port)")
	f.StringVar(&o.profile, "profile", "", "game profile, optional: "+strings.Join(rcon.ProfileNames(), ", "))
	durationFlag(cmd, &o.timeout, "timeout", rcon.DefaultTimeout, "time allowed to connect and log in, and for each command (the worst case of each wait)")
	f.BoolVar(&o.noColor, "no-color", false, "strip Minecraft colour codes instead of rendering them")
	f.StringVar(&o.config, "config", "", "config file with named servers (default $XDG_CONFIG_HOME/gsq/config.yaml)")
	f.StringVarP(&o.host, "host", "H", "", "the server (HOST[:PORT], NAME or URL); every argument is then a command")
	f.BoolVar(&o.debug, "debug", false, "dump every packet sent and received on stderr (the password masked), and say what gsq found out about the server")
	durationFlag(cmd, &o.keepAlive, "keepalive", 0, "probe the connection when idle this long (shell sessions behind NAT or idle timeouts)")
	f.BoolVar(&o.looseIDs, "loose-ids", false, "accept replies with id 0, -1 or 42 for servers that do not echo ids (commands become serial)")
	f.StringVar(&o.encoding, "encoding", "auto", "how to read output: auto (UTF-8, else Latin-1 for the bytes that are not), utf8 (bad bytes as U+FFFD) or latin1")
	f.BoolVar(&o.printConfig, "print-config", false, "print the settings the server would be reached with (never the password) and exit")
	f.StringVar(&o.protocol, "protocol", "", "console protocol: "+strings.Join(consoleProtocols, ", ")+" (default source, or minecraft on port 25575)")
	f.BoolVar(&o.follow, "follow", false, "after the commands, print what the server says unasked (chat, joins, log lines) until Ctrl-C")
	registerRconCompletions(env, cmd, o)
	return cmd
}

// rconDialects are the --dialect values.
var rconDialects = []string{rcon.DialectSource.String(), rcon.DialectCS2.String(), rcon.DialectMinecraft.String()}

// envHost is the server named by the environment, for mcrcon-style use:
// $RCON_HOST or $MCRCON_HOST, with $RCON_PORT or $MCRCON_PORT when the
// host has no port.
func envHost(env *Env) string {
	host := cmp.Or(env.Getenv("RCON_HOST"), env.Getenv("MCRCON_HOST"))
	if host == "" {
		return ""
	}
	if port := cmp.Or(env.Getenv("RCON_PORT"), env.Getenv("MCRCON_PORT")); port != "" {
		if _, _, err := net.SplitHostPort(host); err != nil {
			host = net.JoinHostPort(strings.Trim(host, "[]"), port)
		}
	}
	return host
}

// profileList describes the game profiles for the long help.
func profileList() string {
	var lines []string
	for _, p := range rcon.Profiles() {
		lines = append(lines, "\n  "+p.Name+": "+p.Summary)
	}
	return strings.Join(lines, "")
}

// rconTarget is the server a run talks to, with everything needed to
// dial it and log in again.
type rconTarget struct {
	addr     string // host:port to dial, IPv6 in brackets
	password string
	opts     rcon.Options
	servers  string                // the config file's server names, for hints
	decode   func(b []byte) string // --encoding
	protocol string                // "" (Source or Minecraft RCON by the port), or one of consoleProtocols
	follow   bool                  // --follow
	restPort uint16                // where a refused RCON port's host may serve Palworld's REST API; 0: its default
}

// decoders are the --encoding choices.
var decoders = map[string]func([]byte) string{
	"auto":   rcon.DecodeText,
	"utf8":   func(b []byte) string { return strings.ToValidUTF8(string(b), "\uFFFD") },
	"latin1": decodeLatin1,
}

// decodeLatin1 reads every byte as the code point of the same value.
func decodeLatin1(b []byte) string {
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return string(r)
}

func runRcon(ctx context.Context, env *Env, cmd *cobra.Command, o *rconOptions, args []string) error {
	if o.timeout <= 0 {
		return usageError("--timeout must be positive")
	}
	if o.wait < 0 {
		return usageError("--wait must not be negative")
	}
	server, commands := pickServer(env, o, args)
	if o.keepAlive < 0 {
		return usageError("--keepalive must not be negative")
	}
	decode, ok := decoders[o.encoding]
	if !ok {
		return usageError("--encoding must be auto, utf8 or latin1")
	}
	for _, c := range commands {
		if strings.TrimSpace(c) == "" {
			return usageError("empty command")
		}
	}
	stdinTTY := env.IsTerminal(env.Stdin)
	script, closeScript, err := openScript(env, o.script)
	if err != nil {
		return err
	}
	defer closeScript()
	shell := len(commands) == 0 && script == nil && stdinTTY && !o.follow
	if len(commands) == 0 && script == nil && !o.follow {
		if stdinTTY {
			if o.json {
				return usageError("--json needs commands: give them as arguments, with -f or on stdin")
			}
		} else {
			script = env.Stdin
		}
	}
	t, err := resolveRconTarget(ctx, env, cmd, o, server, stdinTTY && !o.printConfig)
	if err != nil {
		return err
	}
	t.decode = decode
	t.follow = o.follow
	t.opts.KeepAlive, t.opts.LooseIDs = o.keepAlive, o.looseIDs
	if o.debug {
		t.opts.Debug = rconDumper(env.Stderr, t.addr)
		if !isRconProtocol(t.protocol) {
			t.opts.Debug = consoleDumper(env.Stderr, t.addr)
		}
		t.opts.Logf = func(format string, args ...any) {
			fmt.Fprintf(env.Stderr, "gsq: debug: "+format+"\n", args...)
		}
	}
	if o.printConfig {
		printRconConfig(env.Stdout, t)
		return nil
	}
	out := newRconPrinter(env, o)
	// A lost connection is dialled again in the background; say so,
	// between commands (a note printed during the shell's prompt would
	// garble it).
	t.opts.OnReconnect = func(attempt int, err error) {
		if err != nil {
			out.note("gsq: reconnecting to %s (attempt %d) failed: %v", t.addr, attempt, err)
			return
		}
		out.note("gsq: the connection to %s was lost; reconnected", t.addr)
	}
	client, err := t.dial(ctx)
	if err != nil {
		err = t.detectProtocol(ctx, err)
		code := out.fail(t, "", err, true)
		if !shell {
			out.skipped(commandSource(commands, script), scriptIsFile(script), "not run: the login failed")
		}
		return silentExit(code)
	}
	defer client.Close()
	if shell {
		return runRconShell(ctx, env, t, client, out)
	}
	queue := commandSource(commands, script)
	code := ExitOK
	for i := 0; ; i++ {
		line, ok, err := queue.next()
		if err != nil {
			out.errorf("%v", err)
			return silentExit(worseExit(code, ExitFailure))
		}
		if !ok {
			if o.follow && code == ExitOK {
				return followEvents(ctx, env, t, client, out)
			}
			return silentExit(code)
		}
		if i > 0 && o.wait > 0 {
			if err := pause(ctx, o.wait); err != nil {
				out.errorf("%v", err)
				return silentExit(worseExit(code, ExitFailure))
			}
		}
		out.flushNotes()
		r, err := t.exec(ctx, client, line)
		out.flushNotes()
		out.result(line, r, t.decode, err)
		if err != nil {
			code = worseExit(code, out.fail(t, line, err, false))
			if !o.continueOnError || ctx.Err() != nil {
				out.skipped(queue, scriptIsFile(script), "not run: an earlier command failed (--continue-on-error runs the rest)")
				return silentExit(code)
			}
		}
	}
}

// pickServer splits the arguments into the server and the commands: the
// server is --host, else the first argument; but with the server named
// by the environment, every argument is a command unless the first is an
// rcon:// URL or the name of a configured server.
func pickServer(env *Env, o *rconOptions, args []string) (string, []string) {
	switch {
	case o.host != "":
		return o.host, args
	case len(args) == 0:
		return envHost(env), nil
	case envHost(env) != "" && !isConsoleURL(args[0]) && !configuredServer(env, o, args[0]):
		return envHost(env), args
	}
	return args[0], args[1:]
}

// configuredServer reports whether name is a server of the config file.
// A config that cannot be read names no server here; resolveRconTarget
// reports its errors.
func configuredServer(env *Env, o *rconOptions, name string) bool {
	path := o.config
	if path == "" {
		path = rconConfigPath(env)
	}
	cfg, err := loadRconConfig(path, o.config != "")
	if err != nil {
		return false
	}
	_, ok := cfg.servers[name]
	return ok
}

// scriptIsFile reports whether the script can be read to its end without
// waiting on another process: a regular file (or none).
func scriptIsFile(script io.Reader) bool {
	f, ok := script.(*os.File)
	if !ok {
		return script == nil
	}
	info, err := f.Stat()
	return err == nil && info.Mode().IsRegular()
}

// resolveRconTarget works out the address, dialect, profile, timeout and
// password from the flags, the config file and the environment.
func resolveRconTarget(ctx context.Context, env *Env, cmd *cobra.Command, o *rconOptions, arg string, stdinTTY bool) (*rconTarget, error) {
	path := o.config
	if path == "" {
		path = rconConfigPath(env)
	}
	cfg, err := loadRconConfig(path, o.config != "")
	if err != nil {
		return nil, err
	}
	flags := cmd.Flags()
	address, dialect, profile, timeout := arg, o.dialect, o.profile, o.timeout
	var urlPassword *string
	var urlProto, configProto string
	if isConsoleURL(arg) {
		u, err := parseConsoleURL(arg)
		if err != nil {
			return nil, usageError("%v", err)
		}
		address, urlProto, urlPassword = u.address, u.proto, u.password
	}
	srv, named := cfg.servers[arg]
	if named {
		if err := srv.validate(arg); err != nil {
			return nil, usageError("config %s: %v", cfg.path, err)
		}
		address = srv.Address
		if !flags.Changed("dialect") {
			dialect = srv.Dialect
		}
		if !flags.Changed("profile") {
			profile = srv.Profile
		}
		if !flags.Changed("timeout") && srv.Timeout > 0 {
			timeout = srv.Timeout
		}
		configProto = srv.Protocol
		if srv.Password != "" && !cfg.private {
			fmt.Fprintf(env.Stderr, "gsq: hint: %s holds a password and others can read it; run: chmod 600 %s\n", cfg.path, cfg.path)
		}
	}
	if !named && urlPassword == nil && bareName(arg) {
		if near := yamlconf.Closest(arg, cfg.nameList()); near != "" {
			return nil, usageError("no server named %q in %s (did you mean %q?); for a host of that name, give its port: %s",
				arg, cfg.path, near, net.JoinHostPort(arg, strconv.Itoa(sourceRconPort)))
		}
	}
	t := &rconTarget{opts: rcon.Options{DialTimeout: timeout, Timeout: timeout}, servers: cfg.names()}
	if flags.Changed("protocol") {
		if _, err := parseProtocol(o.protocol); err != nil {
			return nil, usageError("--protocol: %v", err)
		}
	}
	if t.protocol, dialect, err = pickProtocol(o.protocol, urlProto, configProto, flags.Changed("protocol"), dialect, profile); err != nil {
		return nil, usageError("%v", err)
	}
	if !isRconProtocol(t.protocol) {
		if t.addr, err = consoleAddress(address, t.protocol); err != nil {
			return nil, usageError("%v", err)
		}
	} else {
		if _, err := rcon.LookupProfile(profile); err != nil {
			return nil, usageError("%v", err)
		}
		t.opts.Profile = profile
		if t.addr, t.opts.Dialect, err = rconAddress(address, dialect); err != nil {
			return nil, usageError("%v", err)
		}
	}

	src := passwordSource{file: o.passwordFile, configPath: cfg.path}
	if flags.Changed("password") {
		src.flag = &o.password
	}
	if named {
		src.server = &srv
	}
	src.url = urlPassword
	if stdinTTY {
		src.prompt = func() (string, error) { return promptPassword(ctx, env, t.addr) }
	}
	if t.password, err = findPassword(env, src); err != nil && !o.printConfig {
		if !named && bareName(arg) && len(cfg.servers) > 0 && errors.Is(err, errNoPassword) {
			return nil, usageError("no server named %q in %s (configured: %s), and %v", arg, cfg.path, cfg.names(), err)
		}
		return nil, err
	}
	return t, nil
}

// bareName reports whether arg, which names no configured server, could
// be a mistyped name: a single label, with no port, that is not an IP
// address or localhost.
func bareName(arg string) bool {
	if arg == "" || strings.ContainsAny(arg, ".:[]/@") || strings.EqualFold(arg, "localhost") {
		return false
	}
	_, err := netip.ParseAddr(arg)
	return err != nil
}

// rconAddress picks the dialect and the address to dial. Without a
// dialect, port 25575 means Minecraft and any other port Source; a
// missing port is the dialect's standard one.
func rconAddress(address, dialect string) (string, rcon.Dialect, error) {
	hp, err := parseHostPort(address, sourceRconPort)
	if err != nil {
		return "", 0, err
	}
	host, port := hp.host, hp.port
	if dialect == "" && port == minecraftRconPort {
		dialect = rcon.DialectMinecraft.String()
	}
	d, err := rcon.ParseDialect(dialect)
	if err != nil {
		return "", 0, err
	}
	if _, _, err := net.SplitHostPort(address); err != nil && d == rcon.DialectMinecraft {
		port = minecraftRconPort
	}
	return net.JoinHostPort(host, strconv.Itoa(int(port))), d, nil
}

// openScript opens the -f script; "-" is stdin. The returned reader is
// nil without -f.
func openScript(env *Env, path string) (io.Reader, func(), error) {
	switch path {
	case "":
		return nil, func() {}, nil
	case "-":
		return env.Stdin, func() {}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, usageError("script: %v", err)
	}
	return f, func() { f.Close() }, nil
}

// maxScriptLine bounds one line of a script; no dialect accepts commands
// this long, so longer lines are an error rather than a huge allocation.
const maxScriptLine = 64 << 10

// commandQueue hands out the commands to run one at a time: first the
// arguments, then the lines of a script. Script lines are read as they
// are needed, so a pipe can feed commands over time.
type commandQueue struct {
	args   []string
	sc     *bufio.Scanner // nil without a script
	lineNo int
}

// commandSource returns the queue of args and then script (which may be
// nil).
func commandSource(args []string, script io.Reader) *commandQueue {
	q := &commandQueue{args: args}
	if script != nil {
		q.sc = bufio.NewScanner(script)
		q.sc.Buffer(make([]byte, 0, 4096), maxScriptLine)
	}
	return q
}

// next returns the next command; ok is false at the end.
func (q *commandQueue) next() (line string, ok bool, err error) {
	if len(q.args) > 0 {
		c := q.args[0]
		q.args = q.args[1:]
		return c, true, nil
	}
	for q.sc != nil && q.sc.Scan() {
		q.lineNo++
		line := strings.TrimSpace(q.sc.Text())
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";") {
			continue
		}
		return line, true, nil
	}
	if q.sc != nil && q.sc.Err() != nil {
		return "", false, fmt.Errorf("script line %d: %v", q.lineNo+1, q.sc.Err())
	}
	return "", false, nil
}

// pause waits for d or until ctx is done.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// rconPrinter writes command output (text or JSON lines) and diagnostics.
// No message it prints holds the password: errors never carry it.
type rconPrinter struct {
	env      *Env
	json     bool // --json
	colour   bool // render § codes as ANSI (else strip them)
	terminal bool // stdout is a terminal: neutralise control characters
	utf8     bool // --encoding reads valid UTF-8 as it is (not latin1)

	notedSingleByte bool // the note on legacy Rust's single bytes was given

	mu    sync.Mutex
	notes []string // what the client said on its own goroutine, to print between commands
}

// maxNotes bounds the notes held between commands: a server down for a
// day while the shell waits at its prompt makes one attempt a minute at
// most, and only the last ones matter.
const maxNotes = 16

// note holds a line for stderr until flushNotes.
func (p *rconPrinter) note(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.notes) == maxNotes {
		p.notes = p.notes[1:]
	}
	p.notes = append(p.notes, fmt.Sprintf(format, args...))
}

// flushNotes prints the notes held.
func (p *rconPrinter) flushNotes() {
	p.mu.Lock()
	notes := p.notes
	p.notes = nil
	p.mu.Unlock()
	for _, n := range notes {
		fmt.Fprintln(p.env.Stderr, n)
	}
}

func newRconPrinter(env *Env, o *rconOptions) *rconPrinter {
	p := &rconPrinter{env: env, json: o.json, utf8: o.encoding != "latin1"}
	if o.json {
		return p
	}
	p.terminal = env.IsTerminal(env.Stdout)
	p.colour = p.terminal && !o.noColor && env.Getenv("NO_COLOR") == "" && env.Getenv("TERM") != "dumb"
	return p
}

// outputChunk is how much of an output is decoded and written at a time,
// so that a long answer is not copied whole again for its text, its
// rendering and its JSON.
const outputChunk = 64 << 10

// chunks calls f with the pieces of b, at most 2*outputChunk bytes each,
// so that decoding and rendering never copy a long output whole: a piece
// ends after a line feed when one comes within the next outputChunk bytes,
// else where it cuts no UTF-8 sequence, CR LF nor § code (see cut).
func chunks(b []byte, f func([]byte)) {
	for len(b) > 2*outputChunk {
		n := cut(b)
		f(b[:n])
		b = b[n:]
	}
	f(b)
}

// cut returns where chunks ends the next piece of b (len(b) >
// 2*outputChunk): after the first line feed past outputChunk bytes, or,
// for an output with no line feed there, near outputChunk, moved back
// before a UTF-8 sequence cut in two, a CR (its LF follows) and a § (its
// code follows), whether the § is UTF-8 or a Latin-1 byte.
func cut(b []byte) int {
	if i := bytes.IndexByte(b[outputChunk:2*outputChunk], '\n'); i >= 0 {
		return outputChunk + i + 1
	}
	n := outputChunk
	for k := range utf8.UTFMax { // a valid sequence is at most this long
		if utf8.RuneStart(b[outputChunk-k]) {
			n = outputChunk - k
			break
		}
	}
	for n > outputChunk/2 {
		switch r, size := utf8.DecodeLastRune(b[:n]); {
		case r == '\r', r == '§':
			n -= size
		case r == utf8.RuneError && size == 1 && b[n-1] == 0xA7:
			n-- // § read as Latin-1
		default:
			return n
		}
	}
	return n
}

// result prints what one command returned (also the partial output of a
// failed one). JSON output keeps the text exactly as the server sent it.
func (p *rconPrinter) result(cmd string, r *rcon.Response, decode func([]byte) string, err error) {
	if r.SingleByte && !p.notedSingleByte {
		p.notedSingleByte = true
		fmt.Fprintln(p.env.Stderr, "gsq: note: the server is legacy Rust, which sent this answer as single bytes (characters above U+00FF are lost); gsq has asked it for UTF-8 for the next answers, and --profile rust-legacy asks before the first")
	}
	body := r.Body
	if p.json {
		// Room for a piece of output and its usual escapes, so b seldom grows.
		b := append(make([]byte, 0, 3*outputChunk), `{"command":`...)
		b = jsonenc.AppendString(b, cmd, false)
		b = append(b, `,"output":"`...)
		chunks(body, func(c []byte) {
			n := len(b)
			if p.utf8 && utf8.Valid(c) { // decoding would copy it unchanged
				b = jsonenc.AppendBytes(b, c, false)
			} else {
				b = jsonenc.AppendString(b, decode(c), false)
			}
			b = append(b[:n], b[n+1:len(b)-1]...) // without its quotes
			if len(b) >= outputChunk {
				p.env.Stdout.Write(b)
				b = b[:0]
			}
		})
		b = append(b, `","error":`...)
		if err != nil {
			b = appendObject(b, p.errorJSON(err))
		} else {
			b = append(b, "null"...)
		}
		p.env.Stdout.Write(append(b, "}\n"...))
		return
	}
	tail := -1    // the last byte written
	if p.colour { // colours carry across lines: render the text whole
		if text := p.render(decode(body)); text != "" {
			tail = int(text[len(text)-1])
			p.text(text)
		}
	} else {
		chunks(body, func(c []byte) {
			if len(c) > 0 && p.verbatim(c) { // spares a copy of a long output
				tail = int(c[len(c)-1])
				p.env.Stdout.Write(c)
			} else if text := p.render(decode(c)); text != "" {
				tail = int(text[len(text)-1])
				p.text(text)
			}
		})
	}
	if tail >= 0 && tail != '\n' {
		p.text("\n")
	}
}

// verbatim reports whether b prints as it is: valid UTF-8 read as UTF-8,
// with no § code and, on a terminal, no control character.
func (p *rconPrinter) verbatim(b []byte) bool {
	return p.utf8 && utf8.Valid(b) && !bytes.Contains(b, []byte("§")) &&
		!(p.terminal && bytes.ContainsFunc(b, isControl))
}

// appendObject appends o's JSON to b.
func appendObject(b []byte, o object) []byte {
	data, _ := o.MarshalJSON()
	return append(b, data...)
}

// event prints what the server said unasked (shell only): "[chat/all]
// Name: text" for a chat line, "[kind] text" for the others; heartbeats
// are not shown, and events lost because the shell fell behind are
// counted.
func (p *rconPrinter) event(e console.Event) {
	if e.Missed > 0 {
		fmt.Fprintf(p.env.Stderr, "gsq: note: %d events from the server were lost while the shell was busy\n", e.Missed)
	}
	if e.Kind == console.KindHeartbeat {
		return
	}
	line := "[" + string(e.Kind) + "] " + e.Text
	if e.Kind == console.KindChat {
		line = "[chat/" + e.Channel + "] " + e.Player + ": " + e.Text
	}
	p.text(strings.TrimSuffix(p.render(line), "\n") + "\n")
}

func (p *rconPrinter) text(s string) { io.WriteString(p.env.Stdout, s) }

// skipped writes, with --json, an object for each command an earlier
// failure (a command's, or the login's) kept from running, with the error
// kind "skipped" and the message why: the remaining arguments, and the
// rest of a script file (a pipe is not read on, since its writer may be
// waiting).
func (p *rconPrinter) skipped(q *commandQueue, toEnd bool, why string) {
	if !p.json {
		return
	}
	for toEnd || len(q.args) > 0 {
		line, ok, err := q.next()
		if err != nil || !ok {
			return
		}
		var o object
		o.set("command", line)
		o.set("output", nil)
		var e object
		e.set("kind", "skipped")
		e.set("message", why)
		o.set("error", e)
		p.env.Stdout.Write(append(appendObject(nil, o), '\n'))
	}
}

// render prepares server text for a human: control characters are made
// visible on a terminal (a server must not drive the terminal), then the
// Minecraft § codes are rendered or stripped.
func (p *rconPrinter) render(text string) string {
	if p.terminal {
		text = visibleControls(text)
	}
	if p.colour {
		return mctext.ToANSI(text)
	}
	return mctext.Strip(text)
}

// visibleControls replaces control characters other than tab and line
// feed with caret notation (ESC becomes ^[), and CR LF with LF.
func visibleControls(s string) string {
	clean := true
	for _, r := range s {
		if isControl(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	var sb strings.Builder
	for _, r := range s {
		switch {
		case !isControl(r):
			sb.WriteRune(r)
		case r < 0x20:
			sb.WriteByte('^')
			sb.WriteByte(byte(r) + '@')
		case r == 0x7f:
			sb.WriteString("^?")
		default:
			sb.WriteRune('\uFFFD')
		}
	}
	return sb.String()
}

func isControl(r rune) bool {
	return (r < 0x20 && r != '\t' && r != '\n') || (r >= 0x7f && r < 0xa0)
}

// errorJSON is the {"kind","message"} object of a failed command.
func (p *rconPrinter) errorJSON(err error) object {
	var o object
	o.set("kind", rconErrorKind(err))
	o.set("message", err.Error())
	return o
}

// errorf prints a diagnostic on stderr.
func (p *rconPrinter) errorf(format string, args ...any) {
	fmt.Fprintf(p.env.Stderr, "gsq: error: %s\n", fmt.Sprintf(format, args...))
}

// fail reports err (of the login when login is set, else of command cmd)
// on stderr, with a hint, and as a JSON object for a failed login; it
// returns the exit code.
func (p *rconPrinter) fail(t *rconTarget, cmd string, err error, login bool) int {
	kind := rconErrorKind(err)
	if login {
		p.errorf("%v", err)
		if p.json {
			var o object
			o.set("command", nil)
			o.set("output", nil)
			o.set("error", p.errorJSON(err))
			p.env.Stdout.Write(append(appendObject(nil, o), '\n'))
		}
	} else {
		p.errorf("%q: %v", cmd, err)
	}
	if hint := rconHint(t, err, login); hint != "" {
		fmt.Fprintf(p.env.Stderr, "gsq: hint: %s\n", hint)
	}
	return exitCodeFor(kind)
}

// rconErrorKind classifies an RCON error for JSON and the exit code. A
// server that closes the connection during the login refuses the
// password (Squad does so): the library reports ErrAuthFailed for it.
func rconErrorKind(err error) result.Kind {
	switch {
	case isWrongProtocol(err):
		return kindProtocol
	case errors.Is(err, console.ErrAuthFailed):
		return kindAuth
	case errors.Is(err, console.ErrTimeout), errors.Is(err, rcon.ErrNoAuthResponse):
		return kindTimeout
	case errors.Is(err, rcon.ErrConnClosed), errors.Is(err, rcon.ErrProtocol),
		errors.Is(err, rcon.ErrInvalidCommand), errors.Is(err, rcon.ErrCommandTooLong),
		errors.Is(err, rcon.ErrResponseTooLarge):
		return kindProtocol
	}
	return errorKind(err)
}

// rconHint suggests what to check after err.
func rconHint(t *rconTarget, err error, login bool) string {
	if hint := consoleHint(t, err); hint != "" || !isRconProtocol(t.protocol) {
		return hint
	}
	switch {
	case errors.Is(err, rcon.ErrAuthFailed) && errors.Is(err, rcon.ErrConnClosed):
		return "the server closed the connection during the login, as Squad does for a wrong password; a banned address or the wrong --dialect do it too"
	case errors.Is(err, rcon.ErrAuthFailed):
		return "the server refused the password; servers lock an address out after repeated failures"
	case errors.Is(err, rcon.ErrNoAuthResponse):
		return fmt.Sprintf("the server never answered the login within %v: this server answers a wrong password with silence (as ARK does), or the port is not an RCON port (A2S queries use UDP)", t.opts.Timeout)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Sprintf("nothing listens on %s/tcp: is RCON enabled, and is this its port (%d for Source, %d for Minecraft)?", t.addr, sourceRconPort, minecraftRconPort)
	case login && errors.As(err, new(*net.DNSError)) && t.servers != "":
		return "no such host, and no configured server of that name (configured: " + t.servers + ")"
	case errors.Is(err, rcon.ErrTimeout):
		return fmt.Sprintf("no complete answer within %v: the command may take longer (raise --timeout); --debug shows what arrived", t.opts.Timeout)
	}
	return ""
}
