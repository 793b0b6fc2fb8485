package monitor

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/gsq-project/gsq/internal/hostport"
	"github.com/gsq-project/gsq/internal/yamlconf"
	"github.com/gsq-project/gsq/protocol"
	"github.com/gsq-project/gsq/scan"
	"github.com/gsq-project/gsq/store"
)

// Defaults of a monitor's config; docs/monitor-config.md describes each.
const (
	DefaultInterval      = 30 * time.Second
	DefaultDownAfter     = 60 * time.Second
	DefaultFailures      = 3
	DefaultGrace         = 2 * time.Minute
	DefaultListen        = "127.0.0.1:9815"
	DefaultAlertCooldown = 5 * time.Minute
	DefaultQuery         = QueryPlayers
)

// Limits on a config.
const (
	MinInterval   = time.Second
	MaxInterval   = 24 * time.Hour
	MaxServers    = 100_000
	MaxFileSize   = 32 << 20 // bytes of a config file or a target list
	maxNameLen    = 128      // bytes of a server's or webhook's name
	maxLabels     = 32
	maxLabelValue = 256
	minTokenLen   = 16
)

// DefaultProtocol is the protocol of servers that name none: the
// registry's default (package protocol), A2S.
var DefaultProtocol = protocol.Default.Name

// protocolProblem says why name is not a protocol the registry knows, or
// returns "" and the protocol's name as the registry spells it.
func protocolProblem(name string) (canonical, problem string) {
	p, err := protocol.Lookup(name)
	if err != nil {
		names := protocol.Names()
		return "", fmt.Sprintf("must be %s or %s, not %q", strings.Join(names[:len(names)-1], ", "), names[len(names)-1], name)
	}
	return p.Name, ""
}

// defaultPort is the port an address of the protocol named name takes
// when it names none; 0 when the protocol has no conventional one, so
// that an address must carry one.
func defaultPort(name string) uint16 {
	if p, err := protocol.Lookup(name); err == nil {
		return p.DefaultPort
	}
	return 0
}

// Query is what one poll asks a server.
type Query string

// The queries, each asking for more than the one before.
const (
	QueryInfo    Query = "info"    // name, map, player counts
	QueryPlayers Query = "players" // info and the player list
	QueryRules   Query = "rules"   // info, players and the server's rules (cvars)
)

// Players reports whether the query asks for the player list.
func (q Query) Players() bool { return q == QueryPlayers || q == QueryRules }

// Rules reports whether the query asks for the rules.
func (q Query) Rules() bool { return q == QueryRules }

// Secret is a string that fmt, logs and JSON never show: it prints as
// "[redacted]". Use string(s) where the value itself is needed.
type Secret string

// String hides the secret.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return "[redacted]"
}

// GoString hides the secret from %#v.
func (s Secret) GoString() string { return strconv.Quote(s.String()) }

