package monitor

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/serverlist"
)

func TestParseDiscoverAndGame(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "steam.key"), []byte("0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "monitor.yaml")
	if err := os.WriteFile(path, []byte(`interval: 20s
discover:
  - name: fleet
    master: 127.0.0.1:27011
    game: css
    filter: '\map\de_nuke'
    region: eu
    every: 1m
    retire_after: 2
    max_servers: 50
    labels: {site: lab}
  - name: rust-eu
    game: rust
    key_file: steam.key
  - name: anything
    appid: 730
    api_url: http://127.0.0.1:1
    every: 10s
    key_env: MY_KEY
servers:
  - name: viking
    address: 203.0.113.1
    game: valheim
  - name: viking2
    address: 203.0.113.1:2460
    game: valheim
  - name: onset
    address: 203.0.113.2
    game: onset
`), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := (&Loader{Path: path}).Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Discover) != 3 {
		t.Fatalf("%d discover entries", len(c.Discover))
	}
	f, r, a := c.Discover[0], c.Discover[1], c.Discover[2]
	if f.Steam() || f.Master != netip.MustParseAddrPort("127.0.0.1:27011") || f.Filter != `\appid\240\map\de_nuke` ||
		f.Region != serverlist.RegionEurope || f.Every != time.Minute || f.RetireAfter != 2 || f.MaxServers != 50 || f.Protocol != "a2s" || f.Game != "css" {
		t.Errorf("fleet: %+v", f)
	}
	if !r.Steam() || r.Filter != `\appid\252490` || r.Every != DefaultDiscoverEvery || r.RetireAfter != DefaultRetireAfter ||
		r.MaxServers != DefaultDiscoverMax || string(r.Key) != "0123456789abcdef" || r.KeyEnv != DefaultSteamKeyEnv || r.Region != serverlist.RegionWorld {
		t.Errorf("rust-eu: %+v", r)
	}
	if a.Filter != `\appid\730` || a.KeyEnv != "MY_KEY" || a.Every != 10*time.Second || a.Protocol != c.Protocol {
		t.Errorf("anything: %+v", a)
	}
	// game: on a server: the protocol, and the port of an address without one.
	if s := c.Server("viking"); s == nil || s.Protocol != "a2s" || s.Address != "203.0.113.1:2457" || s.Game != "valheim" {
		t.Errorf("viking: %+v", s)
	}
	if s := c.Server("viking2"); s == nil || s.Address != "203.0.113.1:2460" {
		t.Errorf("viking2: %+v", s)
	}
	if s := c.Server("onset"); s == nil || s.Protocol != "a2s" || s.Address != "203.0.113.2:7776" {
		t.Errorf("onset: %+v", s)
	}

	// A discovered server has the config's settings, and the source's labels.
	s := c.DiscoveredServer(&f, netip.MustParseAddrPort("127.0.0.1:21003"))
	if s.Name != "fleet@127.0.0.1:21003" || s.Address != "127.0.0.1:21003" || s.Port != 21003 || s.Interval != 20*time.Second ||
		s.Labels["site"] != "lab" || s.Labels["discovery"] != "fleet" || len(s.Alerts) == 0 || s.Protocol != "a2s" || !strings.Contains(s.Origin, "discover fleet") {
		t.Errorf("discovered: %+v", s)
	}
	if f.Labels["discovery"] != "" {
		t.Error("DiscoveredServer changed the source's labels")
	}
}

func TestParseDiscoverProblems(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want string
	}{
		{"discover:\n  - {name: a, game: valhem}\n", `discover[0] (a).game: unknown game "valhem" (did you mean valheim?)`},
		{"discover:\n  - {name: a, game: asa}\n", `gsq cannot query Ark: Survival Ascended`},
		{"discover:\n  - {name: a, game: rust, appid: 1}\n", `give game or appid, not both`},
		{"discover:\n  - {name: a, appid: 1, every: 30s}\n", `Valve's Web API is asked at most once a minute`},
		{"discover:\n  - {name: a, master: example.org}\n", `want IP:PORT`},
		{"discover:\n  - {name: a, master: 127.0.0.1, key_env: X}\n", `applies to the Steam Web API, not to a master`},
		{"discover:\n  - {name: a, appid: 1, filter: '\\appid\\2'}\n", `names an app id already`},
		{"discover:\n  - {name: a, appid: 1, region: mars}\n", `region`},
		{"discover:\n  - {name: a, appid: 1, max_servers: 0}\n", `max_servers: must be from 1 to`},
		{"discover:\n  - {name: a, appid: 1}\n  - {name: a, appid: 2}\n", `the name "a" is taken`},
		{"discover:\n  - {appid: 1}\n", `needs a name`},
		{"discover:\n  - {name: a, apid: 1}\n", `unknown key "apid" (did you mean "appid"?)`},
		{"servers:\n  - {name: a, address: 1.2.3.4, game: valheim, protocol: ogp}\n", `give game or protocol, not both`},
		{"servers:\n  - {name: a, address: 1.2.3.4, game: squad}\n", `Epic Online Services`},
	} {
		_, err := Parse([]byte(c.in), "m.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.in, err, c.want)
		}
	}
}

// TestParseDiscoverExampleFromDocs: the discover example of
// docs/monitor-config.md reads, and means what its comments say.
func TestParseDiscoverExampleFromDocs(t *testing.T) {
	t.Parallel()
	c, err := Parse(docExample(t, "discover:"), "example")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Discover) != 2 || c.Discover[0].Filter != `\appid\240\map\de_nuke` || c.Discover[0].Every != 10*time.Minute ||
		!c.Discover[1].Steam() || c.Discover[1].Region != serverlist.RegionEurope || c.Discover[1].KeyEnv != "STEAM_API_KEY" {
		t.Errorf("%+v", c.Discover)
	}
}
