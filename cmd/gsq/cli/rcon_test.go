package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/rcon"
	"github.com/gsq-project/gsq/rcon/rcontest"
)

// testPassword must never appear in anything gsq prints.
const testPassword = "hunter2-Zx9q"

// testHandler is rcontest's SimHandler plus commands for the CLI's
// rendering: "colors" answers Minecraft § codes, "ctrl" answers terminal
// control sequences.
var testHandler = rcon.HandlerFunc(func(ctx context.Context, w rcon.ResponseWriter, cmd string) {
	switch cmd {
	case "colors":
		io.WriteString(w, "§aGreen§r plain §lbold\n")
	case "ctrl":
		io.WriteString(w, "before\x1b[2Jafter\r\nbell\a\n")
	case "latin1":
		io.WriteString(w, "caf\xe9 ok\n")
	default:
		(&rcontest.SimHandler{}).ServeRCON(ctx, w, cmd)
	}
})

// startRCON starts a fake server imitating profile, with testPassword.
func startRCON(t *testing.T, profile rcontest.Profile, faults rcontest.Faults) string {
	t.Helper()
	s := rcontest.NewUnstartedServer(profile, testPassword, testHandler)
	s.Faults = faults
	s.Start()
	t.Cleanup(s.Close)
	return s.Addr().String()
}

type gsqRun struct {
	code           int
	stdout, stderr string
}

// gsqCase describes one run of gsq with buffers for stdin/stdout/stderr.
type gsqCase struct {
	vars  map[string]string // environment; HOME defaults to a temp dir
	stdin string
	tty   bool // stdout is a terminal
	// stdinTTY makes stdin look like a terminal; a run that would
	// prompt for the password must not use it (it would open /dev/tty).
	stdinTTY bool
}