// MarshalText hides the secret from encoders.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Config is a monitor's configuration, resolved and validated: every
// server's settings are filled in from the global ones where the server
// sets none. Build one with [Loader.Load] or [Parse]; it is not changed
// after, so a running monitor can hold it while a reload builds the next.
type Config struct {
	// Interval is how often a server is polled.
	Interval time.Duration
	// DownAfter and Failures say when a server is down: Failures
	// consecutive failed polls spanning at least DownAfter.
	DownAfter time.Duration
	Failures  int
	// Grace is how long after the monitor starts watching a server
	// failures leave it pending rather than down, if it has not answered
	// yet (a server that is still starting).
	Grace time.Duration
	// Protocol and Query are what servers use when they set none.
	Protocol string
	Query    Query
	// PlayerData is whether servers keep player names and sessions when
	// they do not say; false keeps counts only (privacy).
	PlayerData bool

	// Listen is the HTTP address of the page, API and /metrics.
	Listen string
	// DB is the history database: a file path, or a postgres:// DSN; ""
	// means the store's default path.
	DB string
	// Token, when set, guards the page, the API and /metrics; TokenFile
	// is where it was read from, if from a file.
	Token     Secret
	TokenFile string
	// PlayerMetrics adds per-player series to /metrics (off: player names
	// are personal data and unbounded cardinality).
	PlayerMetrics bool
	// GuardBadges makes the badges need the token too.
	GuardBadges bool
	// Retention is how long each level of history is kept.
	Retention store.Retention
	// TimeZone is the zone the page shows when people play in (nil: the
	// host's); read at start.
	TimeZone *time.Location

	// AlertCooldown is the least time between two alerts of one rule for
	// one server, when the rule sets none.
	AlertCooldown time.Duration
	// GroupWindow is how long an alert waits for others to go in one
	// message with it: alert_group_window (config_alerts.go).
	GroupWindow time.Duration
	Webhooks    []Webhook
	// Alerts are the rules of servers that set none.
	Alerts []Rule
	// Vantage is the vantage points of servers that set none (see
	// config_cluster.go).
	Vantage
	// Maintenance is the config's maintenance windows, and StatusPage
	// the public status page, nil when there is none (config_page.go).
	Maintenance []Window
	StatusPage  *StatusPage

	Servers []Server
	// Discover are the server lists that add servers to Servers as the
	// monitor runs (config_discover.go).
	Discover []Discovery
}

// Server is one monitored server, with its settings resolved.
type Server struct {
	// Name is the server's key: in the history, the API, alerts and
	// metrics. It is unique in a config.
	Name string
	// Address is HOST:PORT as configured, the port filled in; Host and
	// Port are its parts.
	Address string
	Host    string
	Port    uint16
	// NoPort is set when the address as configured named no port: Port
	// is then the default (the game's or the protocol's), and a protocol
	// that follows an SRV record (protocol.Protocol's SRV) follows the
	// host's at each poll.
	NoPort   bool
	Protocol string
	// Game is the catalogue's game the server was configured with
	// (game:), "" when none.
	Game     string
	Interval time.Duration
	// DownAfter and Failures are this server's down rule (see Config).
	DownAfter time.Duration
	Failures  int
	Labels    map[string]string
	Query     Query
	// PlayerData false keeps only player counts for this server: no
	// names, no sessions, no join or leave alerts.
	PlayerData bool
	Alerts     []Rule
	// Vantage is which regions of a fleet poll the server.
	Vantage

	// Origin is where the server was configured: "monitor.yaml:12",
	// "list.txt:3" or "--target".
	Origin string
}

// FollowsPlayers reports whether the server's polls ask for its player
// list and the monitor keeps their names: its player_data is on and its
// query lists players.
func (s *Server) FollowsPlayers() bool { return s.PlayerData && s.Query.Players() }

// Target is the server as the scan engine takes it: its Input is the
// address as configured, without the port it did not name, so that a
// protocol that follows an SRV record follows it.
func (s *Server) Target() scan.Target {
	t := scan.ParseTarget(0, s.Address, 0)
	if s.NoPort {
		t.Input = s.Host
	}
	return t
}

// Server returns the server of that name, or nil.
func (c *Config) Server(name string) *Server {
	for i := range c.Servers {
		if c.Servers[i].Name == name {
			return &c.Servers[i]
		}
	}
	return nil
}

// HealthPolicy is the down rule of server s, for [NewHealth].
func (c *Config) HealthPolicy(s *Server) HealthPolicy {
	return HealthPolicy{
		Failures:  s.Failures,
		DownAfter: zeroIsNone(s.DownAfter),
		Grace:     zeroIsNone(c.Grace),
	}
}

