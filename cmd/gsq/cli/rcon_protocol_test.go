package cli

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gsq-project/gsq/battleye"
	"github.com/gsq-project/gsq/battleye/betest"
	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/palworld"
	"github.com/gsq-project/gsq/palworld/palworldtest"
	"github.com/gsq-project/gsq/sdtd"
	"github.com/gsq-project/gsq/sdtd/sdtdtest"
	"github.com/gsq-project/gsq/webrcon"
	"github.com/gsq-project/gsq/webrcon/webrcontest"
)

// consoleFakes starts one fake of each console protocol other than RCON,
// with testPassword, and returns their addresses by protocol.
func consoleFakes(t *testing.T) (addrs map[string]string, ws *webrcontest.Server, be *betest.Server, tn *sdtdtest.Server) {
	t.Helper()
	ws = webrcontest.NewServer(webrcontest.Rust, testPassword, &webrcontest.SimHandler{
		Info: webrcon.ServerInfo{Hostname: "Rust fake", Map: "Procedural Map", MaxPlayers: 100, Players: 1},
	})
	t.Cleanup(ws.Close)
	be = betest.NewServer(betest.DayZ, testPassword, &betest.SimHandler{
		Players: []battleye.Player{{Slot: 0, Addr: netip.MustParseAddrPort("10.0.0.1:2304"), Ping: 40, GUID: "0123456789abcdef0123456789abcdef", Verified: true, Name: "Survivor"}},
	})
	t.Cleanup(be.Close)
	tn = sdtdtest.NewServer(testPassword, &sdtdtest.SimHandler{Players: []sdtd.Player{{EntityID: 171, Name: "Zed", PlatformID: "Steam_1"}}})
	t.Cleanup(tn.Close)
	pw := palworldtest.NewServer(testPassword, palworldtest.NewSimHandler(
		palworld.Info{Version: "v0.5.0", ServerName: "Pal fake"},
		[]palworld.Player{{Name: "Pal", AccountName: "pal", PlayerID: "1", UserID: "steam_1"}},
		palworld.Metrics{MaxPlayerNum: 32, CurrentPlayerNum: 1}))
	t.Cleanup(pw.Close)
	return map[string]string{
		protoWebRcon:  ws.Addr().String(),
		protoBattlEye: be.Addr().String(),
		protoTelnet:   tn.Addr().String(),
		protoPalworld: pw.Addr().String(),
	}, ws, be, tn
}

// Each protocol runs a command by --protocol and by its URL scheme, and a
// wrong password exits 4 with its kind in the JSON.
func TestRconConsoleProtocols(t *testing.T) {
	t.Parallel()
	addrs, _, _, _ := consoleFakes(t)
	// A command each fake answers, and a piece of the answer.
	probes := map[string][2]string{
		protoWebRcon:  {"serverinfo", `"Hostname":"Rust fake"`},
		protoBattlEye: {"players", "Survivor"},
		protoTelnet:   {"listplayers", "Zed"},
		protoPalworld: {"info", "Pal fake"},
	}
	for proto, addr := range addrs {
		cmd, want := probes[proto][0], probes[proto][1]
		t.Run(proto, func(t *testing.T) {
			t.Parallel()
			r := withPassword.run(t, "rcon", "--protocol", proto, addr, cmd)
			if r.code != ExitOK || !strings.Contains(r.stdout, want) {
				t.Errorf("--protocol: exit %d, stdout %q, want %q\nstderr: %s", r.code, r.stdout, want, r.stderr)
			}
			r = gsqCase{}.run(t, "rcon", proto+"://:"+testPassword+"@"+addr, cmd)
			if r.code != ExitOK || !strings.Contains(r.stdout, want) {
				t.Errorf("URL: exit %d, stdout %q, want %q\nstderr: %s", r.code, r.stdout, want, r.stderr)
			}
			r = gsqCase{vars: map[string]string{"RCON_PASSWORD": "wrong-password"}}.run(t, "rcon", "--json", "--protocol", proto, addr, cmd)
			if r.code != ExitAuth {
				t.Errorf("wrong password: exit %d, want %d\nstdout: %s\nstderr: %s", r.code, ExitAuth, r.stdout, r.stderr)
			}
			var line struct{ Error struct{ Kind string } }
			first, _, _ := strings.Cut(r.stdout, "\n")
			if err := json.Unmarshal([]byte(first), &line); err != nil || line.Error.Kind != "auth" {
				t.Errorf("wrong password: JSON %q (%v), want kind auth", r.stdout, err)
			}
		})
	}
}