// run runs gsq and checks that the password never shows.
func (c gsqCase) run(t *testing.T, args ...string) gsqRun {
	t.Helper()
	vars := map[string]string{"HOME": t.TempDir()}
	for k, v := range c.vars {
		vars[k] = v
	}
	var stdout, stderr bytes.Buffer
	stdin := strings.NewReader(c.stdin)
	env := &Env{
		Stdin:      stdin,
		Stdout:     &stdout,
		Stderr:     &stderr,
		Getenv:     func(k string) string { return vars[k] },
		IsTerminal: func(s any) bool { return c.tty && s == any(&stdout) || c.stdinTTY && s == any(stdin) },
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r := gsqRun{code: env.Run(ctx, args)}
	r.stdout, r.stderr = stdout.String(), stderr.String()
	if strings.Contains(r.stdout+r.stderr, testPassword) {
		t.Errorf("gsq %q printed the password:\nstdout: %s\nstderr: %s", args, r.stdout, r.stderr)
	}
	return r
}

// withPassword is a gsqCase whose environment holds the password.
var withPassword = gsqCase{vars: map[string]string{"RCON_PASSWORD": testPassword}}

func (r gsqRun) want(t *testing.T, code int, stdout string) {
	t.Helper()
	if r.code != code || r.stdout != stdout {
		t.Errorf("exit %d, stdout %q; want exit %d, stdout %q\nstderr: %s", r.code, r.stdout, code, stdout, r.stderr)
	}
}

func TestRconCommands(t *testing.T) {
	t.Parallel()
	for _, p := range []rcontest.Profile{rcontest.SRCDS, rcontest.CS2, rcontest.Minecraft} {
		t.Run(p.String(), func(t *testing.T) {
			t.Parallel()
			addr := startRCON(t, p, rcontest.Faults{})
			dialect := map[rcontest.Profile]string{rcontest.SRCDS: "source", rcontest.CS2: "cs2", rcontest.Minecraft: "minecraft"}[p]
			r := withPassword.run(t, "rcon", "--dialect", dialect, addr, "echo hello world", "say hi", "bogus")
			r.want(t, ExitOK, "hello world\nConsole: hi\nUnknown command \"bogus\"\n")
		})
	}
}

func TestRconLongOutput(t *testing.T) {
	t.Parallel()
	// 100000 bytes span many SRCDS packets; they come back whole. Cut into
	// segments of 3 and 1000 bytes they take a while under the race
	// detector on a loaded machine: the test is of wholeness, not speed.
	addr := startRCON(t, rcontest.SRCDS, rcontest.Faults{Segments: []int{3, 1000}, SegmentDelay: time.Microsecond})
	r := withPassword.run(t, "rcon", "--timeout", "1m", addr, "big 100000")
	r.want(t, ExitOK, rcontest.BigOutput(100000))
}

func TestRconScriptFile(t *testing.T) {
	t.Parallel()
	addr := startRCON(t, rcontest.SRCDS, rcontest.Faults{})
	script := filepath.Join(t.TempDir(), "nightly.txt")
	writeFileMode(t, script, "# nightly\n\necho one\r\n   # indented comment\n  say two  \necho three", 0o600)
	r := withPassword.run(t, "rcon", "-f", script, addr, "echo zero")
	r.want(t, ExitOK, "zero\none\nConsole: two\nthree\n")

	t.Run("stdin", func(t *testing.T) {
		t.Parallel()
		c := withPassword
		c.stdin = "echo from stdin\n"
		c.run(t, "rcon", "-f", "-", addr).want(t, ExitOK, "from stdin\n")
	})
	t.Run("missing", func(t *testing.T) {
		t.Parallel()
		r := withPassword.run(t, "rcon", "-f", filepath.Join(t.TempDir(), "nope"), addr)
		r.want(t, ExitUsage, "")
	})
	t.Run("line too long", func(t *testing.T) {
		t.Parallel()
		long := filepath.Join(t.TempDir(), "long.txt")
		writeFileMode(t, long, "echo ok\necho "+strings.Repeat("x", maxScriptLine)+"\necho never\n", 0o600)
		r := withPassword.run(t, "rcon", "-f", long, addr)
		r.want(t, ExitFailure, "ok\n")
		if !strings.Contains(r.stderr, "script line 2") {
			t.Errorf("stderr %q does not name line 2", r.stderr)
		}
	})
}

func TestRconPipedStdin(t *testing.T) {
	t.Parallel()
	addr := startRCON(t, rcontest.SRCDS, rcontest.Faults{})
	c := withPassword
	c.stdin = "echo a\n# comment\n\nsay b\n"
	c.run(t, "rcon", addr).want(t, ExitOK, "a\nConsole: b\n")

	c.stdin = ""
	c.run(t, "rcon", addr).want(t, ExitOK, "") // logs in, runs nothing
}

func TestRconJSON(t *testing.T) {
	t.Parallel()
	addr := startRCON(t, rcontest.Minecraft, rcontest.Faults{})
	r := withPassword.run(t, "rcon", "--json", "--dialect", "minecraft", addr, "echo one", "colors")
	if r.code != ExitOK {
		t.Fatalf("exit %d, stderr %s", r.code, r.stderr)
	}
	type result struct {
		Command string          `json:"command"`
		Output  string          `json:"output"`
		Error   json.RawMessage `json:"error"`
	}
	var got []result
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.DisallowUnknownFields()
	for dec.More() {
		var res result
		if err := dec.Decode(&res); err != nil {
			t.Fatalf("bad JSON %q: %v", r.stdout, err)
		}
		got = append(got, res)
	}
	want := []result{
		{"echo one", "one\n", json.RawMessage("null")},
		{"colors", "§aGreen§r plain §lbold\n", json.RawMessage("null")}, // raw: codes kept
	}
	if len(got) != len(want) {
		t.Fatalf("got %d objects, want %d: %s", len(got), len(want), r.stdout)
	}
	for i := range want {
		if got[i].Command != want[i].Command || got[i].Output != want[i].Output || string(got[i].Error) != string(want[i].Error) {
			t.Errorf("object %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if !strings.HasPrefix(r.stdout, `{"command":"echo one","output":"one\n","error":null}`) {
		t.Errorf("field order or encoding changed: %s", r.stdout)
	}

	t.Run("login failure", func(t *testing.T) {
		t.Parallel()
		c := gsqCase{vars: map[string]string{"RCON_PASSWORD": "wrong-" + testPassword}}
		r := c.run(t, "rcon", "--json", "--dialect", "minecraft", addr, "echo one")
		if r.code != ExitAuth {
			t.Fatalf("exit %d, want %d; stderr %s", r.code, ExitAuth, r.stderr)
		}
		var res struct {
			Command *string
			Output  *string
			Error   struct{ Kind, Message string }
		}
		// The login's object first (the command's "skipped" object follows,
		// see TestRconJSONSkippedAfterLogin).
		if err := json.NewDecoder(strings.NewReader(r.stdout)).Decode(&res); err != nil {
			t.Fatalf("bad JSON %q: %v", r.stdout, err)
		}
		if res.Command != nil || res.Output != nil || res.Error.Kind != "auth" || res.Error.Message == "" {
			t.Errorf("got %s", r.stdout)
		}
	})
}

// Every imitated server, with no --profile: the exact output of every
// command, in order, exit 0.
func TestRconEveryProfileWithoutProfile(t *testing.T) {
	t.Parallel()
	for _, p := range rcontest.Profiles() {
		for _, dialect := range []string{"", "minecraft"} {
			if dialect != "" && p != rcontest.Minecraft && p != rcontest.GoMC {
				continue
			}
			t.Run(p.String()+"/"+dialect, func(t *testing.T) {
				t.Parallel()
				addr := startRCON(t, p, rcontest.Faults{})
				args := []string{"rcon", addr}
				if dialect != "" {
					args = append(args, "--dialect", dialect)
				}
				empty := ""
				if p == rcontest.ARK {
					empty = "Server received, But no response!! \n \n"
				}
				// Legacy Rust sends single-byte text until the client, which
				// recognises it by its first console line, asks for UTF-8:
				// the first answer is ASCII here.
				r := withPassword.run(t, append(args, "echo first", "big 20000", "echo c", "echo grüße 😀", "big 0", "say hi", "big 8192")...)
				want := "first\n" + rcontest.BigOutput(20000) + "c\ngrüße 😀\n" + empty + "Console: hi\n" + rcontest.BigOutput(8192)
				if r.code != ExitOK || r.stdout != want {
					t.Fatalf("exit %d, %d bytes of stdout (want %d); stderr %s", r.code, len(r.stdout), len(want), r.stderr)
				}
				// Legacy Rust's first answer came as single bytes: a note
				// says so, once, and names the profile that avoids it.
				note := "gsq: note: the server is legacy Rust"
				if n := strings.Count(r.stderr, note); n != map[bool]int{true: 1}[p == rcontest.RustLegacy] || n == 1 && !strings.Contains(r.stderr, "--profile rust-legacy") {
					t.Errorf("%d notes on single bytes in stderr %q", n, r.stderr)
				}
			})
		}
	}
}

func TestRconWrongPassword(t *testing.T) {
	t.Parallel()
	wrong := gsqCase{vars: map[string]string{"RCON_PASSWORD": testPassword + "-wrong"}}
	for _, tc := range []struct {
		profile rcontest.Profile
		flags   []string
		code    int
		hint    string
	}{
		{rcontest.SRCDS, nil, ExitAuth, "refused the password"},
		{rcontest.Minecraft, []string{"--dialect", "minecraft"}, ExitAuth, "refused the password"},
		{rcontest.Squad, nil, ExitAuth, "closed the connection during the login, as Squad does"},
		{rcontest.GoMC, []string{"--dialect", "minecraft"}, ExitAuth, "refused the password"},
		{rcontest.ARK, []string{"--timeout", "300ms"}, ExitTimeout, "answers a wrong password with silence"},
	} {
		t.Run(tc.profile.String(), func(t *testing.T) {
			t.Parallel()
			addr := startRCON(t, tc.profile, rcontest.Faults{})
			r := wrong.run(t, append(append([]string{"rcon"}, tc.flags...), addr, "echo never")...)
			r.want(t, tc.code, "")
			if !strings.Contains(r.stderr, "gsq: error: ") || !strings.Contains(r.stderr, "gsq: hint: ") || !strings.Contains(r.stderr, tc.hint) {
				t.Errorf("stderr %q lacks an error and the hint %q", r.stderr, tc.hint)
			}
		})
	}
}

func TestRconUnreachable(t *testing.T) {
	t.Parallel()
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		r := withPassword.run(t, "rcon", addr, "status")
		r.want(t, ExitTimeout, "")
		if !strings.Contains(r.stderr, "nothing listens") {
			t.Errorf("stderr %q lacks the hint", r.stderr)
		}
	})
	t.Run("silent", func(t *testing.T) {
		t.Parallel()
		// Accepts, reads, never answers.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				go func() { io.Copy(io.Discard, c); c.Close() }()
			}
		}()
		r := withPassword.run(t, "rcon", "--timeout", "200ms", l.Addr().String(), "status")
		r.want(t, ExitTimeout, "")
		if !strings.Contains(r.stderr, "no answer to the login within 200ms") {
			t.Errorf("stderr %q does not state the bound", r.stderr)
		}
	})
	t.Run("command timeout", func(t *testing.T) {
		t.Parallel()
		// Factorio answers one packet per command; every 2nd command is
		// swallowed, so it times out.
		addr := startRCON(t, rcontest.Factorio, rcontest.Faults{DropEvery: 2})
		args := []string{"rcon", "--profile", "factorio", "--timeout", "300ms", addr, "echo a", "echo b", "echo c"}
		r := withPassword.run(t, args...)
		r.want(t, ExitTimeout, "a\n")
		if !strings.Contains(r.stderr, `"echo b"`) || !strings.Contains(r.stderr, "no complete answer within 300ms") {
			t.Errorf("stderr %q does not name the command and the bound", r.stderr)
		}
		r = withPassword.run(t, append([]string{"rcon", "--continue-on-error"}, args[1:]...)...)
		r.want(t, ExitTimeout, "a\nc\n")
	})
}

