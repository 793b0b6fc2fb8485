package monitor

import (
	"fmt"
	"regexp"
	"time"

	"github.com/gsq-project/gsq/internal/yamlconf"
)

// Vantage says which regions of a fleet of monitors (package
// monitor/cluster) poll a server, and how many of them must agree. A
// server is down only when Quorum of its vantage points see it down, and
// up again only when Quorum see it up; a region that falls silent counts
// as unknown, never as down. The config keys are `vantages` and
// `quorum`, at the top level (every server's default) and per server.
// One process alone is its own only vantage point.
type Vantage struct {
	// Vantages are the regions that poll the server; empty means every
	// region that has workers.
	Vantages []string
	// Quorum is how many vantage points must agree; 0 means a majority.
	Quorum int
}

// StatusUnknown is a vantage point's view of a server it has no fresh
// observation of: its region polls nothing now, or not this server.
const StatusUnknown Status = "unknown"

// VantageView is one vantage point's view of a server: its region, what
// its last fresh observation said (up, down, or unknown when it has none),
// when, and the ping of an up one.
type VantageView struct {
	Region string
	Status Status // StatusUp, StatusDown, or StatusUnknown
	At     time.Time
	Ping   time.Duration
}

// QuorumOf is the quorum of a server polled from n vantage points.
func (v Vantage) QuorumOf(n int) int {
	if v.Quorum > 0 {
		return min(v.Quorum, max(n, 1))
	}
	return n/2 + 1
}

// MaxRegions bounds the regions of a fleet.
const MaxRegions = 32

var regionName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

// CheckRegion reports whether name is usable as a region: 1 to 32
// letters, digits, '-' or '_' (it is part of NATS bucket names).
func CheckRegion(name string) error {
	if !regionName.MatchString(name) {
		return fmt.Errorf("region %q: want 1 to 32 letters, digits, '-' or '_'", name)
	}
	return nil
}

// vantage reads the keys vantages and quorum of m into v, and reports
// whether m sets each.
func (d *draft) vantage(m *yamlconf.Mapping, v *Vantage) (setVantages, setQuorum bool) {
	if m.Has("vantages") {
		setVantages = m.StringList("vantages", &v.Vantages)
	}
	if m.Has("quorum") {
		setQuorum = m.Int("quorum", &v.Quorum, 1, MaxRegions)
	}
	for _, p := range v.problems() {
		key := "vantages"
		if p.quorum {
			key = "quorum"
		}
		d.p.At(m.Get(key), m.Path+"."+key, "%s", p.msg)
	}
	return setVantages, setQuorum
}

type vantageProblem struct {
	quorum bool // of the quorum, not of the vantages
	msg    string
}

// problems checks the regions' names, and the quorum against them.
func (v Vantage) problems() []vantageProblem {
	var out []vantageProblem
	seen := map[string]bool{}
	for _, r := range v.Vantages {
		if err := CheckRegion(r); err != nil {
			out = append(out, vantageProblem{msg: err.Error()})
		} else if seen[r] {
			out = append(out, vantageProblem{msg: fmt.Sprintf("region %q is listed twice", r)})
		}
		seen[r] = true
	}
	if len(v.Vantages) > MaxRegions {
		out = append(out, vantageProblem{msg: fmt.Sprintf("more than %d regions", MaxRegions)})
	}
	if v.Quorum < 0 || v.Quorum > MaxRegions {
		out = append(out, vantageProblem{quorum: true, msg: fmt.Sprintf("is %d, want 1 to %d", v.Quorum, MaxRegions)})
	} else if len(v.Vantages) > 0 && v.Quorum > len(v.Vantages) {
		out = append(out, vantageProblem{quorum: true, msg: fmt.Sprintf("is %d, more than the %d vantages", v.Quorum, len(v.Vantages))})
	}
	return out
}

// SharedTarget is a server of a fleet's target list, which lives in
// PostgreSQL (`gsq monitor targets add`): its name, address, protocol
// ("" for the config's) and vantage points. The config's global settings
// apply to it as to a --target server.
type SharedTarget struct {
	Name     string
	Address  string
	Protocol string
	Vantage
}

// addShared adds a server of the fleet's target list; its problems are
// reported as the target list's.
func addShared(d *draft, t SharedTarget) {
	origin := "targets " + t.Name
	s := serverDraft{Server: Server{Name: t.Name, Address: t.Address, Origin: origin}, source: "targets"}
	if t.Protocol != "" {
		if name, problem := protocolProblem(t.Protocol); problem != "" {
			d.p.AtLine(origin, 0, "%s", problem)
		} else {
			s.Protocol, s.setProtocol = name, true
		}
	}
	s.Vantage = t.Vantage
	s.setVantages, s.setQuorum = len(t.Vantages) > 0, t.Quorum > 0
	for _, p := range t.problems() {
		key := "vantages"
		if p.quorum {
			key = "quorum"
		}
		d.p.AtLine(origin, 0, "%s %s", key, p.msg)
	}
	d.servers = append(d.servers, s)
}
