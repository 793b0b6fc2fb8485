package store

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHelperProcess is not a test: the tests below run it in another
// process (another user, a file system of its own, or to kill it) with
// GSQ_STORE_HELPER naming what to do, and read what it prints.
func TestHelperProcess(t *testing.T) {
	action := os.Getenv("GSQ_STORE_HELPER")
	if action == "" {
		t.Skip("run by other tests")
	}
	ctx := context.Background()
	path := os.Getenv("GSQ_STORE_PATH")
	report := func(err error) {
		fmt.Printf("RESULT readonly=%v full=%v corrupt=%v err=%v\n", errors.Is(err, ErrReadOnly), errors.Is(err, ErrFull), errors.Is(err, ErrCorrupt), err)
	}
	switch action {
	case "create":
		st, err := Open(ctx, path)
		if err == nil {
			err = errors.Join(st.SyncServers(ctx, []Server{{Name: "s"}}), st.Write(ctx, []Sample{up("s", t0, 1)}), st.Close())
		}
		report(err)
	case "open":
		st, err := Open(ctx, path)
		if err == nil {
			st.Close()
		}
		report(err)
	case "fill":
		// Write until the file system is full, free some space, go on.
		st, err := Open(ctx, path)
		if err != nil {
			report(err)
			break
		}
		st.SyncServers(ctx, []Server{{Name: "s"}})
		for i := 0; i < 100_000 && err == nil; i++ {
			var round []Sample
			for s := range 200 {
				smp := up("s", t0.Add(time.Duration(i*200+s)*time.Second), s)
				smp.Map = fmt.Sprintf("map %d", i*200+s) // many texts: more to write
				round = append(round, smp)
			}
			err = st.Write(ctx, round)
		}
		report(err)
		report(st.Check(ctx))
		os.Remove(filepath.Join(filepath.Dir(path), "filler"))
		report(st.Write(ctx, []Sample{up("s", t0.Add(-time.Hour), 1)}))
		report(st.Check(ctx))
		report(st.Close())
	case "crash":
		crashWriter(path)
	}
	os.Exit(0)
}

// crashRound is round i of the crash test: crashServers samples at
// t0 + 30 s × i, alice online throughout.
const crashServers = 50

func crashRound(i int) []Sample {
	at := t0.Add(time.Duration(i) * 30 * time.Second)
	round := make([]Sample, 0, crashServers)
	for s := range crashServers {
		smp := withPlayers(fmt.Sprint("s", s), at, "alice:"+strconv.Itoa(i), "bob:1")
		if i == 1 {
			smp = changes(smp, "+alice", "+bob")
		}
		round = append(round, smp)
	}
	return round
}

// crashWriter writes rounds from GSQ_STORE_START on, saying each one it
// committed, until it is killed.
func crashWriter(path string) {
	ctx := context.Background()
	st, err := Open(ctx, path)
	if err != nil {
		fmt.Println("ERROR", err)
		return
	}
	var servers []Server
	for s := range crashServers {
		servers = append(servers, Server{Name: fmt.Sprint("s", s)})
	}
	if err := st.SyncServers(ctx, servers); err != nil {
		fmt.Println("ERROR", err)
		return
	}
	start, _ := strconv.Atoi(os.Getenv("GSQ_STORE_START"))
	for i := start; ; i++ {
		if err := st.Write(ctx, crashRound(i)); err != nil {
			fmt.Println("ERROR", err)
			return
		}
		fmt.Println("COMMITTED", i)
		if i%25 == 0 {
			if err := st.Maintain(ctx, t0.Add(time.Duration(i)*30*time.Second)); err != nil {
				fmt.Println("ERROR", err)
				return
			}
		}
	}
}