func TestRconContinueAfterDrop(t *testing.T) {
	t.Parallel()
	// The server closes each connection after 79 bytes: the login (28)
	// and one answer with its probe replies (16 + 14 + 21).
	addr := startRCON(t, rcontest.SRCDS, rcontest.Faults{DropAfterBytes: 79})
	cmds := []string{"echo a", "echo b", "echo c", "echo d", "echo e"}
	// gsq dials again before a command when it has seen the connection
	// close; a command it sends before seeing the close fails (it may have
	// run) and ends the run, with the answers before it whole.
	r := withPassword.run(t, append([]string{"rcon", addr}, cmds...)...)
	if !strings.HasPrefix("a\nb\nc\nd\ne\n", r.stdout) || r.stdout == "" ||
		(r.code == ExitOK) != (r.stdout == "a\nb\nc\nd\ne\n") || (r.code != ExitOK && r.code != ExitFailure) {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}

	// With --continue-on-error the one after a failure goes out on a
	// fresh connection and must work.
	r = withPassword.run(t, append([]string{"rcon", "--continue-on-error", addr}, cmds...)...)
	failed := 0
	prevFailed := false
	out := r.stdout
	for _, c := range cmds {
		want := strings.TrimPrefix(c, "echo ") + "\n"
		if rest, ok := strings.CutPrefix(out, want); ok {
			out, prevFailed = rest, false
			continue
		}
		if prevFailed || c == "echo a" || !strings.Contains(r.stderr, strconv.Quote(c)) {
			t.Fatalf("%q neither ran nor failed alone: exit %d, stdout %q, stderr %q", c, r.code, r.stdout, r.stderr)
		}
		failed++
		prevFailed = true
	}
	if out != "" || (failed == 0) != (r.code == ExitOK) || (failed > 0 && r.code != ExitFailure) {
		t.Errorf("exit %d with %d failures, stdout %q", r.code, failed, r.stdout)
	}
}

