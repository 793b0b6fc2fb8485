package cli

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/a2s/a2stest"
	"github.com/gsq-project/gsq/internal/sim"
	"github.com/gsq-project/gsq/internal/testutil"
)

// goInternals are the marks of a Go error shown as is to a user.
var goInternals = regexp.MustCompile(`strconv\.|reflect|sim\.|time\.Duration|into (u?int|float|bool|string)|yaml: unmarshal`)

func TestServeUsageErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	config := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--fleet", "0"}, `--fleet: invalid value "0": want a whole number from 1 to 65535`},
		{[]string{"--fleet", "-5"}, `--fleet: invalid value "-5": want a whole number from 1 to 65535`},
		{[]string{"--fleet", "10", "--base-port", "65530"}, "does not fit in ports 1-65535"},
		{[]string{"--fleet", "2", "--loss", "abc"}, `--loss: invalid value "abc": want a number from 0 to 1`},
		{[]string{"--fleet", "2", "--reorder", "NaN"}, `--reorder: invalid value "NaN": want a number from 0 to 1`},
		{[]string{"--fleet", "2", "--seed", "-1"}, `--seed: invalid value "-1": want a whole number of 0 or more`},
		{[]string{"--fleet", "2", "--profile", "lossy"}, "--profile does not apply to --fleet"},
		{[]string{"--loss", "0.1"}, "--loss applies to --fleet only"},
		{[]string{"--fleet", "2", "--fleet-host", "nope"}, `--fleet-host: "nope" is not an IP address`},
		{[]string{"--fleet-host", "127.0.0.2"}, "--fleet-host applies to --fleet only"},
		{[]string{"--rate-limit", "fast"}, `--rate-limit: invalid value "fast": want a number`},
		{[]string{"--app-id", "-1"}, `--app-id: invalid value "-1": want a whole number from 0 to 4294967295`},
		{[]string{"--max-players", "70000"}, `--max-players: invalid value "70000": want a whole number from 0 to 65535`},
		{[]string{"--player", "Alice:1:5x"}, `"5x" is not a duration such as 90s or 5m`},
		{[]string{"--profile", "nope"}, "unknown profile \"nope\" (known: modern, legacy"},
		{[]string{"--config", config("key.yaml", "name: x\nmapp: de_dust\n")},
			`key.yaml:2:1: unknown key "mapp" (did you mean "map"?)`},
		{[]string{"--config", config("player.yaml", "players:\n  - name: A\n    scor: 5\n")},
			`player.yaml:3:5: players[0]: unknown key "scor" (did you mean "score"?)`},
		{[]string{"--config", config("int.yaml", "max_players: many\n")}, `int.yaml:1:14: max_players: must be a whole number, not "many"`},
		{[]string{"--config", config("duration.yaml", "players:\n  - duration: 5x\n")}, `duration.yaml:2:15: players[0].duration: "5x" is not a duration: use a number and a unit, as in 30s, 5m, 2h, 1h30m or 14d`},
		{[]string{"--config", config("list.yaml", "rules: 3\n")}, `list.yaml:1:8: rules: must be a list, not "3"`},
		{[]string{"--config", config("range.yaml", "max_players: 70000\n")}, "max_players 70000 out of range 0-65535"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			code, _, stderr := runGSQ(t, nil, nil, nil, append([]string{"serve"}, tc.args...)...)
			if code != ExitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d and %q", code, stderr, ExitUsage, tc.want)
			}
			if m := goInternals.FindString(stderr); m != "" {
				t.Errorf("Go internals (%q) in:\n%s", m, stderr)
			}
		})
	}
}

// startTestSimulation starts cfg's simulation on a free loopback port,
// shut down after the test.
func startTestSimulation(t *testing.T, cfg simConfig) *sim.Server {
	t.Helper()
	cfg.addr = "127.0.0.1:0"
	s, err := startSimulation(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	})
	return s
}

// TestServeBannedNoAmplification: gsq serve --profile banned answers a
// 5-byte query with at most 15 bytes, and an INFO query with the whole ban.
func TestServeBannedNoAmplification(t *testing.T) {
	t.Parallel()
	p, err := a2stest.LookupProfile("banned")
	if err != nil {
		t.Fatal(err)
	}
	s := startTestSimulation(t, simConfig{profile: p, noRCON: true, content: sim.Default()})
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(s.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	info, _ := a2s.Request{Type: a2s.TypeInfoRequest}.AppendBinary(nil)
	for _, req := range [][]byte{[]byte("\xff\xff\xff\xffU"), info} {
		if _, err := c.Write(req); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 2048)
		c.SetReadDeadline(time.Now().Add(10 * time.Second)) // a hang guard
		n, err := c.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		text, err := a2s.ParseBanned(buf[:n])
		if err != nil || n > 3*len(req) || n > len(req)+32 {
			t.Errorf("%d-byte query answered with %d bytes (%q, %v)", len(req), n, buf[:n], err)
		}
		if len(req) == len(info) && string(text) != string(p.Banned) {
			t.Errorf("INFO query: ban text %q", text)
		}
	}
}

