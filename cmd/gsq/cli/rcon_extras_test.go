package cli

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gsq-project/gsq/console"
	"github.com/gsq-project/gsq/rcon"
	"github.com/gsq-project/gsq/rcon/rcontest"
)

// --debug dumps the packets both ways, and the login's password only as
// asterisks (gsqCase.run fails the test if the password shows anywhere).
func TestRconDebug(t *testing.T) {
	t.Parallel()
	addr := startRCON(t, rcontest.SRCDS, rcontest.Faults{})
	r := withPassword.run(t, "rcon", "--debug", addr, "echo dumped")
	r.want(t, ExitOK, "dumped\n")
	for _, want := range []string{
		"send -> " + addr, "SERVERDATA_AUTH, body 12 bytes \"************\"",
		"recv <- " + addr, "SERVERDATA_AUTH_RESPONSE",
		"SERVERDATA_EXECCOMMAND, body 11 bytes \"echo dumped\"",
		"SERVERDATA_RESPONSE_VALUE, body 7 bytes \"dumped\\n\"",
		"00000000  ",
		"gsq: debug: rcon: " + addr + ": detected: the end-of-answer probe is mirrored (SRCDS)",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("debug output lacks %q:\n%s", want, r.stderr)
		}
	}
}

// The server can come from --host (every argument is then a command),
// from $RCON_HOST/$RCON_PORT or $MCRCON_HOST/$MCRCON_PORT when no
// argument is given, or from an rcon:// URL that may carry the password.
func TestRconServerSources(t *testing.T) {
	t.Parallel()
	addr := startRCON(t, rcontest.SRCDS, rcontest.Faults{})
	host, port, _ := strings.Cut(addr, ":")
	pwFile := filepath.Join(t.TempDir(), "pw")
	writeFileMode(t, pwFile, testPassword+"\n", 0o600)
	cfgHome := t.TempDir()
	writeFileMode(t, filepath.Join(cfgHome, "gsq", "config.yaml"), "servers:\n  named:\n    address: "+addr+"\n", 0o600)
	envHost := map[string]string{"RCON_HOST": "127.0.0.1", "RCON_PORT": "1", "RCON_PASSWORD": testPassword, "XDG_CONFIG_HOME": cfgHome}
	for _, tc := range []struct {
		name string
		c    gsqCase
		args []string
		code int
		out  string
	}{
		{"--host", withPassword, []string{"--host", addr, "echo a", "echo b"}, ExitOK, "a\nb\n"},
		{"-H", withPassword, []string{"-H", addr, "echo c"}, ExitOK, "c\n"},
		{"RCON_HOST+RCON_PORT", gsqCase{vars: map[string]string{"RCON_HOST": host, "RCON_PORT": port, "RCON_PASSWORD": testPassword}, stdin: "echo d\n"}, nil, ExitOK, "d\n"},
		{"MCRCON_HOST with port", gsqCase{vars: map[string]string{"MCRCON_HOST": addr, "MCRCON_PASS": testPassword}, stdin: "; comment\necho e\n"}, nil, ExitOK, "e\n"},
		{"RCON_PASSWORD_FILE", gsqCase{vars: map[string]string{"RCON_PASSWORD_FILE": pwFile}}, []string{addr, "echo f"}, ExitOK, "f\n"},
		{"URL without password", withPassword, []string{"rcon://" + addr, "echo g"}, ExitOK, "g\n"},
		{"URL with a wrong password", withPassword, []string{"rcon://:nope@" + addr, "echo h"}, ExitAuth, ""},
		{"bad URL", withPassword, []string{"rcon://" + addr + "/path", "echo i"}, ExitUsage, ""},
		{"no server at all", withPassword, nil, ExitUsage, ""},
		// With the server in the environment, the arguments are commands
		// (as with rcon-cli and mcrcon)...
		{"RCON_HOST with commands", gsqCase{vars: map[string]string{"RCON_HOST": host, "RCON_PORT": port, "RCON_PASSWORD": testPassword}}, []string{"echo m", "echo n"}, ExitOK, "m\nn\n"},
		// ...unless the first is an rcon:// URL or a configured server.
		{"RCON_HOST and a URL", gsqCase{vars: envHost}, []string{"rcon://" + addr, "echo o"}, ExitOK, "o\n"},
		{"RCON_HOST and a configured name", gsqCase{vars: envHost}, []string{"named", "echo p"}, ExitOK, "p\n"},
		{"negative keepalive", withPassword, []string{"--keepalive", "-1s", addr, "echo j"}, ExitUsage, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.c.run(t, append([]string{"rcon"}, tc.args...)...).want(t, tc.code, tc.out)
		})
	}
	// The URL's password is used (it is the right one here); it is
	// visible in ps, which the help says.
	r := gsqCase{}.run(t, "rcon", "rcon://:"+testPassword+"@"+addr, "echo k")
	if r.code != ExitOK || r.stdout != "k\n" {
		t.Errorf("URL with the password: exit %d, %q\n%s", r.code, r.stdout, r.stderr)
	}
}