func TestRconUsage(t *testing.T) {
	t.Parallel()
	addr := startRCON(t, rcontest.SRCDS, rcontest.Faults{})
	for _, args := range [][]string{
		{"rcon"},
		{"rcon", "--bogus", addr, "status"},
		{"rcon", "--dialect", "quake", addr, "status"},
		{"rcon", "--profile", "doom", addr, "status"},
		{"rcon", "--timeout", "0s", addr, "status"},
		{"rcon", "--wait", "-1s", addr, "status"},
		{"rcon", "--timeout", "soon", addr, "status"},
		{"rcon", "127.0.0.1:99999", "status"},
		{"rcon", "::1:27015", "status"},
		{"rcon", addr, ""},
		{"rcon", "--config", filepath.Join(t.TempDir(), "missing.yaml"), addr, "status"},
	} {
		r := withPassword.run(t, args...)
		if r.code != ExitUsage || r.stdout != "" || !strings.HasPrefix(r.stderr, "gsq: error: ") {
			t.Errorf("gsq %q: exit %d, stdout %q, stderr %q; want exit 2 and an error", args, r.code, r.stdout, r.stderr)
		}
	}
	t.Run("--json without commands on a terminal", func(t *testing.T) {
		t.Parallel()
		c := withPassword
		c.stdinTTY = true
		c.run(t, "rcon", "--json", addr).want(t, ExitUsage, "")
	})
	t.Run("no password", func(t *testing.T) {
		t.Parallel()
		r := gsqCase{}.run(t, "rcon", addr, "status")
		r.want(t, ExitUsage, "")
		if !strings.Contains(r.stderr, "RCON_PASSWORD") {
			t.Errorf("stderr %q does not say where a password may come from", r.stderr)
		}
	})
}

