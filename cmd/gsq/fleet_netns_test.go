// Network namespaces are Linux's.
//go:build linux

package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/testutil"
)

// The vantage test of issue 23 ("Proof") with the system's own network
// namespaces: region us is a gsq monitor in a namespace of its own,
// joined to the host by a veth pair, and loses its route to a server
// that region eu, on the host, still reaches. monitor/cluster's
// TestFleetVantages proves the same in process, with a UDP relay as the
// fault injector, where the test cannot use namespaces.
//
//	host (eu worker, its page)            namespace gsqtus0 (us worker)
//	gsqth0 10.213.0.1/30  <---- veth ---->  gsqtn0 10.213.0.2/30
//	       10.213.1.1/32: the game server   default via 10.213.0.1
//	127.0.0.1: PostgreSQL, NATS, webhooks   (relayed on 10.213.0.1)

const (
	netnsName   = "gsqtus0"
	netnsVethH  = "gsqth0" // the host's end
	netnsVethNS = "gsqtn0" // the namespace's end
	netnsHostIP = "10.213.0.1"
	netnsNSIP   = "10.213.0.2"
	// netnsServerIP is the game server's address: the host's, on its
	// end of the veth, which the namespace reaches through its default
	// route, and the drop rule (a blackhole route in the namespace) takes
	// away from region us only.
	netnsServerIP = "10.213.1.1"
	// netnsInterval is the poll interval, and the down-after span two of
	// them: a server is down after 3 failed polls, about 6 s.
	netnsInterval = 2 * time.Second
)