// The config file's protocol key picks the protocol of a named server,
// and --protocol overrides it.
func TestRconConfigProtocol(t *testing.T) {
	t.Parallel()
	addrs, _, _, _ := consoleFakes(t)
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	writeFileMode(t, cfg, "servers:\n  rust:\n    address: "+addrs[protoWebRcon]+"\n    protocol: webrcon\n  bad:\n    address: 127.0.0.1\n    protocol: quake\n", 0o600)
	r := withPassword.run(t, "rcon", "--config", cfg, "rust", "echo hi")
	r.want(t, ExitOK, "hi\n")
	r = withPassword.run(t, "rcon", "--config", cfg, "--print-config", "rust")
	if !strings.Contains(r.stdout, "protocol:  webrcon") {
		t.Errorf("--print-config: %q, want the protocol", r.stdout)
	}
	r = withPassword.run(t, "rcon", "--config", cfg, "bad", "status")
	if r.code != ExitUsage || !strings.Contains(r.stderr, `unknown protocol "quake"`) {
		t.Errorf("bad protocol: exit %d, stderr %q", r.code, r.stderr)
	}
	// --protocol over the key: a Source RCON login to a WebRCON port,
	// which names the right protocol.
	r = withPassword.run(t, "rcon", "--config", cfg, "--timeout", "1s", "--protocol", "source", "rust", "status")
	if r.code != ExitFailure || !strings.Contains(r.stderr, "--protocol webrcon") {
		t.Errorf("--protocol source: exit %d, stderr %q", r.code, r.stderr)
	}
}

// Flags that contradict the protocol are usage errors, before anything
// is sent.
func TestRconProtocolUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--protocol", "quake", "127.0.0.1", "status"},
		{"--protocol", "webrcon", "--dialect", "minecraft", "127.0.0.1", "status"},
		{"--protocol", "battleye", "--profile", "rust-legacy", "127.0.0.1", "status"},
		{"--protocol", "source", "--dialect", "minecraft", "127.0.0.1", "status"},
		{"--protocol", "telnet", "webrcon://127.0.0.1", "status"},
		{"webrcon://127.0.0.1/path", "status"},
	} {
		r := withPassword.run(t, append([]string{"rcon"}, args...)...)
		if r.code != ExitUsage {
			t.Errorf("%q: exit %d, want %d\nstderr: %s", args, r.code, ExitUsage, r.stderr)
		}
	}
}

// A Source RCON login to another console's port names the protocol to
// use, rather than a protocol error about packet sizes.
func TestRconDetectsProtocol(t *testing.T) {
	t.Parallel()
	addrs, _, _, _ := consoleFakes(t)
	for _, proto := range []string{protoWebRcon, protoTelnet, protoPalworld} {
		r := withPassword.run(t, "rcon", "--timeout", "1s", addrs[proto], "status")
		if r.code != ExitFailure || !strings.Contains(r.stderr, "hint: use: gsq rcon --protocol "+proto+" "+addrs[proto]) {
			t.Errorf("%s port: exit %d, stderr %q, want a hint naming --protocol %s", proto, r.code, r.stderr, proto)
		}
	}
}

// A BattlEye port where nothing answers is a timeout (exit 3), and the
// hint says what silence means there.
func TestRconBattlEyeSilent(t *testing.T) {
	t.Parallel()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	r := withPassword.run(t, "rcon", "--protocol", "battleye", "--timeout", "300ms", pc.LocalAddr().String(), "players")
	if r.code != ExitTimeout || !strings.Contains(r.stderr, "BattlEye RCon is off") {
		t.Errorf("exit %d, stderr %q; want %d and the hint", r.code, r.stderr, ExitTimeout)
	}
}