func TestRconPasswordSources(t *testing.T) {
	t.Parallel()
	addr := startRCON(t, rcontest.SRCDS, rcontest.Faults{})
	dir := t.TempDir()
	pwFile := filepath.Join(dir, "secret")
	writeFileMode(t, pwFile, testPassword+"\n", 0o600)
	emptyFile := filepath.Join(dir, "empty")
	writeFileMode(t, emptyFile, "\n", 0o600)
	wrong := testPassword + "-wrong"
	for _, tc := range []struct {
		name  string
		vars  map[string]string
		flags []string
		code  int
	}{
		{"GSQ_RCON_PASSWORD", map[string]string{"GSQ_RCON_PASSWORD": testPassword}, nil, ExitOK},
		{"RCON_PASSWORD", map[string]string{"RCON_PASSWORD": testPassword}, nil, ExitOK},
		{"MCRCON_PASS", map[string]string{"MCRCON_PASS": testPassword}, nil, ExitOK},
		{"GSQ first", map[string]string{"GSQ_RCON_PASSWORD": testPassword, "RCON_PASSWORD": wrong}, nil, ExitOK},
		{"GSQ first, wrong", map[string]string{"GSQ_RCON_PASSWORD": wrong, "RCON_PASSWORD": testPassword}, nil, ExitAuth},
		{"flag", map[string]string{"RCON_PASSWORD": wrong}, []string{"--password", testPassword}, ExitOK},
		{"flag beats file", nil, []string{"--password", wrong, "--password-file", pwFile}, ExitAuth},
		{"file", map[string]string{"RCON_PASSWORD": wrong}, []string{"--password-file", pwFile}, ExitOK},
		{"empty file", nil, []string{"--password-file", emptyFile}, ExitUsage},
		{"missing file", nil, []string{"--password-file", filepath.Join(dir, "nope")}, ExitUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := gsqCase{vars: tc.vars}.run(t, append(append([]string{"rcon"}, tc.flags...), addr, "echo ok")...)
			want := ""
			if tc.code == ExitOK {
				want = "ok\n"
			}
			r.want(t, tc.code, want)
		})
	}
}

