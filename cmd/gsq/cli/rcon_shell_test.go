package cli

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gsq-project/gsq/rcon"
	"github.com/gsq-project/gsq/rcon/rcontest"
)

// The interactive shell needs a real terminal, so it is tested through
// tmux: the test binary runs itself as gsq (TestRconShellHelper) inside a
// detached tmux session with its own socket, HOME and XDG directories,
// types with send-keys and reads the screen with capture-pane. Every wait
// is a bounded poll.

const rconHelperEnv = "GSQ_CLI_TEST_HELPER"

// TestRconShellHelper is not a test: it is the gsq process that
// TestRconShellTmux starts in tmux, with gsq's arguments after "--".
func TestRconShellHelper(t *testing.T) {
	if os.Getenv(rconHelperEnv) != "1" {
		t.Skip("helper process for TestRconShellTmux")
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Run(ctx, args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// rconRecorder counts the commands a fake server ran.
type rconRecorder struct {
	mu   sync.Mutex
	cmds []string
}

func (r *rconRecorder) ServeRCON(ctx context.Context, w rcon.ResponseWriter, cmd string) {
	r.mu.Lock()
	r.cmds = append(r.cmds, cmd)
	r.mu.Unlock()
	testHandler.ServeRCON(ctx, w, cmd)
}

// String lists the commands, for failure messages.
func (r *rconRecorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return fmt.Sprintf("%q", r.cmds)
}

func (r *rconRecorder) count(cmd string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.cmds {
		if c == cmd {
			n++
		}
	}
	return n
}

// serveRCONAt starts a fake SRCDS server on addr ("" for any port).
func serveRCONAt(t *testing.T, addr string, h rcon.Handler) *rcontest.Server {
	t.Helper()
	s := rcontest.NewUnstartedServer(rcontest.SRCDS, testPassword, h)
	if addr != "" {
		s.Listener.Close()
		var err error
		for range 50 { // the old server's port may take a moment to free
			if s.Listener, err = net.Listen("tcp", addr); err == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			t.Fatalf("listen again on %s: %v", addr, err)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// tmuxSession drives one gsq process in tmux.
type tmuxSession struct {
	t    *testing.T
	tmux string
	sock string
	conf string
	name string
	// exitFile receives gsq's exit status when it ends.
	exitFile string
}

func (s *tmuxSession) run(args ...string) string {
	s.t.Helper()
	out, err := exec.Command(s.tmux, append([]string{"-S", s.sock, "-f", s.conf}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %q: %v\n%s", args, err, out)
	}
	return string(out)
}

// keys sends tmux key names (Enter, C-a, Up); text sends literal text.
func (s *tmuxSession) keys(keys ...string) {
	s.run(append([]string{"send-keys", "-t", s.name}, keys...)...)
}
func (s *tmuxSession) text(text string) { s.run("send-keys", "-t", s.name, "-l", text) }

// screen is the pane's text, scrollback included, one entry per line.
func (s *tmuxSession) screen() []string {
	out := s.run("capture-pane", "-p", "-J", "-S", "-", "-t", s.name)
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return lines
}

// waitFor polls until cond holds for the screen, up to about 20 s.
func (s *tmuxSession) waitFor(what string, cond func(screen []string) bool) {
	s.t.Helper()
	var screen []string
	for range 1000 { // tmux tells of no change: poll its screen
		if screen = s.screen(); cond(screen) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.t.Fatalf("timed out waiting for %s; screen:\n%s", what, strings.Join(screen, "\n"))
}

// waitLine waits until at least n lines equal line.
func (s *tmuxSession) waitLine(line string, n int) {
	s.t.Helper()
	s.waitFor(fmt.Sprintf("%d× line %q", n, line), func(screen []string) bool { return countScreenLines(screen, line) >= n })
}

// waitText waits until the screen contains text (trailing spaces are
// not on the screen).
func (s *tmuxSession) waitText(text string) {
	s.t.Helper()
	text = strings.TrimRight(text, " ")
	s.waitFor(fmt.Sprintf("%q", text), func(screen []string) bool { return strings.Contains(strings.Join(screen, "\n"), text) })
}

// waitNoEcho waits until the pane's terminal no longer echoes what is
// typed (gsq prints the password prompt just before it turns echo off),
// so that the test types no faster than the terminal's state allows.
func (s *tmuxSession) waitNoEcho() {
	s.t.Helper()
	tty := strings.TrimSpace(s.run("display-message", "-p", "-t", s.name, "#{pane_tty}"))
	for range 200 {
		out, err := exec.Command("stty", "-F", tty, "-a").CombinedOutput()
		if err == nil && strings.Contains(" "+strings.Join(strings.Fields(string(out)), " ")+" ", " -echo ") {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.t.Fatalf("the terminal %s still echoes", tty)
}

// waitExit waits for gsq to exit and returns its exit status, which the
// shell that tmux started writes to a file (tmux's own #{pane_dead_status}
// is sometimes never filled in).
func (s *tmuxSession) waitExit() string {
	s.t.Helper()
	for range 1000 {
		if data, err := os.ReadFile(s.exitFile); err == nil && strings.HasSuffix(string(data), "\n") {
			return strings.TrimSpace(string(data))
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.t.Fatalf("gsq did not exit; screen:\n%s", strings.Join(s.screen(), "\n"))
	return ""
}

func countScreenLines(screen []string, line string) int {
	n := 0
	for _, l := range screen {
		if l == line {
			n++
		}
	}
	return n
}

// newTmux prepares a tmux server of the test's own (its socket and
// config in dir), killed at the end of the test; it skips the test
// without tmux.
func newTmux(t *testing.T) (tmux, sock, conf, dir string) {
	t.Helper()
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux not installed")
	}
	dir = t.TempDir()
	conf = filepath.Join(dir, "tmux.conf")
	writeFileMode(t, conf, "set -g remain-on-exit on\nset -g history-limit 10000\n", 0o600)
	sock = filepath.Join(dir, "tmux.sock")
	t.Cleanup(func() { exec.Command(tmux, "-S", sock, "kill-server").Run() })
	return tmux, sock, conf, dir
}

// startTmuxGsq runs gsq with args (the test binary as TestRconShellHelper)
// in a new tmux window called name, the first of the tmux server when
// first is set, with HOME and the XDG directories under dir; extra holds
// VAR=value.
func startTmuxGsq(t *testing.T, tmux, sock, conf, dir, name string, first bool, args []string, extra ...string) *tmuxSession {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s := &tmuxSession{t: t, tmux: tmux, sock: sock, conf: conf, name: name, exitFile: filepath.Join(dir, name+".exit")}
	envv := append([]string{"env", "-i", "PATH=" + os.Getenv("PATH"), "TERM=screen", "HOME=" + filepath.Join(dir, "home"),
		"XDG_STATE_HOME=" + filepath.Join(dir, "state"), "XDG_CONFIG_HOME=" + filepath.Join(dir, "config"), rconHelperEnv + "=1"}, extra...)
	argv := append(append(envv, self, "-test.run=^TestRconShellHelper$", "--"), args...)
	for i, a := range argv {
		argv[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	command := strings.Join(argv, " ") + "; echo $? > '" + s.exitFile + "'"
	if first {
		s.run("new-session", "-d", "-s", "gsq", "-n", name, "-x", "120", "-y", "50", command)
	} else {
		s.run("new-window", "-t", "gsq", "-n", name, command)
	}
	s.name = "gsq:" + name
	return s
}

func TestRconShellTmux(t *testing.T) {
	if os.Getenv(rconHelperEnv) == "1" {
		return
	}
	tmux, sock, conf, dir := newTmux(t)
	state := filepath.Join(dir, "state")

	rec := &rconRecorder{}
	srv := serveRCONAt(t, "", rec)
	addr := srv.Addr().String()
	prompt := addr + "> "

	// start runs gsq rcon in a new tmux window; extra holds VAR=value.
	start := func(name string, extra ...string) *tmuxSession {
		return startTmuxGsq(t, tmux, sock, conf, dir, name, name == "first", []string{"rcon", addr}, extra...)
	}

	// Session 1: the password comes from a prompt that does not echo.
	s := start("first")
	s.waitText("RCON password for " + addr + ": ")
	s.waitNoEcho()
	s.text(testPassword)
	s.keys("Enter")
	s.waitText(prompt)
	if strings.Contains(strings.Join(s.screen(), "\n"), testPassword) {
		t.Fatal("the password prompt echoed the password")
	}

	s.text("echo hello")
	s.keys("Enter")
	s.waitLine("hello", 1)

	// Line editing: type the end, jump to the start, insert.
	s.text("cho edited")
	s.keys("C-a")
	s.text("e")
	s.keys("Enter")
	s.waitLine("edited", 1)
	if rec.count("echo edited") != 1 {
		t.Fatalf("server ran %q, want one \"echo edited\"", rec)
	}

	// Up recalls the last line.
	s.keys("Up", "Enter")
	s.waitLine("edited", 2)

	// Ctrl-R finds an older one.
	s.keys("C-r")
	s.text("hel")
	s.keys("Enter")
	s.waitLine("hello", 2)
	if rec.count("echo hello") != 2 {
		t.Fatalf("server ran %q, want \"echo hello\" twice", rec)
	}

	// Colours are rendered: the pane shows the text without § codes,
	// and with attributes.
	s.text("colors")
	s.keys("Enter")
	s.waitLine("Green plain bold", 1)
	withEsc := s.run("capture-pane", "-p", "-e", "-J", "-S", "-", "-t", s.name)
	if i := strings.Index(withEsc, "Green"); i < 0 || !strings.Contains(withEsc[max(0, i-20):i], "\x1b[") || strings.Contains(withEsc, "§") {
		t.Errorf("colours not rendered:\n%q", withEsc)
	}

	// A line starting with a space is not kept in the history.
	s.text(" echo unlisted")
	s.keys("Enter")
	s.waitLine("unlisted", 1)

	// The server restarts: the next command finds the connection gone,
	// gsq logs in again first and says so, then sends the command.
	srv.Close()
	serveRCONAt(t, addr, rec)
	s.text("echo lost")
	s.keys("Enter")
	s.waitText("gsq: the connection to " + addr + " was lost; reconnected")
	s.waitLine("lost", 1)
	if rec.count("echo lost") != 1 {
		t.Errorf("server ran %q, want one \"echo lost\"", rec)
	}
	s.text("echo again")
	s.keys("Enter")
	s.waitLine("again", 1)

	// :help is the shell's, not a command: it is not kept either.
	s.text(":help")
	s.keys("Enter")
	s.waitText("Each line runs as one command on the server.")

	s.text(":q")
	s.keys("Enter")
	if st := s.waitExit(); st != "0" {
		t.Errorf(":q: exit status %s, want 0", st)
	}

	// The history file is private and holds what was typed, in order.
	hist := filepath.Join(state, "gsq", "rcon_history")
	info, err := os.Stat(hist)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("history mode %v, want 0600", info.Mode().Perm())
	}
	data, err := os.ReadFile(hist)
	if err != nil {
		t.Fatal(err)
	}
	want := "echo hello\necho edited\necho hello\ncolors\necho lost\necho again\n"
	if string(data) != want {
		t.Errorf("history file:\n%s\nwant:\n%s", data, want)
	}

	// Session 2: the history is back, Ctrl-D leaves.
	s = start("second", "RCON_PASSWORD="+testPassword)
	s.waitText(prompt)
	s.keys("Up")
	s.waitText(prompt + "echo again")
	s.keys("Up", "Enter")
	s.waitLine("lost", 1)
	if rec.count("echo lost") != 2 {
		t.Errorf("server ran %q, want \"echo lost\" twice", rec)
	}
	// Tab completes a command name from the history.
	s.text("col")
	s.keys("Tab")
	s.waitText(prompt + "colors")
	s.keys("Enter")
	s.waitLine("Green plain bold", 1)
	s.keys("C-d")
	if st := s.waitExit(); st != "0" {
		t.Errorf("Ctrl-D: exit status %s, want 0", st)
	}
	if strings.Contains(strings.Join(s.screen(), "\n"), testPassword) {
		t.Error("the password appeared on the screen")
	}
}