// --follow prints the events as they come, as lines and as JSON lines,
// until the context ends (Ctrl-C), which exits 0.
func TestRconFollow(t *testing.T) {
	t.Parallel()
	addrs, ws, be, tn := consoleFakes(t)
	cases := []struct {
		proto string
		json  bool
		want  string
		say   func()
	}{
		{protoWebRcon, true, `"kind":"chat"`, func() { ws.Chat(webrcon.Chat{Username: "Alice", Message: "hello rust", UserID: "7656"}) }},
		{protoWebRcon, false, "Alice: hello rust", func() { ws.Chat(webrcon.Chat{Username: "Alice", Message: "hello rust", UserID: "7656"}) }},
		{protoBattlEye, true, "hello dayz", func() { be.Broadcast("(Global) Bob: hello dayz") }},
		{protoTelnet, false, "hello 7dtd", func() { tn.Telnet.Log("Chat (from 'Steam_1', entity id '171', to 'Global'): 'Zed': hello 7dtd") }},
	}
	for _, c := range cases {
		t.Run(c.proto, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(testutil.Context(t))
			defer cancel()
			stdout, stderr := newWatchedBuffer(c.want), newWatchedBuffer("following")
			env := testEnv(nil, map[string]string{"RCON_PASSWORD": testPassword})
			env.Stdout, env.Stderr = stdout, stderr
			args := []string{"rcon", "--follow", "--protocol", c.proto, addrs[c.proto]}
			if c.json {
				args = append(args, "--json")
			}
			done := make(chan int, 1)
			go func() { done <- env.Run(ctx, args) }()
			select {
			case <-stderr.seen:
			case code := <-done:
				t.Fatalf("gsq ended (%d) before following: %s %s", code, stdout, stderr)
			case <-ctx.Done():
				t.Fatal("gsq never started following")
			}
			// The session is logged in: say it, until it shows (a
			// BattlEye broadcast goes only to clients it knows).
			tick := time.NewTicker(50 * time.Millisecond)
			defer tick.Stop()
			for waiting := true; waiting; {
				c.say()
				select {
				case <-stdout.seen:
					waiting = false
				case <-tick.C:
				case <-ctx.Done():
					t.Fatalf("no event: %q", stdout)
				}
			}
			cancel()
			if code := <-done; code != ExitOK {
				t.Errorf("exit %d after Ctrl-C, want 0", code)
			}
			if c.json {
				for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
					var e map[string]any
					if err := json.Unmarshal([]byte(line), &e); err != nil {
						t.Errorf("not JSON: %q", line)
					}
				}
			}
		})
	}
}

// gsq query --protocol webrcon reports a Rust server's info and players
// through its console, with the password as an option; a wrong one exits
// 4, as gsq rcon does.
func TestQueryWebRcon(t *testing.T) {
	t.Parallel()
	addrs, _, _, _ := consoleFakes(t)
	code, stdout, stderr := runGSQ(t, nil, nil, nil, "query", "--json", "--protocol", "webrcon", "--option", "password="+testPassword, addrs[protoWebRcon])
	if code != ExitOK || !strings.Contains(stdout, `"summary":{"name":"Rust fake","map":"Procedural Map","players":1,"max_players":100}`) {
		t.Errorf("exit %d, stdout %s, stderr %s", code, stdout, stderr)
	}
	code, stdout, _ = runGSQ(t, nil, nil, nil, "query", "--json", "--protocol", "webrcon", "--option", "password=wrong", addrs[protoWebRcon])
	if code != ExitAuth || !strings.Contains(stdout, `"kind":"auth"`) {
		t.Errorf("wrong password: exit %d, stdout %s", code, stdout)
	}

	// The password out of sight of ps: from a file, or the environment
	// as gsq rcon reads it; --option password=... wins over both.
	file := testutil.WriteFile(t, filepath.Join(t.TempDir(), "rcon.pass"), testPassword+"\n")
	for _, c := range []struct {
		name string
		env  map[string]string
		args []string
		want int
	}{
		{"password-file", nil, []string{"--option", "password-file=" + file}, ExitOK},
		{"GSQ_RCON_PASSWORD", map[string]string{"GSQ_RCON_PASSWORD": testPassword}, nil, ExitOK},
		{"RCON_PASSWORD_FILE", map[string]string{"RCON_PASSWORD_FILE": file}, nil, ExitOK},
		{"the option wins", map[string]string{"GSQ_RCON_PASSWORD": testPassword}, []string{"--option", "password=wrong"}, ExitAuth},
		{"none", nil, nil, ExitAuth},
		{"a missing file", nil, []string{"--option", "password-file=" + file + ".missing"}, ExitUsage},
	} {
		args := append([]string{"query", "--json", "--protocol", "webrcon"}, c.args...)
		code, stdout, stderr := runGSQ(t, nil, nil, c.env, append(args, addrs[protoWebRcon])...)
		if code != c.want {
			t.Errorf("%s: exit %d, want %d; stdout %s, stderr %s", c.name, code, c.want, stdout, stderr)
		}
		if strings.Contains(stdout+stderr, testPassword) {
			t.Errorf("%s: the password is in the output", c.name)
		}
	}
}

