package web

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/gsq-project/gsq/monitor"
)

// series is one scraped series as Prometheus stores it: its name and its
// labels, the job's among them.
type series struct {
	name   string
	labels map[string]string
}

// stored turns a scrape's families into series under job.
func stored(fams map[string]*dto.MetricFamily, job string, extra map[string]string) []series {
	var out []series
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			l := map[string]string{"job": job}
			for k, v := range extra {
				l[k] = v
			}
			for _, lp := range m.GetLabel() {
				l[lp.GetName()] = lp.GetValue()
			}
			out = append(out, series{name, l})
		}
	}
	return out
}

// selectSeries is PromQL's instant selector name{k="v",...}, equality
// matchers only.
func selectSeries(all []series, name, matchers string) []series {
	want := map[string]string{}
	for _, m := range regexp.MustCompile(`(\w+)="([^"]*)"`).FindAllStringSubmatch(matchers, -1) {
		want[m[1]] = m[2]
	}
	var out []series
	for _, s := range all {
		ok := s.name == name
		for k, v := range want {
			ok = ok && s.labels[k] == v
		}
		if ok {
			out = append(out, s)
		}
	}
	return out
}

// joinProblem is what Prometheus says of `left * on(server)
// group_left(...) right`, or "": the right side must hold one series per
// server, and every left series must find its server there.
func joinProblem(left, right []series) string {
	one := map[string]int{}
	for _, s := range right {
		one[s.labels["server"]]++
	}
	for server, n := range one {
		if n > 1 {
			return fmt.Sprintf("many-to-many matching not allowed: %d info series for server=%q", n, server)
		}
	}
	for _, s := range left {
		if one[s.labels["server"]] != 1 {
			return fmt.Sprintf("no info series for server=%q", s.labels["server"])
		}
	}
	return ""
}

// TestReadmeGrafanaJoinBesideProbeJob stores what Prometheus scrapes with
// the README's two jobs, the monitor's /metrics (job gsq) and /probe of
// two targets (job gameservers), and evaluates the README's join on it
// (issue 19, user row 8): without {job="gsq"} the probes' series, which
// have no server label, break the join.
func TestReadmeGrafanaJoinBesideProbeJob(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("`(gameserver_players\\S*) \\* on\\(server\\) group_left\\(map, name\\) (gameserver_info\\S*)`").FindSubmatch(readme)
	if m == nil {
		t.Fatal("the README has no join of gameserver_players on gameserver_info")
	}
	leftSel, rightSel := string(m[1]), string(m[2])

	live := newTestLive(upState("alpha", 3, 16, "de_dust2"), upState("beta", 5, 16, "de_nuke"))
	live.probeFn = func(_ context.Context, target, _ string) (monitor.ServerState, error) {
		return upState(target, 1, 8, "cs_office"), nil
	}
	srv, _ := newTestServer(t, newTestStore(t), live, Options{})
	all := stored(scrape(t, srv.URL+"/metrics", ""), "gsq", nil)
	for _, target := range []string{"203.0.113.7:27015", "203.0.113.8:27016"} {
		all = append(all, stored(scrape(t, probeURL(srv.URL, target, "a2s"), ""), "gameservers", map[string]string{"instance": target})...)
	}
	sel := func(s string) []series {
		name, matchers, _ := strings.Cut(s, "{")
		return selectSeries(all, name, matchers)
	}
	left, right := sel(leftSel), sel(rightSel)
	if p := joinProblem(left, right); p != "" || len(left) != 2 {
		t.Errorf("the README's join `%s * on(server) group_left(map, name) %s`: %s (%d series)", leftSel, rightSel, p, len(left))
	}
	// The join without the job: what the README said before.
	if p := joinProblem(sel("gameserver_players"), sel("gameserver_info")); !strings.Contains(p, "many-to-many") {
		t.Errorf("the join across both jobs: %q, want many-to-many (else this test proves nothing)", p)
	}
}
