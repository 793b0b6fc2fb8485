package monitor

import (
	"fmt"
	"maps"
	"net/netip"
	"path/filepath"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/gsq-project/gsq/catalog"
	"github.com/gsq-project/gsq/internal/hostport"
	"github.com/gsq-project/gsq/internal/yamlconf"
	"github.com/gsq-project/gsq/master"
	"github.com/gsq-project/gsq/protocol"
	"github.com/gsq-project/gsq/serverlist"
)

// This file reads the config's discover: section, the sources that keep
// the monitor's server list (see Roster), and a server's game: key (the
// catalogue's game in place of a protocol and a port).

// Defaults and limits of a discover: entry.
const (
	DefaultDiscoverEvery = 10 * time.Minute
	MinDiscoverEvery     = time.Second
	// MinDiscoverEverySteam is the least time between two listings of
	// Valve's Web API: its terms ask for paced requests.
	MinDiscoverEverySteam = time.Minute
	DefaultRetireAfter    = 3
	DefaultDiscoverMax    = 1000
	// DefaultSteamKeyEnv is the environment variable that holds the Web
	// API key when an entry names none.
	DefaultSteamKeyEnv = "STEAM_API_KEY"
)

// Discovery is one entry of discover:, resolved: a server list the
// monitor asks again every Every, whose servers it adds and retires.
type Discovery struct {
	// Name names the source; its servers are named "NAME@HOST:PORT".
	Name string
	// Master is the master server's address (the master server
	// protocol, UDP); invalid when the source is the Steam Web API.
	Master netip.AddrPort
	// APIURL is the Web API's base URL ("" for Valve's); KeyEnv the
	// environment variable holding its key, Key the key read from
	// key_file, if one was given.
	APIURL string
	KeyEnv string
	Key    Secret
	// Game is the catalogue's game, if given; Filter the filter asked,
	// the game's or appid's \appid\ in front; Region the region.
	Game   string
	Filter string
	Region serverlist.Region
	// Every is how often the list is asked again; RetireAfter how many
	// listings in a row a server must be missing from to be retired;
	// MaxServers the most servers the source adds.
	Every       time.Duration
	RetireAfter int
	MaxServers  int
	// Protocol is what its servers are polled with: the game's, or the
	// config's.
	Protocol string
	Labels   map[string]string
	// Origin is where the entry is: "monitor.yaml:12".
	Origin string
}

// Steam reports a source listed by the Steam Web API.
func (s *Discovery) Steam() bool { return !s.Master.IsValid() }

// ServerName is the name of the server the source lists at addr.
func (s *Discovery) ServerName(addr netip.AddrPort) string { return s.Name + "@" + addr.String() }

// discover reads one entry of discover:.
func (d *draft) discover(path string, n *yaml.Node) {
	m := yamlconf.NewMapping(&d.p, path, n)
	if m == nil {
		return
	}
	c := d.cfg
	s := Discovery{Every: DefaultDiscoverEvery, RetireAfter: DefaultRetireAfter, MaxServers: DefaultDiscoverMax, Region: serverlist.RegionWorld}
	s.Origin = fmt.Sprintf("%s:%d", d.p.Source, n.Line)
	if m.Str("name", &s.Name) && m.Has("name") {
		m.Path = fmt.Sprintf("%s (%s)", path, s.Name)
		if msg := nameProblem(s.Name); msg != "" {
			d.p.At(m.Get("name"), m.Sub("name"), "%s", msg)
		}
		for _, o := range c.Discover {
			if o.Name == s.Name {
				d.p.At(m.Get("name"), m.Sub("name"), "the name %q is taken by the discover entry at %s", s.Name, o.Origin)
			}
		}
	} else if !m.Has("name") {
		d.p.At(n, path, "needs a name")
	}
	var masterAddr, region, filter, keyFile string
	var appID int64
	m.Str("master", &masterAddr)
	m.Str("api_url", &s.APIURL)
	m.Str("key_env", &s.KeyEnv)
	m.Str("key_file", &keyFile)
	m.Str("game", &s.Game)
	m.Int64("appid", &appID, 1, 1<<32-1)
	m.Str("filter", &filter)
	m.Str("region", &region)
	m.Duration("every", &s.Every, MinDiscoverEvery, MaxInterval)
	m.Int("retire_after", &s.RetireAfter, 1, 1000)
	m.Int("max_servers", &s.MaxServers, 1, MaxServers)
	protocolSet := d.protocol(m, &s.Protocol)
	if m.StringMap("labels", &s.Labels) {
		d.checkLabels(m, s.Labels)
	}
	m.Done()

	if m.Has("master") {
		hp, err := hostport.Parse(masterAddr, master.DefaultPort)
		if err != nil || !hp.Addr.IsValid() || !hp.Addr.Addr().Unmap().Is4() {
			d.p.At(m.Get("master"), m.Sub("master"), "want IP:PORT, an IPv4 address (the master server protocol is IPv4 only)")
		} else {
			s.Master = netip.AddrPortFrom(hp.Addr.Addr().Unmap(), hp.Port)
		}
		for _, k := range []string{"api_url", "key_env", "key_file"} {
			if m.Has(k) {
				d.p.At(m.Get(k), m.Sub(k), "applies to the Steam Web API, not to a master")
			}
		}
	}
	if s.APIURL != "" && !strings.HasPrefix(s.APIURL, "http://") && !strings.HasPrefix(s.APIURL, "https://") {
		d.p.At(m.Get("api_url"), m.Sub("api_url"), "want an http:// or https:// URL")
	}
	if s.Steam() && s.APIURL == "" && s.Every < MinDiscoverEverySteam {
		d.p.At(m.Get("every"), m.Sub("every"), "Valve's Web API is asked at most once a minute (a shorter interval is for a mirror or a local fake, with api_url)")
	}
	if keyFile != "" {
		if !filepath.IsAbs(keyFile) {
			keyFile = filepath.Join(d.dir, keyFile)
		}
		b, err := readBounded(keyFile, 4<<10)
		if err != nil {
			d.p.At(m.Get("key_file"), m.Sub("key_file"), "%v", err)
		}
		s.Key = Secret(strings.TrimSpace(string(b)))
	}
	if s.KeyEnv == "" {
		s.KeyEnv = DefaultSteamKeyEnv
	}
	if m.Has("region") {
		r, err := serverlist.ParseRegion(region)
		if err != nil {
			d.p.At(m.Get("region"), m.Sub("region"), "%v", err)
		}
		s.Region = r
	}

	flt, err := serverlist.Parse(filter)
	if err == nil {
		err = flt.Check()
	}
	if err != nil {
		d.p.At(m.Get("filter"), m.Sub("filter"), "%v", err)
	}
	var app uint32
	switch {
	case m.Has("game") && m.Has("appid"):
		d.p.At(m.Get("appid"), m.Sub("appid"), "give game or appid, not both")
	case m.Has("game"):
		g, ep, problem := gameProblem(s.Game)
		switch {
		case problem != "":
			d.p.At(m.Get("game"), m.Sub("game"), "%s", problem)
		case len(g.AppIDs) == 0:
			d.p.At(m.Get("game"), m.Sub("game"), "gsq does not know the Steam app id of %s: give appid", g.Name)
		default:
			s.Game, app = g.ID, g.AppIDs[0]
			if !protocolSet {
				s.Protocol, protocolSet = ep.Protocol, true
			}
		}
	case appID != 0:
		app = uint32(appID)
	}
	if app != 0 {
		var ok bool
		if flt, ok = flt.ForApp(app); !ok {
			d.p.At(m.Get("filter"), m.Sub("filter"), "names an app id already; drop game or appid")
		}
	}
	s.Filter = flt.String()
	if !protocolSet {
		s.Protocol = "" // the config's, once read (finishDiscovery)
	}
	c.Discover = append(c.Discover, s)
}

