package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/sim"
	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/store"
)

// runMain is the environment variable that makes the test binary gsq
// itself: it then runs package main's main with its arguments, signals,
// exit codes and all, in a process of its own. The tests run gsq so,
// rather than building it again.
const runMain = "GSQ_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMain) == "1" {
		main() // exits
	}
	os.Exit(m.Run())
}

// gsqCommand is gsq run with args, as a process of its own.
func gsqCommand(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), runMain+"=1")
	return cmd
}

// monitorProc is a running `gsq monitor`.
type monitorProc struct {
	cmd  *exec.Cmd
	url  string      // the page, with a trailing slash
	logs chan string // stderr, line by line
	done chan error  // Wait's error, once it exits
	mu   sync.Mutex
	all  []string // every stderr line
}

var pageLine = regexp.MustCompile(`the page is at (http://\S+/) `)

// startMonitor runs gsq monitor with args and waits for its page's URL.
func startMonitor(t *testing.T, args ...string) *monitorProc {
	t.Helper()
	return startMonitorCmd(t, monitorCommand(t, args...))
}

// monitorCommand is gsq monitor with args, its page on a free loopback
// port unless args give another --listen.
func monitorCommand(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	return gsqCommand(t, append([]string{"monitor", "--listen", "127.0.0.1:0"}, args...)...)
}

// startMonitorCmd runs cmd, a gsq monitor (monitorCommand's, maybe
// wrapped), and waits for its page's URL.
func startMonitorCmd(t *testing.T, cmd *exec.Cmd) *monitorProc {
	t.Helper()
	p := &monitorProc{
		cmd:  cmd,
		logs: make(chan string, 1024),
		done: make(chan error, 1),
	}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.cmd.Process.Kill() })
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.mu.Lock()
			p.all = append(p.all, sc.Text())
			p.mu.Unlock()
			select {
			case p.logs <- sc.Text():
			default:
			}
		}
	}()
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := pageLine.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
		close(urls)
		p.done <- p.cmd.Wait()
	}()
	select {
	case u, ok := <-urls:
		if !ok {
			t.Fatalf("%s exited without a page:\n%s", strings.Join(cmd.Args, " "), p.stderr())
		}
		p.url = u
	case <-time.After(20 * time.Second):
		t.Fatalf("gsq monitor printed no page URL within 20 s:\n%s", p.stderr())
	}
	return p
}

func (p *monitorProc) stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.all, "\n")
}

// awaitLog waits for a stderr line containing s.
func (p *monitorProc) awaitLog(t *testing.T, s string) string {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case line := <-p.logs:
			if strings.Contains(line, s) {
				return line
			}
		case <-deadline:
			t.Fatalf("no log line with %q within 10 s:\n%s", s, p.stderr())
		}
	}
}

// stop sends sig and returns the exit code.
func (p *monitorProc) stop(t *testing.T, sig syscall.Signal) int {
	t.Helper()
	p.cmd.Process.Signal(sig)
	select {
	case err := <-p.done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(20 * time.Second):
		t.Fatalf("gsq monitor did not stop within 20 s of %v:\n%s", sig, p.stderr())
	}
	return -1
}

// pollEvent is a poll the monitor reported on its live stream.
type pollEvent struct {
	Server string    `json:"server"`
	Time   time.Time `json:"time"`
	Slot   time.Time `json:"slot"` // a fleet worker's poll slot
}

// stream reads the monitor's poll events into ch until the body ends.
func stream(t *testing.T, ctx context.Context, url string, ch chan<- pollEvent) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", url+"api/v1/events?kind=poll", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer resp.Body.Close()
		readPollEvents(resp.Body, func(ev pollEvent) bool {
			select {
			case ch <- ev:
				return true
			case <-ctx.Done():
				return false
			}
		})
	}()
}

// readPollEvents hands each poll event of a live stream to fn, until the
// stream ends or fn returns false.
func readPollEvents(body io.Reader, fn func(pollEvent) bool) {
	sc := bufio.NewScanner(body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev pollEvent
		if json.Unmarshal([]byte(data), &ev) == nil && ev.Server != "" && !fn(ev) {
			return
		}
	}
}

