package cli

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/gsq-project/gsq/battleye"
	"github.com/gsq-project/gsq/battleye/betest"
	"github.com/gsq-project/gsq/internal/sim"
	"github.com/gsq-project/gsq/palworld"
	"github.com/gsq-project/gsq/palworld/palworldtest"
	"github.com/gsq-project/gsq/sdtd"
	"github.com/gsq-project/gsq/sdtd/sdtdtest"
	"github.com/gsq-project/gsq/webrcon"
	"github.com/gsq-project/gsq/webrcon/webrcontest"
)

// This file adds the consoles of issue 21 to `gsq serve`: Rust's WebRCON,
// BattlEye RCon, 7 Days to Die's telnet console and Palworld's REST API,
// each on an address of its own (--webrcon, --battleye, --telnet,
// --palworld), played by the protocol packages' fakes with the served
// content's name, map and players, and --rcon-password as the password
// of them all.

// consoleServeOptions are the console flags of gsq serve.
type consoleServeOptions struct {
	webrcon, battleye, telnet, palworld string // addresses; empty: not served
	webrconProfile, battleyeProfile     string
}

// consoleServeFlags lists the flags, for the checks against --fleet.
var consoleServeFlags = []string{protoWebRcon, "battleye", "telnet", "palworld", protoWebRcon + "-profile", "battleye-profile"}

// addConsoleServeFlags registers the flags.
func addConsoleServeFlags(f *pflag.FlagSet, o *consoleServeOptions) {
	f.StringVar(&o.webrcon, protoWebRcon, "", "also serve Rust's WebRCON (ws://ADDR/PASSWORD) on this TCP `address`")
	f.StringVar(&o.battleye, "battleye", "", "also serve BattlEye RCon (DayZ, Arma) on this UDP `address`")
	f.StringVar(&o.telnet, "telnet", "", "also serve the 7 Days to Die telnet console on this TCP `address`")
	f.StringVar(&o.palworld, "palworld", "", "also serve Palworld's REST API on this TCP `address`")
	f.StringVar(&o.webrconProfile, protoWebRcon+"-profile", "rust", "WebRCON server to play: "+strings.Join(webrcontest.ProfileNames(), ", "))
	f.StringVar(&o.battleyeProfile, "battleye-profile", "dayz", "BattlEye server to play: "+strings.Join(betest.ProfileNames(), ", "))
}

// consoleServers are the running console fakes.
type consoleServers struct {
	closers []func()
	lines   []string // what each serves, for describeSimulation's caller
}

// startConsoles listens on the addresses given and serves the content
// there; on an error it closes what it started.
func startConsoles(o *consoleServeOptions, c sim.Content, password string) (_ *consoleServers, err error) {
	cs := &consoleServers{}
	defer func() {
		if err != nil {
			cs.close()
		}
	}()
	auth := "password set"
	if password == "" {
		auth = "no password: every login is refused"
	}
	if o.webrcon != "" {
		p, perr := webrcontest.LookupProfile(o.webrconProfile)
		if perr != nil {
			return nil, usageError("--webrcon-profile: %v", perr)
		}
		l, err := listenTCP(protoWebRcon, o.webrcon)
		if err != nil {
			return nil, err
		}
		s := webrcontest.NewUnstartedServerOn(l, p, password, &webrcontest.SimHandler{Info: rustInfo(c), Players: rustPlayers(c)})
		s.Start()
		cs.add(s.Close, "webrcon  tcp %s (profile %s, %s): gsq rcon webrcon://%s playerlist", s.Addr(), p.Name, auth, s.Addr())
	}
	if o.battleye != "" {
		p, perr := betest.LookupProfile(o.battleyeProfile)
		if perr != nil {
			return nil, usageError("--battleye-profile: %v", perr)
		}
		pc, err := net.ListenPacket("udp", o.battleye)
		if err != nil {
			return nil, usageError("--battleye %q: %v", o.battleye, err)
		}
		s := betest.NewUnstartedServerOn(pc, p, password, &betest.SimHandler{Players: bePlayers(c)})
		s.Start()
		cs.add(s.Close, "battleye udp %s (profile %s, %s): gsq rcon battleye://%s players", s.Addr(), p.Name, auth, s.Addr())
	}
	if o.telnet != "" {
		l, err := listenTCP("telnet", o.telnet)
		if err != nil {
			return nil, err
		}
		s := sdtdtest.NewUnstartedServerOn(l, password, &sdtdtest.SimHandler{Players: sdtdPlayers(c)})
		s.Start()
		tauth := "password set"
		if password == "" {
			tauth = "no password: no login, loopback clients only, as 7 Days to Die does"
		}
		cs.add(s.Close, "telnet   tcp %s (7 Days to Die, %s): gsq rcon telnet://%s listplayers", s.Addr(), tauth, s.Addr())
	}
	if o.palworld != "" {
		l, err := listenTCP("palworld", o.palworld)
		if err != nil {
			return nil, err
		}
		h := palworldtest.NewSimHandler(
			palworld.Info{Version: c.Version, ServerName: c.Name, Description: c.Game},
			palPlayers(c),
			palworld.Metrics{ServerFPS: 60, CurrentPlayerNum: len(c.Players), ServerFrameTime: 16.7, MaxPlayerNum: c.MaxPlayers})
		s := palworldtest.NewUnstartedServerOn(l, password, h)
		s.Start()
		cs.add(s.Close, "palworld tcp %s (REST API, %s): gsq rcon palworld://%s players", s.Addr(), auth, s.Addr())
	}
	return cs, nil
}