// The interactive shell works over the other consoles too: a command's
// answer, and what the server said meanwhile printed after it (the chat
// of a WebRCON "say"), and Tab completes the console's own commands.
func TestRconShellWebRcon(t *testing.T) {
	if os.Getenv(rconHelperEnv) == "1" {
		return
	}
	tmux, sock, conf, dir := newTmux(t)
	addrs, _, _, _ := consoleFakes(t)
	s := startTmuxGsq(t, tmux, sock, conf, dir, "webrcon", true, []string{"rcon", "--protocol", "webrcon", addrs[protoWebRcon]}, "RCON_PASSWORD="+testPassword)
	prompt := addrs[protoWebRcon] + "> "
	s.waitText("(webrcon); :q or Ctrl-D leaves")
	s.waitText(prompt)
	s.text("playerl")
	s.keys("Tab")
	s.waitText(prompt + "playerlist") // a Rust command, completed
	s.keys("C-u")
	s.text("serverinfo")
	s.keys("Enter")
	s.waitText(`"Hostname":"Rust fake"`)
	s.text("say hello from the shell")
	s.keys("Enter")
	s.text("echo done")
	s.keys("Enter")
	s.waitText("[chat/server] SERVER: hello from the shell")
	s.waitLine("done", 1)
	s.text(":q")
	s.keys("Enter")
	if code := s.waitExit(); code != "0" {
		t.Errorf("exit %s:\n%s", code, strings.Join(s.screen(), "\n"))
	}
}

// A refused RCON port on a host whose Palworld REST API answers (Palworld
// is withdrawing its RCON) names --protocol palworld and the API's
// address; a refused port on a host without it stays a refused port.
func TestRconDetectsPalworldBehindRefusedRCON(t *testing.T) {
	t.Parallel()
	addrs, _, _, _ := consoleFakes(t)
	rest := netip.MustParseAddrPort(addrs[protoPalworld])
	addr := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), closedPort(t)).String()
	tg := &rconTarget{addr: addr, restPort: rest.Port()}
	_, dialErr := net.Dial("tcp", addr)
	if !errors.Is(dialErr, syscall.ECONNREFUSED) {
		t.Skipf("the closed port was not refused: %v", dialErr)
	}
	got := tg.detectProtocol(testutil.Context(t), dialErr)
	var wp *wrongProtocolError
	if !errors.As(got, &wp) || wp.use != "--protocol palworld "+rest.String() || !errors.Is(got, syscall.ECONNREFUSED) {
		t.Errorf("detectProtocol = %v (%+v)", got, wp)
	}
	tg.restPort = closedPort(t)
	if got := tg.detectProtocol(testutil.Context(t), dialErr); got != dialErr {
		t.Errorf("no REST API: %v, want the refusal itself", got)
	}
}

// closedPort is a loopback TCP port nobody listens on.
func closedPort(t *testing.T) uint16 {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return uint16(l.Addr().(*net.TCPAddr).Port)
}

// The shell completes Palworld's command names, aliases included, not
// the usage lines they come from.
func TestPalworldShellCommands(t *testing.T) {
	t.Parallel()
	got := strings.Join(palworldCommands(), " ")
	want := "info players showplayers settings metrics announce broadcast kick kickplayer ban banplayer unban unbanplayer save shutdown stop doexit"
	if got != want {
		t.Errorf("palworldCommands = %q, want %q", got, want)
	}
}