// zeroIsNone maps a config's explicit zero to the "none" of an options
// struct, where zero means the default.
func zeroIsNone(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// Default returns the config of a monitor given no file: no servers, every
// setting at its default, and alerts on down and up.
func Default() *Config {
	return &Config{
		Interval:      DefaultInterval,
		DownAfter:     DefaultDownAfter,
		Failures:      DefaultFailures,
		Grace:         DefaultGrace,
		Protocol:      DefaultProtocol,
		Query:         DefaultQuery,
		PlayerData:    true,
		Listen:        DefaultListen,
		Retention:     store.DefaultRetention,
		AlertCooldown: DefaultAlertCooldown,
		Alerts:        []Rule{{On: AlertDown}, {On: AlertUp}},
		GroupWindow:   DefaultGroupWindow,
	}
}

// Parse reads a config from YAML; source names it in messages. Problems
// come back as a *ConfigError listing each at its line. Relative paths in
// the config (token_file) are taken from the current directory; [Loader]
// takes them from the config file's directory.
func Parse(data []byte, source string) (*Config, error) {
	d := newDraft(source, ".")
	d.parse(data)
	return d.finish()
}

// draft is a config being built: read from a file, changed by flags, and
// given servers from the command line, before its servers' settings are
// resolved.
type draft struct {
	p       yamlconf.Problems
	dir     string // relative paths in the config are taken from here
	cfg     *Config
	servers []serverDraft
}

// serverDraft is a server as configured: what it sets, and what it leaves
// to the global settings.
type serverDraft struct {
	Server
	node *yaml.Node // nil when not from the file
	path string
	// source and line are where a server not from the file came from:
	// "--target", or a target list and its line.
	source string
	line   int

	setInterval, setDownAfter, setFailures, setQuery, setPData bool
	setProtocol, setAlerts                                     bool
	setVantages, setQuorum                                     bool
	gamePort                                                   uint16 // the game's query port, for an address without one
}

func newDraft(source, dir string) *draft {
	return &draft{p: yamlconf.Problems{Source: source}, dir: dir, cfg: Default()}
}

// parse reads the YAML document data into the draft.
func (d *draft) parse(data []byte) {
	if len(data) > MaxFileSize {
		d.p.At(nil, "", "larger than %d MiB", MaxFileSize>>20)
		return
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil {
		if err == io.EOF {
			return // an empty file: the defaults
		}
		d.yamlError(err, data)
		return
	}
	var next yaml.Node
	if err := dec.Decode(&next); err == nil {
		d.p.At(&next, "", "more than one YAML document (a line \"---\"); a config is one")
		return
	} else if err != io.EOF {
		d.yamlError(err, data)
		return
	}
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		if yamlconf.IsNull(root.Content[0]) {
			return
		}
		d.parseRoot(root.Content[0])
	}
}

// yamlError reports a YAML syntax error at its line. A tab in an
// indentation, which the YAML library calls "a character that cannot
// start any token" (at times without a line), is named as such.
func (d *draft) yamlError(err error, data []byte) {
	line, msg := yamlconf.SyntaxError(data, err)
	if strings.Contains(msg, "cannot start any token") {
		for i, l := range strings.Split(string(data), "\n") {
			indent := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
			if (line == 0 || line == i+1) && strings.Contains(indent, "\t") {
				d.p.At(&yaml.Node{Line: i + 1, Column: strings.IndexByte(l, '\t') + 1}, "",
					"YAML: a tab in the indentation; indent with spaces")
				return
			}
		}
	}
	d.p.At(&yaml.Node{Line: line}, "", "YAML: %s", msg)
}

// parseRoot reads the top-level mapping.
func (d *draft) parseRoot(n *yaml.Node) {
	c := d.cfg
	m := yamlconf.NewMapping(&d.p, "", n)
	if m == nil {
		return
	}
	m.Duration("interval", &c.Interval, MinInterval, MaxInterval)
	m.Duration("down_after", &c.DownAfter, 0, 7*24*time.Hour)
	m.Int("failures", &c.Failures, 1, 1000)
	m.Duration("grace", &c.Grace, 0, 7*24*time.Hour)
	d.protocol(m, &c.Protocol)
	d.query(m, &c.Query)
	m.Bool("player_data", &c.PlayerData)
	if m.Str("listen", &c.Listen) {
		d.checkListen(m.Get("listen"), "listen", c.Listen)
	}
	if m.Str("db", &c.DB) && strings.TrimSpace(c.DB) == "" && m.Has("db") {
		d.p.At(m.Get("db"), "db", "is empty; leave it out for the default path")
	}
	d.token(m)
	m.Bool("player_metrics", &c.PlayerMetrics)
	m.Bool("guard_badges", &c.GuardBadges)
	d.retention(m)
	d.timeZone(m)
	m.Duration("alert_cooldown", &c.AlertCooldown, 0, 7*24*time.Hour)
	d.alertDelivery(m)
	m.List("webhooks", func(path string, item *yaml.Node) {
		if w, ok := d.webhook(path, item); ok {
			c.Webhooks = append(c.Webhooks, w)
		}
	})
	if m.Has("alerts") {
		c.Alerts = d.rules(m, "alerts")
	}
	d.vantage(m, &c.Vantage)
	d.pageSettings(m) // config_page.go
	m.List("discover", func(path string, item *yaml.Node) { d.discover(path, item) })
	tooMany := false
	m.List("servers", func(path string, item *yaml.Node) {
		if len(d.servers) < MaxServers {
			d.server(path, item)
		} else if !tooMany {
			tooMany = true
			d.p.At(item, path, "more than %d servers", MaxServers)
		}
	})
	// Top-level keys starting with "x-" are the user's (a place for YAML
	// anchors), as in Docker Compose files.
	for _, k := range m.Keys {
		if strings.HasPrefix(k.Value, "x-") {
			m.Get(k.Value)
		}
	}
	m.Done()
}

func (d *draft) protocol(m *yamlconf.Mapping, dst *string) bool {
	var s string
	if !m.Str("protocol", &s) || !m.Has("protocol") {
		return false
	}
	name, problem := protocolProblem(s)
	if problem != "" {
		d.p.At(m.Get("protocol"), m.Sub("protocol"), "%s", problem)
		return false
	}
	*dst = name
	return true
}

func (d *draft) query(m *yamlconf.Mapping, dst *Query) bool {
	var s string
	if !m.Str("query", &s) || !m.Has("query") {
		return false
	}
	switch q := Query(strings.ToLower(s)); q {
	case QueryInfo, QueryPlayers, QueryRules:
		*dst = q
		return true
	}
	d.p.At(m.Get("query"), m.Sub("query"), "must be info, players or rules, not %q", s)
	return false
}

func (d *draft) checkListen(n *yaml.Node, path, addr string) {
	if msg := listenProblem(addr); msg != "" {
		d.p.At(n, path, "%s", msg)
	}
}

// listenProblem says what is wrong with an HTTP listen address, or "".
func listenProblem(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Sprintf("%q is not HOST:PORT (for example 127.0.0.1:9815, or :9815 for every interface)", addr)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Sprintf("%q: the port must be a number up to 65535", addr)
	}
	if strings.ContainsAny(host, " /") {
		return fmt.Sprintf("%q: bad host %q", addr, host)
	}
	return ""
}

