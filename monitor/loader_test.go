package monitor

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/testutil"
)

func TestLoaderQuickStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	list := testutil.WriteFile(t, filepath.Join(dir, "list.txt"), "# fleet\n127.0.0.1:27015\n\n127.0.0.1:27016  # second\n[::1]:27017\nexample.com\n")
	l := &Loader{
		Targets:  []string{"lobby=127.0.0.1:27100", "127.0.0.1:27101"},
		Lists:    []string{list},
		Interval: 10 * time.Second,
		Webhooks: []string{"https://hooks.slack.com/services/T/B/X"},
	}
	c, err := l.Load()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range c.Servers {
		names = append(names, s.Name)
		if s.Interval != 10*time.Second || s.Protocol != "a2s" || len(s.Alerts) != 2 {
			t.Errorf("%s = %+v", s.Name, s)
		}
	}
	want := []string{"lobby", "127.0.0.1:27101", "127.0.0.1:27015", "127.0.0.1:27016", "[::1]:27017", "example.com:27015"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("names = %q, want %q", names, want)
	}
	if s := c.Server("127.0.0.1:27016"); s.Origin != list+":4" {
		t.Errorf("origin = %q", s.Origin)
	}
	if len(c.Webhooks) != 1 || c.Webhooks[0].Format != FormatSlack {
		t.Errorf("webhooks = %v", c.Webhooks)
	}
}

func TestLoaderProblems(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	list := testutil.WriteFile(t, filepath.Join(dir, "list.txt"), "127.0.0.1:27015\nnot a host:1\n127.0.0.1:99999\n127.0.0.1:27015\n127.0.0.1\n")
	cfg := testutil.WriteFile(t, filepath.Join(dir, "monitor.yaml"), "servers:\n  - {name: lobby, address: 127.0.0.1:27200}\n")
	l := &Loader{
		Path:     cfg,
		Targets:  []string{"lobby=127.0.0.1:27100", "=127.0.0.1:1", "x=", "ogp1=127.0.0.1"},
		Lists:    []string{list},
		Protocol: "ogp",
		Interval: time.Millisecond,
		Listen:   "nowhere",
		Webhooks: []string{"mailto:ops@example.com"},
	}
	var warnings []string
	l.Warnf = func(format string, args ...any) { warnings = append(warnings, fmt.Sprintf(format, args...)) }
	_, err := l.Load()
	var ce *ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v", err)
	}
	if len(ce.Problems) != 7 {
		t.Errorf("%d problems, want 7:\n%v", len(ce.Problems), err)
	}
	for _, w := range []string{
		"--interval: must be from 1s to 1d, not 1ms",
		`--listen: "nowhere" is not HOST:PORT`,
		"--webhook: url: must be an http:// or https:// URL, or a shoutrrr service's (bark, discord, generic, googlechat, gotify, hangouts, ifttt, join, lark, logger, matrix, mattermost, notifiarr, ntfy, opsgenie, pagerduty, pushbullet, pushover, rocketchat, signal, slack, smtp, teams, telegram, wecom, zulip), not mailto:",
		`--target: "=127.0.0.1:1" has no name`,
		`--target: "x=" has no address`,
		`--target: lobby: the name "lobby" is taken by the server at ` + cfg + ":2",
		`--target: ogp1: "127.0.0.1" has no port (OGP has no conventional port`,
	} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q:\n%v", w, err)
		}
	}
	// The list's bad lines are skipped with warnings, as gsq scan skips
	// them, not problems.
	want := []string{
		"monitor: " + list + `:2: "not a host" is not a host name or an IP address; line skipped`,
		"monitor: " + list + `:3: invalid port "99999": a port is a number from 1 to 65535; line skipped`,
		"monitor: " + list + `:4: 127.0.0.1:27015 is a duplicate; line skipped`,
		"monitor: " + list + `:5: "127.0.0.1" has no port; line skipped`, // -f with --protocol ogp: no default port
	}
	if !slices.Equal(warnings, want) {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(warnings, "\n"), strings.Join(want, "\n"))
	}
	if strings.Contains(err.Error(), list) {
		t.Errorf("the list's lines are problems:\n%v", err)
	}
}