// gameProblem looks up a game for the config: the game, the endpoint
// gsq queries it with (the first whose protocol this build speaks), or
// what is wrong.
func gameProblem(name string) (*catalog.Game, catalog.Endpoint, string) {
	g, err := catalog.Lookup(name)
	if err != nil {
		return nil, catalog.Endpoint{}, strings.TrimPrefix(err.Error(), "catalog: ")
	}
	if g.Unqueryable != "" {
		return nil, catalog.Endpoint{}, "gsq cannot query " + g.Name + ": " + g.Unqueryable
	}
	for _, ep := range g.Query {
		if _, err := protocol.Lookup(ep.Protocol); err == nil {
			return g, ep, ""
		}
	}
	return nil, catalog.Endpoint{}, fmt.Sprintf("%s is queried with a protocol this build of gsq does not speak yet", g.Name)
}

// gameServer applies a server's game: key: its protocol, unless the
// server names one, and the port of an address without one.
func (d *draft) gameServer(s *serverDraft, m *yamlconf.Mapping) {
	if !m.Has("game") {
		return
	}
	g, ep, problem := gameProblem(s.Game)
	if problem != "" {
		d.p.At(m.Get("game"), m.Sub("game"), "%s", problem)
		return
	}
	s.Game = g.ID
	if s.setProtocol {
		d.p.At(m.Get("protocol"), m.Sub("protocol"), "give game or protocol, not both: %s is queried with %s", g.Name, ep.Protocol)
		return
	}
	s.Protocol, s.setProtocol = ep.Protocol, true
	if port, ok := ep.QueryPort(g, 0); ok {
		s.gamePort = port
	}
}

// finishDiscovery gives every discover: entry the config's protocol when
// it named none.
func (d *draft) finishDiscovery() {
	for i := range d.cfg.Discover {
		if d.cfg.Discover[i].Protocol == "" {
			d.cfg.Discover[i].Protocol = d.cfg.Protocol
		}
	}
}

// DiscoveredServer is the server src lists at addr, with the config's
// settings, as a server entry that sets none of its own would have them,
// and the labels of src and discovery=NAME.
func (c *Config) DiscoveredServer(src *Discovery, addr netip.AddrPort) Server {
	s := Server{
		Name: src.ServerName(addr), Address: addr.String(), Host: addr.Addr().String(), Port: addr.Port(),
		Protocol: src.Protocol, Game: src.Game, Interval: c.Interval, DownAfter: c.DownAfter, Failures: c.Failures,
		Query: c.Query, PlayerData: c.PlayerData, Origin: src.Origin + " (discover " + src.Name + ")",
	}
	s.Labels = maps.Clone(src.Labels)
	if s.Labels == nil {
		s.Labels = map[string]string{}
	}
	s.Labels["discovery"] = src.Name
	s.Alerts = c.defaultAlerts(&s)
	return s
}