// TestServeProfiles: every profile, served by gsq serve, answers an a2s
// client with its own content (the bzip2 one through a compressed split).
func TestServeProfiles(t *testing.T) {
	t.Parallel()
	for _, p := range a2stest.Profiles() {
		if p.Banned != nil {
			continue
		}
		t.Run(p.Name, func(t *testing.T) {
			t.Parallel()
			p.RateLimit = -1
			s := startTestSimulation(t, simConfig{profile: p, noRCON: true, content: sim.Default()})
			c := &a2s.Client{Timeout: 2 * time.Second}
			defer c.Close()
			ctx := testutil.Context(t)
			rules, err := c.Rules(ctx, s.Addr())
			if err != nil {
				t.Fatal(err)
			}
			want := a2stest.DefaultRules()
			if p.Rules != nil {
				want = p.Rules
			}
			if len(rules.List) != len(want.List) {
				t.Errorf("%d rules, want %d", len(rules.List), len(want.List))
			}
		})
	}
}

// lineWriter sends each write to a channel: a reader can wait for a line.
type lineWriter chan string

func (w lineWriter) Write(b []byte) (int, error) {
	w <- string(b)
	return len(b), nil
}

func TestServeFleet(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for try := 0; ; try++ {
		base := 10000 + rand.IntN(22000) // below the ephemeral ports
		lines := make(lineWriter, 8)
		done := make(chan error, 1)
		go func() { done <- runFleet(ctx, lines, &serveOptions{fleet: 3, basePort: base, seed: 1}) }()
		select {
		case err := <-done:
			if try < 20 && strings.Contains(err.Error(), "in use") {
				continue
			}
			t.Fatalf("fleet: %v", err)
		case line := <-lines:
			if want := fmt.Sprintf("3 simulated A2S and OGP servers on 127.0.0.1:%d-%d", base, base+2); !strings.Contains(line, want) {
				t.Errorf("fleet says %q, want %q", line, want)
			}
		}
		c := &a2s.Client{Timeout: 2 * time.Second}
		defer c.Close()
		qctx, qcancel := context.WithTimeout(ctx, 30*time.Second)
		defer qcancel()
		res, err := c.Info(qctx, netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(base+2)))
		if err != nil || string(res.Info.Name) != "gsq fleet server #2" {
			t.Fatalf("fleet server 2: %v, %+v", err, res)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("fleet returned %v", err)
		}
		return
	}
}

func TestServeHelpSaysBannedSkipsChallenge(t *testing.T) {
	t.Parallel()
	_, stdout, _ := runGSQ(t, nil, nil, nil, "serve", "--help")
	for _, line := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "banned ") {
			if !strings.Contains(line, "without a challenge") {
				t.Errorf("the banned profile's help does not say it skips the challenge: %q", line)
			}
			return
		}
	}
	t.Errorf("no banned profile in the help:\n%s", stdout)
}

// A content file fills what OGP reports beyond A2S: the next map, the
// game type and mode, reserved slots, teams, add-ons and limits, a
// limit's left part being optional.
func TestServeContentFileOGPExtras(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "ogp.yaml")
	yaml := `name: extras
next_map: cs_office
game_type: defuse
game_mode: competitive
reserved_slots: 2
teams:
  - {name: CT, score: 3, players: 2}
addons:
  - {short_name: sm, long_name: SourceMod, version: "1.12", active: true}
limits:
  - {type: time, limit: 1800, left: 600}
  - {type: rounds, limit: 30}
`
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := loadContent(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.NextMap != "cs_office" || c.GameType != "defuse" || c.GameMode != "competitive" || c.ReservedSlots != 2 ||
		len(c.Teams) != 1 || c.Teams[0] != (sim.Team{Name: "CT", Score: 3, Players: 2}) ||
		len(c.AddOns) != 1 || !c.AddOns[0].Active || c.AddOns[0].Version != "1.12" ||
		len(c.Limits) != 2 || c.Limits[0].Left == nil || *c.Limits[0].Left != 600 || c.Limits[1].Left != nil {
		t.Errorf("content %+v", c)
	}
	if err := os.WriteFile(path, []byte("limits:\n  - {type: laps, limit: 3}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := loadContent(path); err == nil || !strings.Contains(err.Error(), `limit type "laps"`) {
		t.Errorf("a limit of an unknown type: %v", err)
	}
}

// TestServeFleetPortTaken: a fleet whose port another program holds says
// which port (issue 19, user row 8).
func TestServeFleetPortTaken(t *testing.T) {
	t.Parallel()
	holder, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	port := holder.LocalAddr().(*net.UDPAddr).Port
	err = runFleet(context.Background(), io.Discard, &serveOptions{fleet: 1, basePort: port, seed: 1})
	if want := fmt.Sprintf("UDP 127.0.0.1:%d: address already in use (another program holds that port: choose another --base-port)", port); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want one with %q", err, want)
	}
}

// TestServeBannedPingNotAmplified: the banned profile answered a 5-byte
// A2A_PING with 20 bytes (issue 19, attacker row 9). A ping gets a bare
// 'j' of its own size, and a challenge request nothing: the ping sent
// after it is the only answer.
func TestServeBannedPingNotAmplified(t *testing.T) {
	t.Parallel()
	p, err := a2stest.LookupProfile("banned")
	if err != nil {
		t.Fatal(err)
	}
	s := startTestSimulation(t, simConfig{profile: p, noRCON: true, content: sim.Default()})
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(s.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, req := range []string{"\xff\xff\xff\xffW", "\xff\xff\xff\xffi"} {
		if _, err := c.Write([]byte(req)); err != nil {
			t.Fatal(err)
		}
	}
	buf := make([]byte, 2048)
	c.SetReadDeadline(time.Now().Add(10 * time.Second)) // a hang guard
	n, err := c.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	if string(buf[:n]) != "\xff\xff\xff\xffj" {
		t.Errorf("a challenge request and a 5-byte ping answered first with %d bytes %q, want the bare 5-byte 'j'", n, buf[:n])
	}
}