// token reads token or token_file.
func (d *draft) token(m *yamlconf.Mapping) {
	c := d.cfg
	var tok, file string
	m.Str("token", &tok)
	m.Str("token_file", &file)
	switch {
	case m.Has("token") && m.Has("token_file"):
		d.p.At(m.Get("token_file"), "token_file", "give token or token_file, not both")
		return
	case m.Has("token_file") && file != "":
		c.TokenFile = file
		path := file
		if !filepath.IsAbs(path) {
			path = filepath.Join(d.dir, path)
		}
		b, err := readBounded(path, 64<<10)
		if err != nil {
			d.p.At(m.Get("token_file"), "token_file", "%v", err)
			return
		}
		tok = strings.TrimSpace(string(b))
		if tok == "" {
			d.p.At(m.Get("token_file"), "token_file", "%s is empty", file)
			return
		}
	case !m.Has("token"):
		return
	}
	if msg := tokenProblem(tok); msg != "" {
		d.p.At(m.Get("token"), "token", "%s", msg)
		if m.Has("token_file") {
			d.p.List[len(d.p.List)-1].Path = "token_file"
		}
		return
	}
	c.Token = Secret(tok)
}

func tokenProblem(tok string) string {
	switch {
	case len(tok) < minTokenLen:
		return fmt.Sprintf("too short (%d characters): use at least %d, such as the output of `openssl rand -hex 16`", len(tok), minTokenLen)
	case strings.ContainsFunc(tok, func(r rune) bool { return r <= ' ' || r == 0x7f }):
		return "must not contain spaces or control characters"
	}
	return ""
}

