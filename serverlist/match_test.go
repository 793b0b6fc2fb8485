package serverlist

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/gsq-project/gsq/a2s"
)

// rustServer is a listed Rust server, as a Web API record describes one.
func rustServer() Server {
	return Server{
		Addr: netip.MustParseAddrPort("203.0.113.7:28016"), GamePort: 28015, SteamID: 90000000000000001,
		Name: "[EU] Rust Monthly", AppID: 252490, GameDir: "rust", Version: "2579", Product: "rust",
		Region: RegionEurope, Players: 120, MaxPlayers: 200, Map: "Procedural Map", Secure: true, Dedicated: true,
		OS: "l", GameType: "monthly,vanilla,cp120,mp200", GameData: "coop,versus",
	}
}

// Every key matches and refuses as documented on Match.
func TestMatch(t *testing.T) {
	t.Parallel()
	s := rustServer()
	empty := s
	empty.Players, empty.OS, empty.Secure, empty.Dedicated, empty.Password, empty.GameType = 0, "w", false, false, true, ""
	full := s
	full.Players = full.MaxPlayers
	proxy := s
	proxy.Dedicated, proxy.Proxy = false, true
	for _, tc := range []struct {
		filter string
		yes    []Server
		no     []Server
	}{
		{``, []Server{s, empty}, nil},
		{`\appid\252490`, []Server{s}, []Server{{AppID: 730}}},
		{`\napp\252490`, []Server{{AppID: 730}}, []Server{s}},
		{`\gamedir\RUST`, []Server{s}, []Server{{GameDir: "csgo"}}},
		{`\map\procedural map`, []Server{s}, []Server{{Map: "Barren"}}},
		{`\dedicated\1`, []Server{s}, []Server{empty}},
		{`\dedicated\0`, []Server{s, empty}, nil},
		{`\secure\1`, []Server{s}, []Server{empty}},
		{`\linux\1`, []Server{s}, []Server{empty}},
		{`\password\0`, []Server{s}, []Server{empty}},
		{`\password\1`, []Server{empty}, []Server{s}},
		{`\proxy\1`, []Server{proxy}, []Server{s}},
		{`\white\1`, []Server{{White: true}}, []Server{s}},
		{`\empty\1`, []Server{s, full}, []Server{empty}},
		{`\full\1`, []Server{s, empty}, []Server{full}},
		{`\noplayers\1`, []Server{empty}, []Server{s}},
		{`\gametype\vanilla,MONTHLY`, []Server{s}, []Server{empty, {GameType: "vanilla"}}},
		{`\gamedata\coop,versus`, []Server{s}, []Server{{GameData: "coop"}}},
		{`\gamedataor\survival,versus`, []Server{s}, []Server{{GameData: "coop"}}},
		{`\name_match\[eu]*monthly`, []Server{s}, []Server{{Name: "[US] Rust Monthly"}}},
		{`\version_match\25*`, []Server{s}, []Server{{Version: "2600"}}},
		{`\gameaddr\203.0.113.7`, []Server{s}, []Server{{Addr: netip.MustParseAddrPort("203.0.113.8:28015")}}},
		{`\gameaddr\203.0.113.7:28015`, []Server{s}, []Server{{Addr: s.Addr, GamePort: 28017}}},
		{`\addr\203.0.113.7:28016`, []Server{s}, []Server{{Addr: netip.MustParseAddrPort("203.0.113.7:28015")}}},
		{`\type\d`, []Server{s}, []Server{empty, proxy}},
		{`\type\l`, []Server{empty}, []Server{s, proxy}},
		{`\type\p`, []Server{proxy}, []Server{s}},
		{`\nor\1\secure\1`, []Server{empty}, []Server{s}},
		{`\nor\2\map\a\map\procedural map`, []Server{{Map: "b"}}, []Server{s, {Map: "a"}}},
		{`\nand\2\secure\1\linux\1`, []Server{empty, {Secure: true}}, []Server{s}},
		{`\nor\1\nand\2\secure\1\linux\1`, []Server{s}, []Server{empty}},
		{`\nor\0`, []Server{s}, nil},
		{`\nand\0`, nil, []Server{s}},
		{`\future_key\x\appid\252490`, []Server{s}, []Server{{AppID: 1}}}, // unknown keys hold
		{`\appid\x`, []Server{s, {AppID: 1}}, nil},                        // unreadable values hold
	} {
		f, err := Parse(tc.filter)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.filter, err)
		}
		for _, srv := range tc.yes {
			if !f.Match(&srv) {
				t.Errorf("%q does not match %+v", tc.filter, srv)
			}
		}
		for _, srv := range tc.no {
			if f.Match(&srv) {
				t.Errorf("%q matches %+v", tc.filter, srv)
			}
		}
	}
}