// TestMonitorListWithDuplicatesAndBadLines is the user's list of issue 19
// (user row 7): gsq scan took it, gsq monitor -f refused it. The monitor
// now takes it, each skipped line with a warning, and warns about at most
// maxListWarnings lines, counting the rest.
func TestMonitorListWithDuplicatesAndBadLines(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("127.0.0.1\n127.0.0.1:27015\nLOCALHOST:27016\nlocalhost:27016\n::1\n[::1]:27015\n")
	for range maxListWarnings {
		b.WriteString("127.0.0.1:0\n")
	}
	list := testutil.WriteFile(t, filepath.Join(t.TempDir(), "list.txt"), b.String())
	var warnings []string
	c, err := (&Loader{Lists: []string{list}, Warnf: func(format string, args ...any) {
		warnings = append(warnings, fmt.Sprintf(format, args...))
	}}).Load()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range c.Servers {
		names = append(names, s.Name)
	}
	if want := []string{"127.0.0.1:27015", "LOCALHOST:27016", "[::1]:27015"}; !slices.Equal(names, want) {
		t.Errorf("servers %q, want %q", names, want)
	}
	if len(warnings) != maxListWarnings+1 ||
		warnings[0] != "monitor: "+list+":2: 127.0.0.1:27015 is a duplicate; line skipped" ||
		warnings[1] != "monitor: "+list+":4: localhost:27016 is a duplicate; line skipped" ||
		warnings[2] != "monitor: "+list+":6: [::1]:27015 is a duplicate; line skipped" ||
		warnings[maxListWarnings] != "monitor: 3 more lines of the target lists skipped (13 in all)" {
		t.Errorf("warnings:\n%s", strings.Join(warnings, "\n"))
	}
}

func TestLoaderMissingFiles(t *testing.T) {
	t.Parallel()
	if _, err := (&Loader{Path: "/nonexistent/monitor.yaml"}).Load(); err == nil || !strings.Contains(err.Error(), "/nonexistent/monitor.yaml") {
		t.Errorf("config: %v", err)
	}
	if _, err := (&Loader{Lists: []string{"/nonexistent/list.txt"}}).Load(); err == nil || !strings.Contains(err.Error(), "/nonexistent/list.txt") {
		t.Errorf("list: %v", err)
	}
}

// TestLoaderPrecedence checks: a server's own setting, then a flag, then
// the file's global setting, then the default.
func TestLoaderPrecedence(t *testing.T) {
	t.Parallel()
	cfg := testutil.WriteFile(t, filepath.Join(t.TempDir(), "monitor.yaml"), `
interval: 20s
down_after: 2m
servers:
  - {name: own, address: 127.0.0.1:1, interval: 5s}
  - {name: inherits, address: 127.0.0.1:2}
`)
	c, err := (&Loader{Path: cfg, Interval: 40 * time.Second, Listen: ":9999", DB: "x.db"}).Load()
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Server("own").Interval; got != 5*time.Second {
		t.Errorf("own interval = %v", got)
	}
	if got := c.Server("inherits").Interval; got != 40*time.Second {
		t.Errorf("inherited interval = %v", got)
	}
	if got := c.Server("inherits").DownAfter; got != 2*time.Minute {
		t.Errorf("down_after = %v", got)
	}
	if c.Listen != ":9999" || c.DB != "x.db" {
		t.Errorf("listen %q db %q", c.Listen, c.DB)
	}
}

func TestReloadKeepsRunningConfigOnError(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := testutil.WriteFile(t, filepath.Join(dir, "monitor.yaml"), "servers:\n  - {name: a, address: 127.0.0.1:1}\n")
	l := &Loader{Path: path}
	running, err := l.Load()
	if err != nil {
		t.Fatal(err)
	}
	testutil.WriteFile(t, filepath.Join(dir, "monitor.yaml"), "servers:\n  - {name: a, address: 127.0.0.1:1, interval: soon}\n")
	got, ch, err := l.Reload(running)
	if err == nil || !strings.Contains(err.Error(), `monitor.yaml:2:47: servers[0] (a).interval: "soon" is not a duration`) {
		t.Fatalf("err = %v", err)
	}
	if got != running || !ch.Empty() {
		t.Errorf("a bad reload changed the config: %v, %+v", got == running, ch)
	}
}