// readBounded reads a file of at most limit bytes.
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, limit)
	}
	return b, nil
}

// retention reads the retention of each level; "forever" keeps a level
// for good, except raw samples, which must expire.
func (d *draft) retention(m *yamlconf.Mapping) {
	n := m.Get("retention")
	if n == nil || yamlconf.IsNull(n) {
		return
	}
	r := yamlconf.NewMapping(&d.p, "retention", n)
	if r == nil {
		return
	}
	levels := []struct {
		key string
		dst *time.Duration
	}{
		{"raw", &d.cfg.Retention.Raw},
		{"minute", &d.cfg.Retention.Minute},
		{"hour", &d.cfg.Retention.Hour},
		{"day", &d.cfg.Retention.Day},
	}
	for _, l := range levels {
		v := r.Get(l.key)
		if v == nil {
			continue
		}
		if s := yamlconf.Resolve(v); s.Kind == yaml.ScalarNode && strings.EqualFold(s.Value, "forever") {
			if l.key == "raw" {
				d.p.At(v, r.Sub(l.key), "raw samples cannot be kept forever (the database would grow without end); the rollups keep the long view")
				continue
			}
			*l.dst = 0
			continue
		}
		dur, ok := yamlconf.DurationValue(&d.p, r.Sub(l.key), v)
		if !ok {
			continue
		}
		if dur < time.Hour {
			d.p.At(v, r.Sub(l.key), "must be at least 1h, or forever")
			continue
		}
		*l.dst = dur
	}
	r.Done()
}

// server reads one entry of servers.
func (d *draft) server(path string, n *yaml.Node) {
	m := yamlconf.NewMapping(&d.p, path, n)
	if m == nil {
		return
	}
	s := serverDraft{node: n, path: path}
	s.Origin = fmt.Sprintf("%s:%d", d.p.Source, n.Line)
	if d.p.Source == "" {
		s.Origin = fmt.Sprintf("line %d", n.Line)
	}
	if m.Str("name", &s.Name) && m.Has("name") {
		m.Path = fmt.Sprintf("%s (%s)", path, s.Name)
		s.path = m.Path
	} else if !m.Has("name") {
		d.p.At(n, path, "needs a name")
	}
	if m.Str("address", &s.Address) && !m.Has("address") {
		d.p.At(n, m.Path, "needs an address (HOST or HOST:PORT)")
	}
	s.setProtocol = d.protocol(m, &s.Protocol)
	m.Str("game", &s.Game)
	d.gameServer(&s, m)
	s.setInterval = m.Has("interval") && m.Duration("interval", &s.Interval, MinInterval, MaxInterval)
	s.setDownAfter = m.Has("down_after") && m.Duration("down_after", &s.DownAfter, 0, 7*24*time.Hour)
	s.setFailures = m.Has("failures") && m.Int("failures", &s.Failures, 1, 1000)
	s.setQuery = d.query(m, &s.Query)
	s.setPData = m.Has("player_data") && m.Bool("player_data", &s.PlayerData)
	if m.StringMap("labels", &s.Labels) {
		d.checkLabels(m, s.Labels)
	}
	if m.Has("alerts") {
		s.setAlerts = true
		s.Alerts = d.rules(m, "alerts")
	}
	s.setVantages, s.setQuorum = d.vantage(m, &s.Vantage)
	m.Done()
	d.servers = append(d.servers, s)
}

var labelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