// listenTCP listens for flag's console on addr.
func listenTCP(flag, addr string) (net.Listener, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, usageError("--%s %q: %v", flag, addr, err)
	}
	return l, nil
}

func (cs *consoleServers) add(close func(), format string, args ...any) {
	cs.closers = append(cs.closers, close)
	cs.lines = append(cs.lines, fmt.Sprintf(format, args...))
}

// describe prints what the consoles serve.
func (cs *consoleServers) describe(w io.Writer) {
	for _, l := range cs.lines {
		fmt.Fprintf(w, "gsq:   %s\n", l)
	}
}

// close shuts the consoles down, together (each gives its sessions up to
// 5 s).
func (cs *consoleServers) close() {
	var wg sync.WaitGroup
	for _, c := range cs.closers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c()
		}()
	}
	wg.Wait()
}

// steamID is a made-up SteamID64 for the i-th simulated player.
func steamID(i int) string { return fmt.Sprintf("765611980000%05d", i+1) }

// simSeconds is how long a simulated player has been connected, in
// whole seconds.
func simSeconds(p sim.Player) int { return int(p.Duration / time.Second) }

func rustInfo(c sim.Content) webrcon.ServerInfo {
	return webrcon.ServerInfo{Hostname: c.Name, Map: c.Map, MaxPlayers: c.MaxPlayers, Players: len(c.Players), Framerate: 60}
}

func rustPlayers(c sim.Content) []webrcon.Player {
	ps := make([]webrcon.Player, len(c.Players))
	for i, p := range c.Players {
		id := steamID(i)
		ps[i] = webrcon.Player{SteamID: id, OwnerSteamID: "0", DisplayName: p.Name, Ping: 30 + i, Address: fmt.Sprintf("10.0.0.%d:28015", i%250+1),
			ConnectedSeconds: simSeconds(p), Health: 100}
	}
	return ps
}

func bePlayers(c sim.Content) []battleye.Player {
	ps := make([]battleye.Player, len(c.Players))
	for i, p := range c.Players {
		sum := md5.Sum([]byte(steamID(i))) // BattlEye GUIDs are 32 hex digits
		ps[i] = battleye.Player{Slot: i, Addr: netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 0, byte(i%250 + 1)}), 2304),
			Ping: 30 + i, GUID: hex.EncodeToString(sum[:]), Verified: true, Name: p.Name}
	}
	return ps
}

func sdtdPlayers(c sim.Content) []sdtd.Player {
	ps := make([]sdtd.Player, len(c.Players))
	for i, p := range c.Players {
		ps[i] = sdtd.Player{EntityID: 171 + i, Name: p.Name, Position: "(0.0, 61.0, 0.0)", Health: 100, Score: int(p.Score), Level: 1,
			PlatformID: "Steam_" + steamID(i), IP: fmt.Sprintf("10.0.0.%d", i%250+1), Ping: 30 + i}
	}
	return ps
}

func palPlayers(c sim.Content) []palworld.Player {
	ps := make([]palworld.Player, len(c.Players))
	for i, p := range c.Players {
		ps[i] = palworld.Player{Name: p.Name, AccountName: strings.ToLower(p.Name), PlayerID: palworld.ID(fmt.Sprintf("%08X", i+1)),
			UserID: palworld.ID("steam_" + steamID(i)), IP: fmt.Sprintf("10.0.0.%d", i%250+1), Ping: float64(30 + i), Level: 1}
	}
	return ps
}