// ipRun runs ip with args, its output in the error.
func ipRun(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// netnsClean deletes the namespace and the host's end of the veth (and
// so the pair, and the server's address on it), and kills what still
// runs in the namespace: the leftovers of a run that crashed, or of
// this one. What does not exist is no error.
func netnsClean() {
	if out, err := exec.Command("ip", "netns", "pids", netnsName).Output(); err == nil {
		for f := range strings.FieldsSeq(string(out)) {
			if pid, err := strconv.Atoi(f); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	ipRun("netns", "del", netnsName)
	ipRun("link", "del", netnsVethH)
}

// netnsSetup builds the namespace of region us, or skips the test where
// it cannot: not root, no ip, or no right to make a namespace (a
// container without CAP_SYS_ADMIN).
func netnsSetup(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root: the in-process TestFleetVantages (monitor/cluster) proves the vantages with a UDP relay instead")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skipf("no ip (iproute2) to make network namespaces: %v", err)
	}
	netnsClean()
	if err := ipRun("netns", "add", netnsName); err != nil {
		t.Skipf("cannot make a network namespace here (%v): the in-process TestFleetVantages (monitor/cluster) proves the vantages with a UDP relay instead", err)
	}
	t.Cleanup(netnsClean)
	for _, args := range [][]string{
		{"link", "add", netnsVethH, "type", "veth", "peer", "name", netnsVethNS, "netns", netnsName},
		{"addr", "add", netnsHostIP + "/30", "dev", netnsVethH},
		{"addr", "add", netnsServerIP + "/32", "dev", netnsVethH},
		{"link", "set", netnsVethH, "up"},
		{"-n", netnsName, "link", "set", "lo", "up"},
		{"-n", netnsName, "addr", "add", netnsNSIP + "/30", "dev", netnsVethNS},
		{"-n", netnsName, "link", "set", netnsVethNS, "up"},
		{"-n", netnsName, "route", "add", "default", "via", netnsHostIP},
	} {
		if err := ipRun(args...); err != nil {
			t.Fatal(err)
		}
	}
}

// relayed is rawURL with its host:port replaced by a link on the host's
// end of the veth that relays to it: the services listen on the host's
// loopback, which the namespace does not reach.
func relayed(t *testing.T, rawURL string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = testutil.StartLink(t, netnsHostIP+":0", u.Host).Addr()
	return u.String()
}

// serverView is a server as a page's API shows it, with its vantages.
type serverView struct {
	Status   string
	Vantages []struct {
		Region string
		Status string
		PingMS *float64 `json:"ping_ms"`
	}
}

// vantages reads server from the page at url: its status, and each
// vantage's ("region status", "+ping" when it has one).
func vantages(t *testing.T, url, server string) (string, map[string]string) {
	t.Helper()
	var v serverView
	testutil.GetJSON(t, url+"api/v1/servers/"+server, "", http.StatusOK, &v)
	by := map[string]string{}
	for _, vv := range v.Vantages {
		by[vv.Region] = vv.Status
		if vv.PingMS != nil {
			by[vv.Region] += "+ping"
		}
	}
	return v.Status, by
}

// partials is the partial outages the fleet recorded for server, as the
// page's API reads them from PostgreSQL: each event's vantages.
func partials(t *testing.T, url, server string) []map[string]string {
	t.Helper()
	var body struct {
		Fleet  bool
		Events []struct {
			Kind     string
			Vantages []struct{ Region, Status string }
		}
	}
	testutil.GetJSON(t, url+"api/v1/servers/"+server+"/fleet-events", "", http.StatusOK, &body)
	if !body.Fleet {
		t.Fatal("the page's monitor is not a fleet's")
	}
	var out []map[string]string
	for _, e := range body.Events {
		if e.Kind == "partial" {
			by := map[string]string{}
			for _, v := range e.Vantages {
				by[v.Region] = v.Status
			}
			out = append(out, by)
		}
	}
	return out
}

// TestFleetVantagesNetns: a server that region us loses its route to,
// and eu still reaches, is a partial outage: recorded, shown on the
// page, and no page; when both lose it, one down alert, from whichever
// region commits it.
func TestFleetVantagesNetns(t *testing.T) {
	natsURL, dsn, eu, us, _ := fleetServices(t, "30 s")
	netnsSetup(t)

	// PostgreSQL, NATS and the webhook receiver listen on the host's
	// loopback. The namespace reaches them through links on the host's
	// end of the veth: the two regions must share the one NATS and the
	// one PostgreSQL that CI runs (a nats-server of the test's own would
	// be a second server to start, wait for and stop, and PostgreSQL needs
	// a relay anyway). The webhook goes through one for both workers,
	// since the one that wins the verdict's commit sends it.
	hook := testutil.NewReceiver(t, nil)
	hookURL := relayed(t, hook.URL)

	server := startChild(t, "serve", "--addr", netnsServerIP+":0")
	addr, ok := strings.CutPrefix(server.first, "gsq: serving on ")
	if !ok {
		t.Fatalf("gsq serve said %q first, not where it serves", server.first)
	}
	const name = "remote"
	config := testutil.WriteFile(t, filepath.Join(t.TempDir(), "monitor.yaml"), fmt.Sprintf("vantages: [%s, %s]\n", eu, us))
	common := []string{"--config", config, "--target", name + "=" + addr, "--interval", netnsInterval.String(),
		"--down-after", (2 * netnsInterval).String(), "--webhook", hookURL}
	// Both serve their page (--role all): eu's on the host's loopback, us's
	// on its end of the veth, which the test reaches.
	euProc := startMonitor(t, append(common, "--db", dsn, "--nats", natsURL, "--region", eu)...)
	usCmd := monitorCommand(t, append(common, "--db", relayed(t, dsn), "--nats", relayed(t, natsURL), "--region", us,
		"--listen", netnsNSIP+":0")...)
	usCmd.Args = append([]string{"ip", "netns", "exec", netnsName}, usCmd.Args...)
	var err error
	if usCmd.Path, err = exec.LookPath("ip"); err != nil {
		t.Fatal(err)
	}
	usProc := startMonitorCmd(t, usCmd)
	pages := map[string]*monitorProc{eu: euProc, us: usProc}
	t.Cleanup(func() {
		if t.Failed() {
			for region, p := range pages {
				t.Logf("the %s worker's log:\n%s", region, tail(p.stderr(), 30))
			}
			for _, b := range hook.Bodies() {
				t.Logf("webhook: %s", b)
			}
		}
	})
	show := func(want string, vantages map[string]string) bool {
		return vantages[eu] == "up+ping" && vantages[us] == want
	}

	// Settled: both regions see the server up, on both pages.
	start := time.Now()
	awaitCond(t, 90*time.Second, "both regions to see the server up", func() bool {
		for _, p := range pages {
			if status, by := vantages(t, p.url, name); status != "up" || !show("up+ping", by) {
				return false
			}
		}
		return true
	})
	t.Logf("both regions see %s up %v after the workers started", name, time.Since(start).Round(time.Millisecond))

	// The drop rule: region us has no route to the server any more.
	if err := ipRun("-n", netnsName, "route", "add", "blackhole", netnsServerIP+"/32"); err != nil {
		t.Fatal(err)
	}
	dropped := time.Now()
	awaitCond(t, 60*time.Second, "a partial outage recorded", func() bool {
		ps := partials(t, euProc.url, name)
		return len(ps) > 0
	})
	t.Logf("partial outage recorded %v after the drop rule", time.Since(dropped).Round(time.Millisecond))
	// Each region's worker records the partial outage it judges (eu's,
	// us's, or both): each with us down and eu up.
	for _, p := range partials(t, euProc.url, name) {
		if p[us] != "down" || p[eu] != "up" {
			t.Errorf("a partial outage recorded with %v, want %s down and %s up", p, us, eu)
		}
	}
	// Both pages show the verdict, up, and each vantage's view: us down,
	// eu up with its ping; us's too, though its own polls fail.
	for region, p := range pages {
		var status string
		var by map[string]string
		awaitCond(t, 30*time.Second, "the "+region+" page to show us down and eu up", func() bool {
			status, by = vantages(t, p.url, name)
			return show("down", by) && status == "up"
		})
		t.Logf("the %s page shows %s %s, vantages %v", region, name, status, by)
	}
	// A few intervals more: still no alert, the verdict still up.
	time.Sleep(3 * netnsInterval)
	if down, up := webhookKinds(hook, name); down+up != 0 || hook.Count() != 0 {
		t.Errorf("%d webhooks (%d down, %d up) for a server only one region of two lost", hook.Count(), down, up)
	}
	if status, by := vantages(t, euProc.url, name); status != "up" || !show("down", by) {
		t.Errorf("after %v of a partial outage the page shows %s %v", 3*netnsInterval, status, by)
	}

	// Now both lose it: the server stops. One down alert.
	server.kill(t)
	stopped := time.Now()
	awaitCond(t, 60*time.Second, "a down alert", func() bool { down, _ := webhookKinds(hook, name); return down > 0 })
	t.Logf("down alert %v after the server stopped", time.Since(stopped).Round(time.Millisecond))
	awaitCond(t, 30*time.Second, "the page to show it down from both regions", func() bool {
		status, by := vantages(t, euProc.url, name)
		return status == "down" && by[eu] == "down" && by[us] == "down"
	})
	time.Sleep(3 * netnsInterval) // a second alert would come within these
	down, up := webhookKinds(hook, name)
	if down != 1 || up != 0 || hook.Count() != 1 {
		t.Fatalf("%d webhooks, %d down and %d up, want exactly one down", hook.Count(), down, up)
	}
	// Transition 1 was the first up, which pages nobody.
	if key := hook.Request(0).Header.Get("X-Gsq-Delivery"); key != name+":2" {
		t.Errorf("X-Gsq-Delivery %q, want %s:2", key, name)
	}
	for region, p := range pages {
		if strings.Contains(p.stderr(), name+" is down (transition 2)") {
			t.Logf("region %s committed the down verdict and sent its alert", region)
		}
	}
}