func TestRconConfig(t *testing.T) {
	t.Parallel()
	src := startRCON(t, rcontest.SRCDS, rcontest.Faults{})
	mc := startRCON(t, rcontest.Minecraft, rcontest.Faults{})
	cfgHome := t.TempDir()
	dir := filepath.Join(cfgHome, "gsq")
	writeFileMode(t, filepath.Join(dir, "secret"), testPassword, 0o600)
	writeFileMode(t, filepath.Join(dir, "config.yaml"), `
servers:
  src:
    address: `+src+`
    password_file: secret          # relative to the config file
  mc:
    address: `+mc+`
    password_env: MC_PASS
    dialect: minecraft
    timeout: 5s
  inline:
    address: `+src+`
    password: `+testPassword+`
`, 0o600)
	c := gsqCase{vars: map[string]string{"XDG_CONFIG_HOME": cfgHome, "MC_PASS": testPassword, "RCON_PASSWORD": "wrong"}}
	c.run(t, "rcon", "src", "echo src").want(t, ExitOK, "src\n")
	c.run(t, "rcon", "mc", "echo mc").want(t, ExitOK, "mc\n")
	c.run(t, "rcon", "inline", "echo inline").want(t, ExitOK, "inline\n")
	// Flags override the entry.
	if r := c.run(t, "rcon", "--dialect", "source", "--print-config", "mc"); !strings.Contains(r.stdout, "dialect:   source") {
		t.Errorf("--dialect did not override the config: %+v", r)
	}
	c.run(t, "rcon", "--password", "wrong", "src", "echo x").want(t, ExitAuth, "")

	t.Run("unset password_env", func(t *testing.T) {
		t.Parallel()
		c := gsqCase{vars: map[string]string{"XDG_CONFIG_HOME": cfgHome}}
		r := c.run(t, "rcon", "mc", "echo mc")
		r.want(t, ExitUsage, "")
		if !strings.Contains(r.stderr, "MC_PASS") {
			t.Errorf("stderr %q does not name the variable", r.stderr)
		}
	})
	t.Run("home default and --config", func(t *testing.T) {
		t.Parallel()
		home := t.TempDir()
		cfg := filepath.Join(home, ".config", "gsq", "config.yaml")
		writeFileMode(t, cfg, "servers:\n  h:\n    address: "+src+"\n", 0o600)
		c := gsqCase{vars: map[string]string{"HOME": home, "RCON_PASSWORD": testPassword}}
		c.run(t, "rcon", "h", "echo home").want(t, ExitOK, "home\n")
		other := filepath.Join(t.TempDir(), "other.yaml")
		writeFileMode(t, other, "servers:\n  o:\n    address: "+src+"\n", 0o600)
		c.run(t, "rcon", "--config", other, "o", "echo other").want(t, ExitOK, "other\n")
	})
	t.Run("readable by others", func(t *testing.T) {
		t.Parallel()
		cfg := filepath.Join(t.TempDir(), "open.yaml")
		writeFileMode(t, cfg, "servers:\n  o:\n    address: "+src+"\n    password: "+testPassword+"\n", 0o644)
		r := gsqCase{}.run(t, "rcon", "--config", cfg, "o", "echo o")
		r.want(t, ExitOK, "o\n")
		if !strings.Contains(r.stderr, "chmod 600") {
			t.Errorf("no permission hint in %q", r.stderr)
		}
	})
	for name, tc := range map[string]struct{ body, stderr string }{
		"unknown key":      {"servers:\n  x:\n    adress: " + src + "\n", `bad.yaml:3:5: servers.x: unknown key "adress" (did you mean "address"?)`},
		"top-level typo":   {"server:\n  x:\n    address: " + src + "\n", `bad.yaml:1:1: unknown key "server" (did you mean "servers"?)`},
		"no address":       {"servers:\n  x:\n    dialect: cs2\n", "has no address"},
		"two passwords":    {"servers:\n  x:\n    address: " + src + "\n    password: a\n    password_env: B\n", "only one of"},
		"bad dialect":      {"servers:\n  x:\n    address: " + src + "\n    dialect: quake\n", "unknown dialect"},
		"bad timeout":      {"servers:\n  x:\n    address: " + src + "\n    timeout: soon\n", `bad.yaml:4:14: servers.x.timeout: "soon" is not a duration: use a number and a unit, as in 30s, 5m, 2h, 1h30m or 14d`},
		"negative timeout": {"servers:\n  x:\n    address: " + src + "\n    timeout: -1s\n", "bad.yaml:4:14: servers.x.timeout: must not be negative, not -1s"},
		"not yaml":         {"servers:\n  x:\n    address: a\n  y: [\n", "line 4"},
		"not a mapping":    {"servers: [a, b]\n", "bad.yaml:1:10: servers: must be a mapping of keys to values, not a list"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg := filepath.Join(t.TempDir(), "bad.yaml")
			writeFileMode(t, cfg, tc.body, 0o600)
			r := withPassword.run(t, "rcon", "--config", cfg, "x", "echo x")
			r.want(t, ExitUsage, "")
			if !strings.Contains(r.stderr, tc.stderr) || strings.Contains(r.stderr, "time.Duration") || strings.Contains(r.stderr, "yaml.Node") {
				t.Errorf("stderr %q, want it to say %q in the user's terms", r.stderr, tc.stderr)
			}
		})
	}
}