func TestReloadDiff(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := testutil.WriteFile(t, filepath.Join(dir, "monitor.yaml"), `
listen: 127.0.0.1:9815
servers:
  - {name: same, address: 127.0.0.1:1, labels: {a: b}}
  - {name: gone, address: 127.0.0.1:2}
  - {name: moved, address: 127.0.0.1:3}
  - {name: tuned, address: 127.0.0.1:4}
`)
	l := &Loader{Path: path}
	running, err := l.Load()
	if err != nil {
		t.Fatal(err)
	}
	testutil.WriteFile(t, filepath.Join(dir, "monitor.yaml"), `
listen: 127.0.0.1:9816
alerts: [down]
servers:
  - {name: new, address: 127.0.0.1:5}
  - {name: tuned, address: 127.0.0.1:4, interval: 10s, labels: {x: y}, alerts: [down]}
  - {name: moved, address: 127.0.0.1:30}
  - {name: same, address: 127.0.0.1:1, labels: {a: b}, alerts: [down, up]}
`)
	next, ch, err := l.Reload(running)
	if err != nil {
		t.Fatal(err)
	}
	if next == running {
		t.Fatal("Reload returned the running config")
	}
	want := Changes{
		Added:   []string{"new"},
		Removed: []string{"gone"},
		Changed: []ServerChange{
			{Name: "tuned", Fields: []string{"interval", "labels", "alerts"}},
			{Name: "moved", Fields: []string{"address", "alerts"}},
		},
		Settings: []string{"listen", "alerts"},
	}
	if !reflect.DeepEqual(ch, want) {
		t.Errorf("changes:\n got %+v\nwant %+v", ch, want)
	}
	if !ch.Changed[1].Retargeted() || ch.Changed[0].Retargeted() {
		t.Error("Retargeted wrong")
	}
	if got := ch.NeedRestart(); !reflect.DeepEqual(got, []string{"listen"}) {
		t.Errorf("NeedRestart = %v", got)
	}
	if ch := Diff(next, next); !ch.Empty() {
		t.Errorf("a config differs from itself: %+v", ch)
	}
}

func TestParseTargetFlag(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][2]string{
		"lobby=127.0.0.1:27015": {"lobby", "127.0.0.1:27015"},
		" a = [::1]:27015 ":     {"a", "[::1]:27015"},
		"127.0.0.1:27015":       {"127.0.0.1:27015", "127.0.0.1:27015"},
		"a=b=c":                 {"a", "b=c"}, // the address is checked later
	} {
		name, addr, err := ParseTargetFlag(in)
		if err != nil || name != want[0] || addr != want[1] {
			t.Errorf("ParseTargetFlag(%q) = %q, %q, %v", in, name, addr, err)
		}
	}
	for _, in := range []string{"", "=x", "x=", "a/b=1.2.3.4"} {
		if _, _, err := ParseTargetFlag(in); err == nil {
			t.Errorf("ParseTargetFlag(%q): no error", in)
		}
	}
}

// BenchmarkLoadList loads a target list of 10,000 servers, as a monitor
// of a large fleet does at start and on each SIGHUP, and compares it with
// itself as a reload does.
func BenchmarkLoadList(b *testing.B) {
	var list strings.Builder
	for i := range 10_000 {
		fmt.Fprintf(&list, "10.%d.%d.%d:27015\n", i>>16, (i>>8)&255, i&255)
	}
	path := filepath.Join(b.TempDir(), "list.txt")
	testutil.WriteFile(b, path, list.String())
	l := &Loader{Lists: []string{path}}
	running, err := l.Load()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_, ch, err := l.Reload(running)
		if err != nil || !ch.Empty() {
			b.Fatal(err, ch)
		}
	}
}

func TestLoaderTooManyServers(t *testing.T) {
	t.Parallel()
	var list strings.Builder
	for i := range MaxServers + 5 {
		fmt.Fprintf(&list, "10.%d.%d.%d\n", i>>16, (i>>8)&255, i&255)
	}
	path := testutil.WriteFile(t, filepath.Join(t.TempDir(), "list.txt"), list.String())
	_, err := (&Loader{Lists: []string{path}}).Load()
	var ce *ConfigError
	if !errors.As(err, &ce) || len(ce.Problems) != 1 ||
		ce.Problems[0].String() != fmt.Sprintf("%s:%d: more than %d servers", path, MaxServers+1, MaxServers) {
		t.Fatalf("err = %v", err)
	}
}