func TestWildcard(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"", "", true},
		{"", "a", false},
		{"*", "", true},
		{"*", "anything", true},
		{"a*c", "abbbc", true},
		{"a*c", "abbbd", false},
		{"*b*", "abc", true},
		{"**a**", "a", true},
		{"a*a*a", "aaaa", true},
		{"a*a*a", "aa", false},
		{"1.*", "1.0.2", true},
		{"ABC", "abc", true},
		{"x*", "ax", false},
	} {
		if got := Wildcard(tc.pattern, tc.s); got != tc.want {
			t.Errorf("Wildcard(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
	}
}

// A fleet lists in address order, by region, up to a limit, one per IP
// with collapse_addr_hash; Set replaces it, the later of two servers
// with one address staying.
func TestFleetSelect(t *testing.T) {
	t.Parallel()
	mk := func(addr string, region Region, players int) Server {
		return Server{Addr: netip.MustParseAddrPort(addr), Region: region, Players: players, MaxPlayers: 10, AppID: 10}
	}
	f := NewFleet([]Server{
		mk("10.0.0.2:27015", RegionEurope, 0),
		mk("10.0.0.1:27016", RegionEurope, 3),
		mk("10.0.0.1:27015", RegionUSEast, 5),
		mk("10.0.0.3:27015", RegionAsia, 1),
		mk("10.0.0.3:27015", RegionAsia, 9), // the same address: this one stays
	})
	list := func(filter string, region Region, limit int) ([]string, bool) {
		flt, err := Parse(filter)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		n, more := f.Select(flt, region, limit, func(s *Server) bool {
			out = append(out, s.Addr.String())
			return true
		})
		if n != len(out) {
			t.Errorf("Select returned %d, called each %d times", n, len(out))
		}
		return out, more
	}
	got, more := list("", RegionWorld, 0)
	want := []string{"10.0.0.1:27015", "10.0.0.1:27016", "10.0.0.2:27015", "10.0.0.3:27015"}
	if !slices.Equal(got, want) || more {
		t.Errorf("all: %v (more %v), want %v", got, more, want)
	}
	if got, _ := list("", RegionEurope, 0); !slices.Equal(got, want[1:3]) {
		t.Errorf("Europe: %v", got)
	}
	if got, more := list(`\empty\1`, -1, 2); !slices.Equal(got, []string{"10.0.0.1:27015", "10.0.0.1:27016"}) || !more {
		t.Errorf("limit 2: %v (more %v)", got, more)
	}
	if got, more := list(`\empty\1`, -1, 3); len(got) != 3 || more {
		t.Errorf("limit 3 of 3: %v (more %v)", got, more)
	}
	if got, _ := list(`\collapse_addr_hash\1`, -1, 0); !slices.Equal(got, []string{"10.0.0.1:27015", "10.0.0.2:27015", "10.0.0.3:27015"}) {
		t.Errorf("collapsed: %v", got)
	}
	if s, ok := f.Lookup(netip.MustParseAddrPort("10.0.0.3:27015")); !ok || s.Players != 9 {
		t.Errorf("Lookup: %+v %v, want the later server", s, ok)
	}
	n, _ := f.Select(Filter{}, -1, 0, func(*Server) bool { return false })
	if n != 1 {
		t.Errorf("a walk stopped at once called each %d times", n)
	}
	f.Set(nil)
	if f.Len() != 0 {
		t.Error("Set(nil) left servers")
	}
}

// FromA2S describes a server from its A2S_INFO as a list would.
func TestFromA2S(t *testing.T) {
	t.Parallel()
	addr := netip.MustParseAddrPort("127.0.0.1:27016")
	info := &a2s.Info{
		Name: a2s.Text("caf\xe9"), Map: a2s.Text("de_dust2"), Folder: a2s.Text("csgo"), ShortAppID: 0, GameID: 730 | 1<<32,
		Players: 3, MaxPlayers: 10, Bots: 1, ServerType: a2s.ServerDedicated, Environment: a2s.EnvironmentLinux,
		Visibility: 1, VAC: 1, Version: a2s.Text("1.0"), Keywords: a2s.Text("a,b"), SteamID: 7, Port: 27015,
	}
	s := FromA2S(addr, info)
	want := Server{Addr: addr, GamePort: 27015, SteamID: 7, Name: "café", AppID: 730, GameDir: "csgo", Version: "1.0",
		Product: "csgo", Region: RegionWorld, Players: 3, MaxPlayers: 10, Bots: 1, Map: "de_dust2", Secure: true,
		Dedicated: true, OS: "l", GameType: "a,b", Password: true}
	if s != want {
		t.Errorf("FromA2S = %+v\nwant      %+v", s, want)
	}
	noEDF := FromA2S(addr, &a2s.Info{ShortAppID: 240, ServerType: a2s.ServerProxy})
	if noEDF.GamePort != 27016 || noEDF.AppID != 240 || !noEDF.Proxy || noEDF.OS != "" {
		t.Errorf("without EDF: %+v", noEDF)
	}
	relay := Server{Addr: netip.MustParseAddrPort("169.254.109.52:24712")} // rust-gamedig#110
	if !relay.Relay() || s.Relay() || IsRelay(netip.MustParseAddrPort("[::ffff:169.254.1.1]:1")) != true {
		t.Error("relay addresses are not told apart")
	}
	if relay.GameAddr() != relay.Addr || s.GameAddr() != netip.MustParseAddrPort("127.0.0.1:27015") {
		t.Error("GameAddr")
	}
	if tags := (&Server{GameType: " a, ,b "}).Tags(); !slices.Equal(tags, []string{"a", "b"}) {
		t.Errorf("Tags = %q", tags)
	}
}

func TestRegion(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Region{"eu": RegionEurope, "Europe": RegionEurope, "all": RegionWorld, "world": RegionWorld, "7": RegionAfrica, "255": RegionWorld} {
		if r, err := ParseRegion(in); err != nil || r != want {
			t.Errorf("ParseRegion(%q) = %v, %v; want %v", in, r, err, want)
		}
	}
	for _, in := range []string{"mars", "8", "none", "-1", ""} {
		if _, err := ParseRegion(in); err == nil || !strings.Contains(err.Error(), "europe (eu)") {
			t.Errorf("ParseRegion(%q) = %v, want an error listing the regions", in, err)
		}
	}
	if RegionAsia.String() != "asia" || Region(9).String() != "9" || RegionNone.String() != "none" {
		t.Error("Region.String")
	}
}