// TestRconMistypedServerName: a name close to a configured server's is
// taken for a typo of it, not for a host name; a bare name far from them
// all says so when no password comes for it either.
func TestRconMistypedServerName(t *testing.T) {
	t.Parallel()
	cfgHome := t.TempDir()
	writeFileMode(t, filepath.Join(cfgHome, "gsq", "config.yaml"),
		"servers:\n  cs:\n    address: 127.0.0.1:1\n  survival:\n    address: 127.0.0.1:2\n", 0o600)
	for _, tc := range []struct {
		name   string
		vars   map[string]string
		args   []string
		stderr string
	}{
		{"typo", nil, []string{"cz", "list"}, `no server named "cz" in ` + filepath.Join(cfgHome, "gsq", "config.yaml") + ` (did you mean "cs"?); for a host of that name, give its port: cz:27015`},
		{"typo with a password", map[string]string{"RCON_PASSWORD": testPassword}, []string{"survivl", "list"}, `(did you mean "survival"?)`},
		{"far from every name", nil, []string{"zzzz", "list"}, `no server named "zzzz" in ` + filepath.Join(cfgHome, "gsq", "config.yaml") + ` (configured: cs, survival), and no RCON password: `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			vars := map[string]string{"XDG_CONFIG_HOME": cfgHome}
			for k, v := range tc.vars {
				vars[k] = v
			}
			r := gsqCase{vars: vars}.run(t, append([]string{"rcon"}, tc.args...)...)
			r.want(t, ExitUsage, "")
			if !strings.Contains(r.stderr, tc.stderr) {
				t.Errorf("stderr %q, want %q", r.stderr, tc.stderr)
			}
		})
	}
	// A host of that name is reached with its port.
	r := gsqCase{vars: map[string]string{"XDG_CONFIG_HOME": cfgHome, "RCON_PASSWORD": testPassword}}.run(t, "rcon", "--print-config", "cz:27015")
	if r.code != ExitOK || !strings.Contains(r.stdout, "address:   cz:27015") {
		t.Errorf("cz:27015: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

func TestRconColours(t *testing.T) {
	t.Parallel()
	addr := startRCON(t, rcontest.Minecraft, rcontest.Faults{})
	tty := withPassword
	tty.tty = true
	r := tty.run(t, "rcon", "--dialect", "minecraft", addr, "colors")
	// §a is bright green (92), §r resets (0), §l is bold (1), and the
	// output ends with a reset.
	if r.code != ExitOK || strings.Contains(r.stdout, "§") || !strings.HasSuffix(r.stdout, "\x1b[0m\n") {
		t.Errorf("exit %d, stdout %q: want rendered codes", r.code, r.stdout)
	}
	for _, want := range []string{"92mGreen\x1b[0m plain ", "\x1b[1mbold"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout %q lacks %q", r.stdout, want)
		}
	}

	for name, c := range map[string]gsqCase{
		"pipe":     withPassword,
		"NO_COLOR": {vars: map[string]string{"RCON_PASSWORD": testPassword, "NO_COLOR": "1"}, tty: true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c.run(t, "rcon", "--dialect", "minecraft", addr, "colors").want(t, ExitOK, "Green plain bold\n")
		})
	}
	t.Run("--no-color", func(t *testing.T) {
		t.Parallel()
		tty.run(t, "rcon", "--no-color", "--dialect", "minecraft", addr, "colors").want(t, ExitOK, "Green plain bold\n")
	})
	t.Run("control characters", func(t *testing.T) {
		t.Parallel()
		// On a terminal a server cannot clear the screen or ring the bell.
		tty.run(t, "rcon", "--dialect", "minecraft", addr, "ctrl").want(t, ExitOK, "before^[[2Jafter\nbell^G\n")
		// Into a pipe the bytes go through untouched.
		withPassword.run(t, "rcon", "--dialect", "minecraft", addr, "ctrl").want(t, ExitOK, "before\x1b[2Jafter\r\nbell\a\n")
	})
}

func TestRconWait(t *testing.T) {
	t.Parallel()
	addr := startRCON(t, rcontest.SRCDS, rcontest.Faults{})
	withPassword.run(t, "rcon", "--wait", "20ms", addr, "echo 1", "echo 2").want(t, ExitOK, "1\n2\n")
}