// helper runs TestHelperProcess with action on path, under the command
// prefix (nil: directly), and returns its RESULT lines.
func helper(t *testing.T, action, path string, prefix ...string) []string {
	t.Helper()
	self, err := os.Executable()
	must(t, err)
	args := append(prefix, self, "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "GSQ_STORE_HELPER="+action, "GSQ_STORE_PATH="+path)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
	var results []string
	for _, line := range strings.Split(string(out), "\n") {
		if r, ok := strings.CutPrefix(line, "RESULT "); ok {
			results = append(results, r)
		}
	}
	return results
}

// inNamespace is a command prefix that runs a shell script as root of a
// new user and mount namespace, where the test may mount a tmpfs.
func inNamespace(t *testing.T) []string {
	t.Helper()
	if err := exec.Command("unshare", "-Urm", "true").Run(); err != nil {
		t.Skipf("no user and mount namespaces here (unshare -Urm: %v)", err)
	}
	return []string{"unshare", "-Urm", "sh", "-c"}
}

func TestSQLiteReadOnlyFileSystem(t *testing.T) {
	t.Parallel()
	ns := inNamespace(t)
	dir := t.TempDir()
	self, err := os.Executable()
	must(t, err)
	run := func(action, path string) string {
		return fmt.Sprintf("GSQ_STORE_HELPER=%s GSQ_STORE_PATH=%s %s -test.run='^TestHelperProcess$' -test.count=1", action, path, self)
	}
	db := filepath.Join(dir, "monitor.db")
	script := fmt.Sprintf("mount -t tmpfs -o size=16m tmpfs %s && %s && mount -o remount,ro %s && %s && %s",
		dir, run("create", db), dir, run("open", db), run("open", filepath.Join(dir, "new.db")))
	out, err := exec.Command(ns[0], append(ns[1:], script)...).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var results []string
	for _, line := range strings.Split(string(out), "\n") {
		if r, ok := strings.CutPrefix(line, "RESULT "); ok {
			results = append(results, r)
		}
	}
	if len(results) != 3 || !strings.Contains(results[0], "err=<nil>") {
		t.Fatalf("results: %q\n%s", results, out)
	}
	for i, path := range []string{db, filepath.Join(dir, "new.db")} {
		r := results[i+1]
		if !strings.Contains(r, "readonly=true") || !strings.Contains(r, path) {
			t.Errorf("Open(%s) on a read-only file system: %s, want ErrReadOnly naming the file", path, r)
		}
	}
}

func TestSQLiteDiskFull(t *testing.T) {
	t.Parallel()
	ns := inNamespace(t)
	dir := t.TempDir()
	self, err := os.Executable()
	must(t, err)
	// A 2 MiB file system, a quarter of it a file to free when full.
	script := fmt.Sprintf("mount -t tmpfs -o size=2m tmpfs %s && head -c 524288 /dev/zero > %s/filler && GSQ_STORE_HELPER=fill GSQ_STORE_PATH=%s/monitor.db %s -test.run='^TestHelperProcess$' -test.count=1",
		dir, dir, dir, self)
	out, err := exec.Command(ns[0], append(ns[1:], script)...).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var results []string
	for _, line := range strings.Split(string(out), "\n") {
		if r, ok := strings.CutPrefix(line, "RESULT "); ok {
			results = append(results, r)
		}
	}
	if len(results) != 5 {
		t.Fatalf("results: %q\n%s", results, out)
	}
	if r := results[0]; !strings.Contains(r, "full=true") || !strings.Contains(r, filepath.Join(dir, "monitor.db")) {
		t.Errorf("writing to a full disk: %s, want ErrFull naming the file", r)
	}
	for i, what := range []string{"Check after the disk filled", "a write once there is space", "Check after it", "Close"} {
		if r := results[i+1]; !strings.HasSuffix(r, "err=<nil>") {
			t.Errorf("%s: %s", what, r)
		}
	}
}

func TestSQLiteReadOnlyDirectory(t *testing.T) {
	t.Parallel()
	var prefix []string
	if os.Geteuid() == 0 {
		// Root writes anywhere: take its capabilities away.
		if err := exec.Command("setpriv", "--bounding-set=-all", "--inh-caps=-all", "true").Run(); err != nil {
			t.Skipf("cannot drop root's capabilities (setpriv: %v)", err)
		}
		prefix = []string{"setpriv", "--bounding-set=-all", "--inh-caps=-all"}
	}
	dir := filepath.Join(t.TempDir(), "ro")
	must(t, os.Mkdir(dir, 0o755))
	db := filepath.Join(dir, "monitor.db")
	if r := helper(t, "create", db); len(r) != 1 || !strings.HasSuffix(r[0], "err=<nil>") {
		t.Fatalf("create: %q", r)
	}
	must(t, os.Chmod(db, 0o444))
	must(t, os.Chmod(dir, 0o555))
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	for _, path := range []string{db, filepath.Join(dir, "new.db")} {
		r := helper(t, "open", path, prefix...)
		if len(r) != 1 || !strings.Contains(r[0], "readonly=true") || !strings.Contains(r[0], path) {
			t.Errorf("Open(%s) in a read-only directory: %q, want ErrReadOnly naming the file", path, r)
		}
	}
}

// TestKill9 kills a process writing poll rounds at random moments, and
// checks after each kill that the database is sound, that every round
// the process said it committed is there whole, and that at most the
// round in flight is missing.
func TestKill9(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "monitor.db")
	self, err := os.Executable()
	must(t, err)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 9))
	next := 1
	ctx := context.Background()
	for kill := range 6 {
		cmd := exec.Command(self, "-test.run=^TestHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), "GSQ_STORE_HELPER=crash", "GSQ_STORE_PATH="+path, "GSQ_STORE_START="+strconv.Itoa(next))
		stdout, err := cmd.StdoutPipe()
		must(t, err)
		cmd.Stderr = os.Stderr
		must(t, cmd.Start())
		lines := bufio.NewScanner(stdout)
		wait := 5 + rng.IntN(60)
		committed := next - 1
		for lines.Scan() {
			line := lines.Text()
			if strings.HasPrefix(line, "ERROR") {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("writer: %s", line)
			}
			if n, ok := strings.CutPrefix(line, "COMMITTED "); ok {
				committed, _ = strconv.Atoi(n)
				if wait--; wait == 0 {
					break
				}
			}
		}
		must(t, cmd.Process.Signal(syscall.SIGKILL))
		// What it said before it died: the rounds it knew committed.
		for lines.Scan() {
			if n, ok := strings.CutPrefix(lines.Text(), "COMMITTED "); ok {
				committed, _ = strconv.Atoi(n)
			}
		}
		cmd.Wait()

		st, err := Open(ctx, path)
		must(t, err)
		must(t, st.Check(ctx))
		rounds := make(map[int64]int)
		must(t, st.EachSample(ctx, Span{}, func(s Sample) error { rounds[s.Time.Unix()]++; return nil }))
		last := 0
		for i := 1; i <= committed+1; i++ {
			n := rounds[crashRound(i)[0].Time.Unix()]
			switch {
			case n == crashServers:
				last = i
			case n != 0 || i <= committed:
				t.Fatalf("kill %d: round %d has %d of %d samples (%d committed)", kill, i, n, crashServers, committed)
			}
		}
		if len(rounds) != last {
			t.Fatalf("kill %d: %d rounds stored, want %d", kill, len(rounds), last)
		}
		next = last + 1
		// Alice has been online all along: one session, resumed at each start.
		sessions, err := st.Sessions(ctx, SessionQuery{Server: "s0", Player: "alice", To: t0.Add(24 * time.Hour)})
		must(t, err)
		if len(sessions) != 1 || sessions[0].Left != nil || !sessions[0].Joined.Equal(crashRound(1)[0].Time) {
			t.Fatalf("kill %d: alice's sessions %+v", kill, sessions)
		}
		must(t, st.Close())
		t.Logf("kill %d after round %d (%d committed)", kill, last, committed)
	}
}