// --keepalive and --loose-ids reach the client: a server answering every
// reply with id 0 works with --loose-ids.
func TestRconLooseIDsFlag(t *testing.T) {
	t.Parallel()
	addr := startRCON(t, rcontest.Palworld, rcontest.Faults{})
	withPassword.run(t, "rcon", "--loose-ids", "--keepalive", "1s", addr, "echo loose").want(t, ExitOK, "loose\n")
}

func TestShellCompleter(t *testing.T) {
	t.Parallel()
	history := []string{"status", "sv_cheats 1", "  spaced cmd", ":q", ""}
	complete := completer(sourceCommands, func() []string { return history })
	if got := complete("s"); !slices.Equal(got, []string{"say", "spaced", "stats", "status", "sv_cheats", "sv_password"}) {
		t.Errorf("complete(s) = %q", got)
	}
	if got := complete("status x"); got != nil {
		t.Errorf("later words completed: %q", got)
	}
	if got := complete(":"); got != nil {
		t.Errorf("shell commands offered from history: %q", got)
	}
	mc := completer(minecraftCommands, func() []string { return nil })
	if got := mc("whi"); !slices.Equal(got, []string{"whitelist"}) {
		t.Errorf("minecraft complete(whi) = %q", got)
	}
}

// --encoding chooses how output bytes become text.
func TestRconEncoding(t *testing.T) {
	t.Parallel()
	addr := startRCON(t, rcontest.SRCDS, rcontest.Faults{})
	for enc, want := range map[string]string{"auto": "café ok\n", "latin1": "café ok\n", "utf8": "caf\uFFFD ok\n"} {
		withPassword.run(t, "rcon", "--encoding", enc, addr, "latin1").want(t, ExitOK, want)
	}
	withPassword.run(t, "rcon", "--encoding", "ebcdic", addr, "latin1").want(t, ExitUsage, "")
}

// --print-config shows the resolved settings, never the password.
func TestRconPrintConfig(t *testing.T) {
	t.Parallel()
	r := withPassword.run(t, "rcon", "--print-config", "--dialect", "minecraft", "--keepalive", "30s", "mc.example.com")
	r.want(t, ExitOK, "address:   mc.example.com:25575\ndialect:   minecraft\nprofile:   (none)\ntimeout:   5s\npassword:  (set, not shown)\nkeepalive: 30s\n")
	gsqCase{}.run(t, "rcon", "--print-config", "127.0.0.1").want(t, ExitOK,
		"address:   127.0.0.1:27015\ndialect:   source\nprofile:   (none)\ntimeout:   5s\npassword:  (none)\n")
}

// Tab completion offers the values of rcon's enumerated flags and, as
// the first argument, the configured servers.
func TestRconCompletion(t *testing.T) {
	t.Parallel()
	cfgHome := t.TempDir()
	writeFileMode(t, filepath.Join(cfgHome, "gsq", "config.yaml"), "servers:\n  survival:\n    address: a\n  cs:\n    address: b\n", 0o600)
	c := gsqCase{vars: map[string]string{"XDG_CONFIG_HOME": cfgHome}}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--profile", ""}, rcon.ProfileNames()},
		{[]string{"--dialect", ""}, []string{"source", "cs2", "minecraft"}},
		{[]string{"--encoding", ""}, []string{"auto", "utf8", "latin1"}},
		{[]string{""}, []string{"cs", "survival"}},
		{[]string{"--host", ""}, []string{"cs", "survival"}},
		{[]string{"survival", ""}, nil}, // commands: nothing to offer
	} {
		r := c.run(t, append([]string{"__complete", "rcon"}, tc.args...)...)
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		got := lines[:len(lines)-1] // the last line is the directive
		if r.code != ExitOK || !slices.Equal(got, tc.want) && !(len(got) == 0 && tc.want == nil) {
			t.Errorf("complete %q = %q (exit %d), want %q", tc.args, got, r.code, tc.want)
		}
	}
}