func TestRconAddress(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, dialect string
		addr        string
		d           rcon.Dialect
	}{
		{"10.0.0.1", "", "10.0.0.1:27015", rcon.DialectSource},
		{"10.0.0.1", "cs2", "10.0.0.1:27015", rcon.DialectCS2},
		{"10.0.0.1", "minecraft", "10.0.0.1:25575", rcon.DialectMinecraft},
		{"10.0.0.1:25575", "", "10.0.0.1:25575", rcon.DialectMinecraft},
		{"10.0.0.1:25575", "source", "10.0.0.1:25575", rcon.DialectSource},
		{"mc.example.com:30000", "mc", "mc.example.com:30000", rcon.DialectMinecraft},
		{"::1", "", "[::1]:27015", rcon.DialectSource},
		{"[::1]", "minecraft", "[::1]:25575", rcon.DialectMinecraft},
		{"[2001:db8::1]:28016", "", "[2001:db8::1]:28016", rcon.DialectSource},
	} {
		addr, d, err := rconAddress(tc.in, tc.dialect)
		if err != nil || addr != tc.addr || d != tc.d {
			t.Errorf("rconAddress(%q, %q) = %q, %v, %v; want %q, %v", tc.in, tc.dialect, addr, d, err, tc.addr, tc.d)
		}
	}
}

func TestRconHelp(t *testing.T) {
	t.Parallel()
	r := gsqCase{}.run(t, "rcon", "--help")
	if r.code != ExitOK {
		t.Fatalf("exit %d", r.code)
	}
	for _, want := range []string{"--password-file", "--continue-on-error", "servers:", "password_env", "factorio"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

func TestVisibleControls(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain\ttab\n":      "plain\ttab\n",
		"a\r\nb\rc":         "a\nb^Mc",
		"\x1b]0;title\x07x": "^[]0;title^Gx",
		"del\x7f c1\u009b":  "del^? c1\uFFFD",
		"grüße € §a":        "grüße € §a",
	} {
		if got := visibleControls(in); got != want {
			t.Errorf("visibleControls(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCommandSource(t *testing.T) {
	t.Parallel()
	q := commandSource([]string{"first"}, strings.NewReader("# c\n  second  \n\n#x\nthird"))
	var got []string
	for {
		c, ok, err := q.next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		got = append(got, c)
	}
	if strings.Join(got, "|") != "first|second|third" {
		t.Errorf("got %q", got)
	}
}

// FuzzRconScript checks that a script never yields an empty command, a
// comment or surrounding blanks, whatever its bytes, and that terminal
// output made from any text holds no control characters but tab and LF.
func FuzzRconScript(f *testing.F) {
	f.Add("# c\n\necho a\r\n  say b  \n#x")
	f.Add("\x1b[2J\a\r\x00\x7f\u009b§a")
	f.Fuzz(func(t *testing.T, s string) {
		q := commandSource(nil, strings.NewReader(s))
		for range len(s) + 1 {
			c, ok, err := q.next()
			if err != nil || !ok {
				break
			}
			if c == "" || c != strings.TrimSpace(c) || strings.HasPrefix(c, "#") || strings.Contains(c, "\n") {
				t.Fatalf("script %q gave command %q", s, c)
			}
		}
		for _, r := range visibleControls(s) {
			if isControl(r) {
				t.Fatalf("visibleControls(%q) kept %U", s, r)
			}
		}
	})
}

func writeFileMode(t *testing.T, path, body string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // umask
		t.Fatal(err)
	}
}

// A password that is a letter or a digit of the messages leaves them
// intact: the password is kept out of messages where they are made, not
// masked in them afterwards (which turned "authentication failed" into
// "auth********ntication fail********d" for the password "e", and told
// the password).
func TestRconShortPasswordMessagesIntact(t *testing.T) {
	t.Parallel()
	addr := startRCON(t, rcontest.SRCDS, rcontest.Faults{})
	for _, pw := range []string{"e", "1", "x", "a", "0"} {
		for _, tc := range []struct {
			addr, want string
			code       int
		}{
			{addr, "rcon: login " + addr + ": authentication failed: the server answered the login with id -1 (wrong password)", ExitAuth},
			{"127.0.0.1:1", "rcon: dial 127.0.0.1:1: dial tcp 127.0.0.1:1: connect: connection refused", ExitTimeout},
		} {
			r := gsqCase{}.run(t, "rcon", "--password", pw, tc.addr, "echo never")
			if r.code != tc.code || !strings.Contains(r.stderr, tc.want) || strings.Contains(r.stderr, "*") {
				t.Errorf("--password %s: exit %d, stderr %q; want exit %d and %q", pw, r.code, r.stderr, tc.code, tc.want)
			}
		}
	}
}