func serverNames(t *testing.T, url string) map[string]int {
	t.Helper()
	resp, err := http.Get(url + "api/v1/servers")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Servers []struct {
			Name    string
			Queries map[string]int
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, s := range body.Servers {
		out[s.Name] = s.Queries["ok"] + s.Queries["timeout"] + s.Queries["unreachable"] + s.Queries["error"]
	}
	return out
}

// TestMonitorReload sends SIGHUP to a running gsq monitor: a good config
// adds and removes servers and keeps the others' state; a bad one changes
// nothing and is logged with its problem. SIGTERM then ends it with 143.
func TestMonitorReload(t *testing.T) {
	t.Parallel()
	fleet, err := sim.StartLiveFleet(sim.LiveConfig{N: 3, Tick: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "monitor.yaml")
	config := func(names ...int) string {
		s := "interval: 1s\nservers:\n"
		for _, i := range names {
			s += fmt.Sprintf("  - {name: s%d, address: '%s'}\n", i, fleet.Addr(i))
		}
		return s
	}
	testutil.WriteFile(t, cfgPath, config(0, 1))
	p := startMonitor(t, "--config", cfgPath, "--db", filepath.Join(dir, "m.db"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	polls := make(chan pollEvent, 64)
	stream(t, ctx, p.url, polls)
	for seen := map[string]bool{}; len(seen) < 2; {
		seen[(<-polls).Server] = true
	}
	before := serverNames(t, p.url)

	testutil.WriteFile(t, cfgPath, config(1, 2))
	p.cmd.Process.Signal(syscall.SIGHUP)
	p.awaitLog(t, "reloaded: 2 servers (1 added, 1 removed, 0 changed)")
	after := serverNames(t, p.url)
	if _, ok := after["s0"]; ok || len(after) != 2 || after["s1"] < before["s1"] {
		t.Errorf("after the reload: %v (before %v); want s1, keeping its counts, and s2", after, before)
	}

	testutil.WriteFile(t, cfgPath, config(1, 2)+"intervall: 5s\n")
	p.cmd.Process.Signal(syscall.SIGHUP)
	line := p.awaitLog(t, "reload refused")
	if !strings.Contains(p.stderr(), `monitor.yaml:5:1: unknown key "intervall"`) {
		t.Errorf("the refusal does not name the problem: %s\n%s", line, p.stderr())
	}
	// Still polling s2 with the running config.
	for ev := <-polls; ev.Server != "s2"; ev = <-polls {
	}
	if got := serverNames(t, p.url); len(got) != 2 {
		t.Errorf("after a bad reload: %v", got)
	}
	if code := p.stop(t, syscall.SIGTERM); code != 143 {
		t.Errorf("exit code %d after SIGTERM, want 143:\n%s", code, p.stderr())
	}
}

// storedPolls is how many polls of server the history holds, as the
// monitor's API reads them from the store (not from its memory).
func storedPolls(t *testing.T, url, server string) int {
	t.Helper()
	var body struct {
		Day struct{ Polls int } `json:"24h"`
	}
	testutil.GetJSON(t, url+"api/v1/servers/"+server+"/uptime", "", http.StatusOK, &body)
	return body.Day.Polls
}

// TestMonitorKill9 kills gsq monitor with SIGKILL mid-poll, three times,
// restarting it each time on the same database, then stops it with
// SIGINT. Each run waits until the monitor's API reads from the store a
// poll written in that run, then kills it: every poll that was stored
// before a kill is still there after it, every poll the last run
// reported on its live stream is in the history after SIGINT (which
// writes what waits), and the database passes its integrity check.
func TestMonitorKill9(t *testing.T) {
	t.Parallel()
	const n = 40
	fleet, err := sim.StartFleetAnywhere(sim.FleetConfig{N: n})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	dir := t.TempDir()
	list := filepath.Join(dir, "list.txt")
	var lines []string
	for i := range n {
		lines = append(lines, fleet.Addr(i).String())
	}
	testutil.WriteFile(t, list, "# the fleet\n"+strings.Join(lines, "\n")+"\n")
	db := filepath.Join(dir, "m.db")

	type key struct {
		server string
		sec    int64
	}
	var mustHave []key
	stored := map[string]int{} // by server, the polls the store held before a kill
	for run := range 4 {
		p := startMonitor(t, "-f", list, "--interval", "1s", "--db", db)
		ctx, cancel := context.WithCancel(context.Background())
		polls := make(chan pollEvent, 4*n)
		stream(t, ctx, p.url, polls)
		var got []pollEvent
		first := "" // the server this run polled first
		for done := false; !done; {
			ev := testutil.Await(t, polls, fmt.Sprintf("a poll of run %d", run))
			got = append(got, ev)
			if first == "" {
				first = ev.Server
			}
			if run == 3 {
				done = len(got) >= n/2
			} else if polls := storedPolls(t, p.url, first); polls > stored[first] {
				stored[first], done = polls, true
			}
		}
		cancel()
		if run == 3 {
			if code := p.stop(t, syscall.SIGINT); code != 130 {
				t.Errorf("exit code %d after SIGINT, want 130:\n%s", code, p.stderr())
			}
			for _, ev := range got {
				mustHave = append(mustHave, key{ev.Server, ev.Time.Unix()})
			}
			break
		}
		p.stop(t, syscall.SIGKILL)
	}

	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Check(context.Background()); err != nil {
		t.Errorf("after the kills: %v", err)
	}
	have := map[key]bool{}
	polls := map[string]int{}
	err = st.EachSample(context.Background(), store.Span{}, func(s store.Sample) error {
		have[key{s.Server, s.Time.Unix()}] = true
		polls[s.Server]++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for server, n := range stored {
		if polls[server] < n {
			t.Errorf("%s: %d polls in the history, %d were stored before a kill", server, polls[server], n)
		}
	}
	missing := 0
	for _, k := range mustHave {
		if !have[k] {
			missing++
			if missing <= 5 {
				t.Errorf("poll of %s at %s reported but not in the history", k.server, time.Unix(k.sec, 0).UTC().Format(time.TimeOnly))
			}
		}
	}
	if missing > 0 || len(mustHave) < n/2 {
		t.Errorf("%d of %d polls missing", missing, len(mustHave))
	}
	// The export reads the same history.
	out, err := gsqCommand(t, "monitor", "export", "--db", db, "--format", "jsonl").Output()
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(out), "\n"); lines != len(have) {
		t.Errorf("export wrote %d lines, the store has %d samples", lines, len(have))
	}
}

// TestMonitorDemoBehindABrokenPipe runs the demo with its stdout and
// stderr read by a process that Ctrl-C ended too (issue 19, user row 8):
// writes to the pipe fail, and the monitor still stops on SIGINT with
// 130 and removes its temporary history.
func TestMonitorDemoBehindABrokenPipe(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	cmd := gsqCommand(t, "monitor", "--demo", "--demo-servers", "2", "--listen", "127.0.0.1:0")
	cmd.Env = append(cmd.Env, "TMPDIR="+tmp)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	w.Close()
	r.Close() // stderr's reader is gone
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && !pageLine.MatchString(sc.Text()) {
	}
	stdout.Close() // and so is stdout's
	dirs, _ := filepath.Glob(filepath.Join(tmp, "gsq-demo-*"))
	if len(dirs) != 1 {
		t.Fatalf("demo directories %q; want 1 while it runs", dirs)
	}
	cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 130 {
			t.Errorf("exit: %v, want status 130", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("gsq monitor --demo did not stop within 20 s of SIGINT")
	}
	if _, err := os.Stat(dirs[0]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s is left behind: %v", dirs[0], err)
	}
}

// awaitCond polls cond every 250 ms until it holds, for at most bound.
func awaitCond(t *testing.T, bound time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, bound)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