// With --json, a command kept from running by an earlier failure still
// gets its object, so a script reading the output sees every command.
func TestRconJSONSkipped(t *testing.T) {
	t.Parallel()
	addr := startRCON(t, rcontest.CS2, rcontest.Faults{DropEvery: 2})
	script := filepath.Join(t.TempDir(), "script.txt")
	writeFileMode(t, script, "echo c\n# comment\necho d\n", 0o600)
	r := withPassword.run(t, "rcon", "--json", "--dialect", "cs2", "--timeout", "300ms", "-f", script, addr, "echo a", "echo b")
	if r.code != ExitTimeout {
		t.Fatalf("exit %d, stderr %s", r.code, r.stderr)
	}
	var kinds []string
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var o struct {
			Command string
			Output  *string
			Error   *struct{ Kind string }
		}
		if err := json.Unmarshal([]byte(line), &o); err != nil {
			t.Fatalf("bad JSON line %q: %v", line, err)
		}
		kind := "ok"
		if o.Error != nil {
			kind = o.Error.Kind
		}
		kinds = append(kinds, o.Command+":"+kind)
		if kind == "skipped" && o.Output != nil {
			t.Errorf("skipped %q has output %q", o.Command, *o.Output)
		}
	}
	want := []string{"echo a:ok", "echo b:timeout", "echo c:skipped", "echo d:skipped"}
	if !slices.Equal(kinds, want) {
		t.Errorf("objects %q, want %q", kinds, want)
	}
}

// A failed login writes its object, then one "skipped" object per
// command, as a failed command does.
func TestRconJSONSkippedAfterLogin(t *testing.T) {
	t.Parallel()
	addr := startRCON(t, rcontest.SRCDS, rcontest.Faults{})
	r := gsqCase{vars: map[string]string{"RCON_PASSWORD": "wrong"}}.run(t, "rcon", "--json", addr, "echo a", "echo b")
	if r.code != ExitAuth {
		t.Fatalf("exit %d, stderr %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	want := []string{
		`"command":null,"output":null,"error":{"kind":"auth"`,
		`{"command":"echo a","output":null,"error":{"kind":"skipped","message":"not run: the login failed"}}`,
		`{"command":"echo b","output":null,"error":{"kind":"skipped","message":"not run: the login failed"}}`,
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), r.stdout)
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Errorf("line %d %s, want %s", i+1, lines[i], w)
		}
	}
}

// The simulated handler knows the commands the README shows.
func TestRconSimKnowsReadmeCommands(t *testing.T) {
	t.Parallel()
	s := rcontest.NewServer(rcontest.Minecraft, testPassword, &rcontest.SimHandler{MaxPlayers: 20})
	t.Cleanup(s.Close)
	withPassword.run(t, "rcon", "--dialect", "minecraft", s.Addr().String(), "list", "say hello").
		want(t, ExitOK, "There are 0 of a max of 20 players online: \nConsole: hello\n")
}

// The shell prints the server's events by kind: chat with its channel
// and player, heartbeats not at all, and a count of those it lost.
func TestRconShellEvents(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	p := &rconPrinter{env: &Env{Stdout: &stdout, Stderr: &stderr}}
	p.event(console.Event{Kind: console.KindChat, Channel: "team", Player: "Alice", Text: "gg"})
	p.event(console.Event{Kind: console.KindHeartbeat})
	p.event(console.Event{Kind: console.KindLog, Text: "[rcon] executing: status\n", Missed: 3})
	if want := "[chat/team] Alice: gg\n[log] [rcon] executing: status\n"; stdout.String() != want {
		t.Errorf("stdout %q, want %q", stdout.String(), want)
	}
	if !strings.Contains(stderr.String(), "3 events from the server were lost") {
		t.Errorf("stderr %q does not count the lost events", stderr.String())
	}
}