func (d *draft) checkLabels(m *yamlconf.Mapping, labels map[string]string) {
	n := m.Get("labels")
	if len(labels) > maxLabels {
		d.p.At(n, m.Sub("labels"), "more than %d labels", maxLabels)
	}
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		v := labels[k]
		switch {
		case !labelName.MatchString(k) || strings.HasPrefix(k, "__"):
			d.p.At(n, m.Sub("labels"), "%q is not a label name: use letters, digits and _, not starting with a digit or __", k)
		case len(v) > maxLabelValue || !utf8.ValidString(v):
			d.p.At(n, m.Sub("labels."+k), "must be UTF-8 text of at most %d bytes", maxLabelValue)
		}
	}
}

// nameProblem says what is wrong with a server's name, or "".
func nameProblem(name string) string {
	switch {
	case name == "":
		return "the name is empty"
	case len(name) > maxNameLen:
		return fmt.Sprintf("the name is longer than %d bytes", maxNameLen)
	case !utf8.ValidString(name):
		return "the name is not UTF-8 text"
	case strings.TrimSpace(name) != name:
		return fmt.Sprintf("the name %q starts or ends with a space", name)
	case strings.ContainsRune(name, '/'):
		return fmt.Sprintf("the name %q contains a /, which the web page's URLs cannot take", name)
	case name == "." || name == "..":
		return fmt.Sprintf("the name %q is a path step, which the web page's URLs cannot take: a browser resolves /s/%s to /s/ or /", name, name)
	case strings.ContainsFunc(name, unicode.IsControl):
		return fmt.Sprintf("the name %q contains a control character", name)
	}
	return ""
}

// parseAddress checks HOST[:PORT] for protocol, filling in port, or
// the protocol's when port is 0.
func parseAddress(addr, protocol string, port uint16) (scan.Target, error) {
	if port == 0 {
		port = defaultPort(protocol)
	}
	t := scan.ParseTarget(0, addr, port)
	if t.Err == nil {
		return t, nil
	}
	msg := targetReason(t)
	if defaultPort(protocol) == 0 && strings.HasSuffix(msg, "has no port") {
		msg += fmt.Sprintf(" (%s has no conventional port: give the game's query port)", strings.ToUpper(protocol))
	}
	return t, errors.New(msg)
}

// targetReason is why a target could not be parsed, without the scan
// package's prefix and line number, which a config reports its own way.
func targetReason(t scan.Target) string {
	msg := t.Err.Error()
	prefix := fmt.Sprintf("line %d: ", t.Line)
	if i := strings.Index(msg, prefix); i >= 0 {
		return msg[i+len(prefix):]
	}
	return strings.TrimPrefix(msg, scan.ErrBadTarget.Error()+": ")
}

