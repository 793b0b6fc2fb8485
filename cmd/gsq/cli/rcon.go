package cli

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/gsq-project/gsq/rcon"
	"github.com/gsq-project/gsq/rcon/mctext"
	"github.com/gsq-project/gsq/result"
)

func init() { register(newRconCmd) }

// Default RCON ports.
const (
	sourceRconPort    = 27015
	minecraftRconPort = 25575
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
}

func newRconCmd(env *Env) *cobra.Command {
	o := &rconOptions{}
	cmd := &cobra.Command{
		Use:   "rcon [HOST[:PORT]|NAME|rcon://[:PASSWORD@]HOST[:PORT]] [COMMAND...]",
		Short: "Run commands on a server over Source or Minecraft RCON",
		Long: `Run commands on a game server over Source RCON or Minecraft RCON.

Each COMMAND argument runs as one command. -f FILE runs a script: one
command per line, blank lines and lines starting with # or ; skipped. With no
command and a piped stdin, stdin is read as a script. With no command and
a terminal, gsq opens an interactive shell with line editing, Ctrl-R
history search, Tab completion of command names and history kept in
$XDG_STATE_HOME/gsq/rcon_history; :q or Ctrl-D leaves it. A dropped
connection is re-established.

The server is the first argument, or --host (then every argument is a
command), or with no argument at all $RCON_HOST or $MCRCON_HOST, with the
port from $RCON_PORT or $MCRCON_PORT when the host has none.

The port defaults to 27015 (source, cs2) or 25575 (minecraft). Without
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

Game profiles (--profile):` + profileList() + `

Minecraft § colour codes are rendered when stdout is a terminal and
stripped otherwise (--no-color or $NO_COLOR strip them always).

Exit codes: 0 ok, 1 failure, 2 usage error, 3 timeout or unreachable,
4 wrong password.`,
		Example: `  gsq rcon 127.0.0.1 status
  RCON_PASSWORD=secret gsq rcon mc.example.com:25575 list "say hello"
  gsq rcon --json -f nightly.txt survival
  echo status | gsq rcon --password-file /run/secrets/rcon 10.0.0.5`,
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
	f.DurationVar(&o.wait, "wait", 0, "pause between commands")
	f.BoolVar(&o.continueOnError, "continue-on-error", false, "run the remaining commands after one fails")
	f.StringVar(&o.dialect, "dialect", "", "RCON dialect: source, cs2 or minecraft (default from the port)")
	f.StringVar(&o.profile, "profile", "", "game profile: "+profileNames())
	f.DurationVar(&o.timeout, "timeout", rcon.DefaultTimeout, "time allowed to connect, to log in and for each command")
	f.BoolVar(&o.noColor, "no-color", false, "strip Minecraft colour codes instead of rendering them")
	f.StringVar(&o.config, "config", "", "config file with named servers (default $XDG_CONFIG_HOME/gsq/config.yaml)")
	f.StringVarP(&o.host, "host", "H", "", "the server (HOST[:PORT], NAME or URL); every argument is then a command")
	f.BoolVar(&o.debug, "debug", false, "dump every packet sent and received on stderr (the password masked)")
	f.DurationVar(&o.keepAlive, "keepalive", 0, "probe the connection when idle this long (shell sessions behind NAT or idle timeouts)")
	f.BoolVar(&o.looseIDs, "loose-ids", false, "accept replies with id 0, -1 or 42 for servers that do not echo ids (commands become serial)")
	f.StringVar(&o.encoding, "encoding", "auto", "how to read output: auto (UTF-8, else Latin-1 for the bytes that are not), utf8 (bad bytes as U+FFFD) or latin1")
	f.BoolVar(&o.printConfig, "print-config", false, "print the settings the server would be reached with (never the password) and exit")
	return cmd
}

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

// profileNames lists the game profiles for the flag's help.
func profileNames() string {
	var names []string
	for _, p := range rcon.Profiles() {
		names = append(names, p.Name)
	}
	return strings.Join(names, ", ")
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
	server, commands := "", args
	switch {
	case o.host != "":
		server = o.host
	case len(args) == 0:
		server = envHost(env)
	default:
		server, commands = args[0], args[1:]
	}
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
	shell := len(commands) == 0 && script == nil && stdinTTY
	if len(commands) == 0 && script == nil {
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
	t.opts.KeepAlive, t.opts.LooseIDs = o.keepAlive, o.looseIDs
	if o.debug {
		t.opts.Debug = rconDumper(env.Stderr, t.addr)
	}
	if o.printConfig {
		printRconConfig(env.Stdout, t)
		return nil
	}
	// With --continue-on-error, a command after a dropped connection
	// dials again (with backoff); the shell reconnects on its own terms.
	t.opts.Reconnect = o.continueOnError && !shell
	out := newRconPrinter(env, o, t.password)
	client, err := t.dial(ctx)
	if err != nil {
		return silentExit(out.fail(t, "", err, true))
	}
	defer client.Close()
	if shell {
		return runRconShell(ctx, env, t, client, out)
	}
	next := commandSource(commands, script)
	code := ExitOK
	for i := 0; ; i++ {
		line, ok, err := next()
		if err != nil {
			out.errorf("%v", err)
			return silentExit(worseExit(code, ExitFailure))
		}
		if !ok {
			return silentExit(code)
		}
		if i > 0 && o.wait > 0 {
			if err := pause(ctx, o.wait); err != nil {
				out.errorf("%v", err)
				return silentExit(worseExit(code, ExitFailure))
			}
		}
		text, err := t.exec(ctx, client, line)
		out.result(line, text, err)
		if err != nil {
			code = worseExit(code, out.fail(t, line, err, false))
			if !o.continueOnError || ctx.Err() != nil {
				return silentExit(code)
			}
		}
	}
}

// dial connects and logs in within the timeout. The timeout applies even
// when ctx has a deadline of its own.
func (t *rconTarget) dial(ctx context.Context) (*rcon.Client, error) {
	ctx, cancel := context.WithTimeout(ctx, t.opts.Timeout)
	defer cancel()
	return rcon.Dial(ctx, t.addr, t.password, &t.opts)
}

// exec runs one command within the timeout.
func (t *rconTarget) exec(ctx context.Context, c *rcon.Client, cmd string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, t.opts.Timeout)
	defer cancel()
	b, err := c.ExecBytes(ctx, cmd)
	return t.decode(b), err
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
	if strings.HasPrefix(arg, "rcon://") {
		u, err := url.Parse(arg)
		if err != nil || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
			return nil, usageError("bad URL: want rcon://[:PASSWORD@]HOST[:PORT]")
		}
		address = u.Host
		if pw, ok := u.User.Password(); ok {
			urlPassword = &pw
		}
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
		if srv.Password != "" && !cfg.private {
			fmt.Fprintf(env.Stderr, "gsq: hint: %s holds a password and others can read it; run: chmod 600 %s\n", cfg.path, cfg.path)
		}
	}
	t := &rconTarget{opts: rcon.Options{DialTimeout: timeout, Timeout: timeout}, servers: cfg.names()}
	if _, err := rcon.LookupProfile(profile); err != nil {
		return nil, usageError("%v", err)
	}
	t.opts.Profile = profile
	if t.addr, t.opts.Dialect, err = rconAddress(address, dialect); err != nil {
		return nil, usageError("%v", err)
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
		return nil, err
	}
	return t, nil
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
		dialect = "minecraft"
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

// commandSource returns the commands to run one at a time: first the
// arguments, then the lines of script (which may be nil). Script lines are
// read as they are needed, so a pipe can feed commands over time.
func commandSource(args []string, script io.Reader) func() (string, bool, error) {
	var sc *bufio.Scanner
	if script != nil {
		sc = bufio.NewScanner(script)
		sc.Buffer(make([]byte, 0, 4096), maxScriptLine)
	}
	lineNo := 0
	return func() (string, bool, error) {
		if len(args) > 0 {
			c := args[0]
			args = args[1:]
			return c, true, nil
		}
		for sc != nil && sc.Scan() {
			lineNo++
			line := strings.TrimSpace(sc.Text())
			if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";") {
				continue
			}
			return line, true, nil
		}
		if sc != nil && sc.Err() != nil {
			return "", false, fmt.Errorf("script line %d: %v", lineNo+1, sc.Err())
		}
		return "", false, nil
	}
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
type rconPrinter struct {
	env      *Env
	enc      *json.Encoder // --json
	colour   bool          // render § codes as ANSI (else strip them)
	terminal bool          // stdout is a terminal: neutralise control characters
	password string        // never printed
}

func newRconPrinter(env *Env, o *rconOptions, password string) *rconPrinter {
	p := &rconPrinter{env: env, password: password}
	if o.json {
		p.enc = json.NewEncoder(env.Stdout)
		p.enc.SetEscapeHTML(false)
		return p
	}
	p.terminal = env.IsTerminal(env.Stdout)
	p.colour = p.terminal && !o.noColor && env.Getenv("NO_COLOR") == "" && env.Getenv("TERM") != "dumb"
	return p
}

// result prints what one command returned (also the partial output of a
// failed one). JSON output keeps the text exactly as the server sent it.
func (p *rconPrinter) result(cmd, text string, err error) {
	if p.enc != nil {
		var o object
		o.set("command", cmd)
		o.set("output", text)
		if err != nil {
			o.set("error", p.errorJSON(err))
		} else {
			o.set("error", nil)
		}
		p.enc.Encode(o)
		return
	}
	if text = p.render(text); text != "" {
		if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		io.WriteString(p.env.Stdout, text)
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
	o.set("kind", rconErrorKind(err, false, ""))
	o.set("message", p.redact(err.Error()))
	return o
}

// errorf prints a diagnostic on stderr.
func (p *rconPrinter) errorf(format string, args ...any) {
	fmt.Fprintf(p.env.Stderr, "gsq: error: %s\n", p.redact(fmt.Sprintf(format, args...)))
}

// redact hides the password should it ever end up in a message.
func (p *rconPrinter) redact(s string) string {
	if p.password == "" {
		return s
	}
	return strings.ReplaceAll(s, p.password, "********")
}

// fail reports err (of the login when login is set, else of command cmd)
// on stderr, with a hint, and as a JSON object for a failed login; it
// returns the exit code.
func (p *rconPrinter) fail(t *rconTarget, cmd string, err error, login bool) int {
	kind := rconErrorKind(err, login, t.opts.Profile)
	if login {
		p.errorf("%s: %v", t.addr, err)
		if p.enc != nil {
			var o object
			o.set("command", nil)
			o.set("output", nil)
			o.set("error", p.errorJSON(err))
			p.enc.Encode(o)
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
// Squad server answers a wrong password by closing the connection.
func rconErrorKind(err error, login bool, profile string) result.Kind {
	switch {
	case errors.Is(err, rcon.ErrAuthFailed):
		return kindAuth
	case login && profile == "squad" && errors.Is(err, rcon.ErrConnClosed):
		return kindAuth
	case errors.Is(err, rcon.ErrTimeout), errors.Is(err, rcon.ErrNoAuthResponse):
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
	switch {
	case errors.Is(err, rcon.ErrAuthFailed):
		return "the server refused the password; servers lock an address out after repeated failures"
	case errors.Is(err, rcon.ErrNoAuthResponse):
		return "the server never answered the login: a wrong password on ARK, or not an RCON port (A2S queries use UDP)"
	case login && errors.Is(err, rcon.ErrConnClosed):
		return "the server closed the connection during the login: a wrong password on Squad, a banned address, or the wrong --dialect"
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Sprintf("nothing listens on %s/tcp: is RCON enabled, and is this its port (27015 for Source, 25575 for Minecraft)?", t.addr)
	case login && errors.As(err, new(*net.DNSError)) && t.servers != "":
		return "no such host, and no configured server of that name (configured: " + t.servers + ")"
	case errors.Is(err, rcon.ErrTimeout):
		return fmt.Sprintf("no complete answer within %v: raise --timeout, or pick the game's --profile (%s)", t.opts.Timeout, profileNames())
	}
	return ""
}