// finish resolves every server's settings from the global ones, checks
// what can only be checked on the whole config, and returns the config or
// every problem found.
func (d *draft) finish() (*Config, error) {
	c := d.cfg
	for i := range c.Alerts {
		c.Alerts[i].resolveCooldown(c.AlertCooldown)
	}
	d.finishDiscovery()
	d.checkWebhookRefs(c.Alerts)
	names := make(map[string]*serverDraft, len(d.servers))
	addrs := make(map[string]*serverDraft, len(d.servers))
	c.Servers = make([]Server, 0, len(d.servers))
	for i := range d.servers {
		s := &d.servers[i]
		inherit(&s.Protocol, c.Protocol, s.setProtocol)
		inherit(&s.Interval, c.Interval, s.setInterval)
		inherit(&s.DownAfter, c.DownAfter, s.setDownAfter)
		inherit(&s.Failures, c.Failures, s.setFailures)
		inherit(&s.Query, c.Query, s.setQuery)
		inherit(&s.PlayerData, c.PlayerData, s.setPData)
		inherit(&s.Vantages, c.Vantages, s.setVantages)
		inherit(&s.Quorum, c.Quorum, s.setQuorum)
		bad := false
		if msg := nameProblem(s.Name); msg != "" && s.Name != "" {
			d.serverProblem(s, "name", "%s", msg)
			bad = true
		} else if prev, dup := names[s.Name]; dup {
			d.serverProblem(s, "name", "the name %q is taken by the server at %s", s.Name, prev.Origin)
			bad = true
		}
		if s.Address != "" && !bad {
			t, err := parseAddress(s.Address, s.Protocol, s.gamePort)
			if err != nil {
				d.serverProblem(s, "address", "%v", err)
				bad = true
			} else {
				s.Host, s.Port, s.Address = t.Host, t.Port, t.String()
				_, noPort := hostport.Parse(t.Input, 0)
				s.NoPort = errors.Is(noPort, hostport.ErrNoPort)
				key := s.Protocol + " " + strings.ToLower(s.Address)
				if prev, dup := addrs[key]; dup {
					d.serverProblem(s, "address", "%s over %s is already monitored as %q (%s)", s.Address, s.Protocol, prev.Name, prev.Origin)
					bad = true
				} else {
					addrs[key] = s
				}
			}
		}
		d.resolveAlerts(s)
		if s.Name == "" || s.Address == "" || bad {
			continue
		}
		names[s.Name] = s
		c.Servers = append(c.Servers, s.Server)
	}
	if err := d.p.Err("monitor: config"); err != nil {
		return nil, err
	}
	return c, nil
}

// inherit gives a server the global setting when it set none itself.
func inherit[T any](dst *T, global T, set bool) {
	if !set {
		*dst = global
	}
}

// serverProblem reports a problem with a server, at its entry in the
// config file or at the flag or list line it came from.
func (d *draft) serverProblem(s *serverDraft, key, format string, args ...any) {
	if s.node != nil {
		n := s.node
		if m := mappingValue(s.node, key); m != nil {
			n = m
		}
		d.p.At(n, yamlconf.JoinPath(s.path, key), format, args...)
		return
	}
	d.p.AtLine(s.source, s.line, "%s: %s", s.Name, fmt.Sprintf(format, args...))
}

// mappingValue returns the value of key in the mapping n, or nil.
func mappingValue(n *yaml.Node, key string) *yaml.Node {
	n = yamlconf.Resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// resolveAlerts gives a server the global rules when it sets none, and
// checks that its rules can work: join and leave alerts need player
// names. A global join or leave rule does not apply to a server that
// keeps no player names; one the server sets itself is an error there.
func (d *draft) resolveAlerts(s *serverDraft) {
	if !s.setAlerts {
		s.Alerts = d.cfg.defaultAlerts(&s.Server)
		return
	}
	for i := range s.Alerts {
		s.Alerts[i].resolveCooldown(d.cfg.AlertCooldown)
	}
	for _, r := range s.Alerts {
		if !r.needsPlayers() {
			continue
		}
		switch {
		case !s.PlayerData:
			d.p.At(r.node, r.path, "a %s alert needs player names, and this server's player_data is false", r.On)
		case !s.Query.Players():
			d.p.At(r.node, r.path, "a %s alert needs the player list: set query to players or rules", r.On)
		}
	}
	d.checkWebhookRefs(s.Alerts)
}

// defaultAlerts are the config's rules for a server that sets none: those
// it can follow.
func (c *Config) defaultAlerts(s *Server) []Rule {
	if s.FollowsPlayers() {
		return c.Alerts // shared, and never changed after
	}
	rules := make([]Rule, 0, len(c.Alerts))
	for _, r := range c.Alerts {
		if !r.needsPlayers() {
			rules = append(rules, r)
		}
	}
	return rules
}

// checkWebhookRefs reports rules that name webhooks the config lacks.
func (d *draft) checkWebhookRefs(rules []Rule) {
	for _, r := range rules {
		for _, name := range r.Webhooks {
			found := false
			for _, w := range d.cfg.Webhooks {
				found = found || w.Name == name
			}
			if !found {
				d.p.At(r.node, r.path+".webhooks", "names the webhook %q, which is not in webhooks", name)
			}
		}
	}
}
