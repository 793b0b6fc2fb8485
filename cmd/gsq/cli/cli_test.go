package cli

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/protocol"
)

// runGSQ runs gsq in a test environment and returns the exit code,
// stdout and stderr. environ supplies the environment variables; a nil
// ctx is one that ends after 30 s.
func runGSQ(t *testing.T, ctx context.Context, stdin io.Reader, environ map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	env := testEnv(stdin, environ)
	env.Stdout, env.Stderr = &stdout, &stderr
	if ctx == nil {
		ctx = testutil.Context(t)
	}
	code := env.Run(ctx, args)
	return code, stdout.String(), stderr.String()
}

// testEnv is an environment with no terminal, stdin (empty when nil),
// the variables of environ, and stdout and stderr discarded.
func testEnv(stdin io.Reader, environ map[string]string) *Env {
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	return &Env{
		Stdin:      stdin,
		Stdout:     io.Discard,
		Stderr:     io.Discard,
		Getenv:     func(k string) string { return environ[k] },
		IsTerminal: func(any) bool { return false },
	}
}

// watchedBuffer is an output stream that tests can read while gsq writes
// it; seen is closed once the output holds want.
type watchedBuffer struct {
	mu   sync.Mutex
	b    bytes.Buffer
	want string
	seen chan struct{}
}

func newWatchedBuffer(want string) *watchedBuffer {
	return &watchedBuffer{want: want, seen: make(chan struct{})}
}

func (w *watchedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	had := strings.Contains(w.b.String(), w.want)
	w.b.Write(p)
	if !had && strings.Contains(w.b.String(), w.want) {
		close(w.seen)
	}
	return len(p), nil
}

func (w *watchedBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"unknown command", []string{"frobnicate"}},
		{"unknown flag", []string{"query", "--nope", "127.0.0.1"}},
		{"query without target", []string{"query"}},
		{"bad port", []string{"query", "127.0.0.1:99999"}},
		{"bad protocol", []string{"query", "--protocol", "quake", "127.0.0.1"}},
		{"bad timeout", []string{"query", "--timeout", "-1s", "127.0.0.1"}},
		{"bad duration", []string{"query", "--timeout", "soon", "127.0.0.1"}},
		{"serve takes no args", []string{"serve", "extra"}},
		{"serve bad profile", []string{"serve", "--addr", "127.0.0.1:0", "--profile", "nope"}},
		{"serve bad rule", []string{"serve", "--addr", "127.0.0.1:0", "--rule", "novalue"}},
		{"serve bad loss", []string{"serve", "--addr", "127.0.0.1:0", "--loss", "2"}},
		{"serve bad dialect", []string{"serve", "--addr", "127.0.0.1:0", "--rcon-dialect", "quake"}},
		{"serve missing config", []string{"serve", "--addr", "127.0.0.1:0", "--config", "/nonexistent/gsq.yaml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runGSQ(t, nil, nil, nil, tt.args...)
			if code != ExitUsage {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, ExitUsage, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout should be empty on a usage error, got %q", stdout)
			}
			if !strings.HasPrefix(stderr, "gsq: error: ") {
				t.Errorf("stderr should start with 'gsq: error: ', got %q", stderr)
			}
		})
	}
}

// The usage hint names the command the user ran, nested ones whole.
func TestUsageHintNamesTheCommand(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"query", "--nope", "x"}, "run 'gsq query --help'"},
		{[]string{"monitor", "targets", "add"}, "run 'gsq monitor targets add --help'"},
		{[]string{"frobnicate"}, "run 'gsq --help'"},
	} {
		if code, _, stderr := runGSQ(t, nil, nil, nil, tt.args...); code != ExitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want %q", tt.args, code, stderr, tt.want)
		}
	}
}

func TestVersionAndHelp(t *testing.T) {
	code, stdout, _ := runGSQ(t, nil, nil, nil, "--help")
	if code != ExitOK || !strings.Contains(stdout, "query") || !strings.Contains(stdout, "serve") {
		t.Fatalf("help: exit %d, output:\n%s", code, stdout)
	}
}

func TestDemo(t *testing.T) {
	code, stdout, stderr := runGSQ(t, nil, nil, nil, "demo")
	if code != ExitOK {
		t.Fatalf("demo exit %d; stderr:\n%s\nstdout:\n%s", code, stderr, stdout)
	}
	for _, want := range []string{"gsq simulated server", "de_dust2", "Alice", "mp_timelimit", "Console: hello", "Players (3/24)", "gsq monitor --demo"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("demo output lacks %q:\n%s", want, stdout)
		}
	}
}

func TestPlural(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		n          int
		word, want string
	}{
		{1, "server", "1 server"}, {0, "server", "0 servers"}, {2, "retry", "2 retries"}, {3, "witness", "3 witnesses"},
		{2, "day", "2 days"}, {1, "rule", "1 rule"}, {5, "bot", "5 bots"},
	} {
		if got := plural(tt.n, tt.word); got != tt.want {
			t.Errorf("plural(%d, %q) = %q, want %q", tt.n, tt.word, got, tt.want)
		}
	}
}

// Bad flag values are explained in words, without Go's parser messages.
func TestFlagErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"query", "--timeout", "soon", "x"}, `--timeout: "soon" is not a duration`},
		{[]string{"query", "--retries", "abc", "x"}, `--retries: "abc" is not a whole number`},
		{[]string{"scan", "--rate", "99999999999999999999999"}, `--rate: 99999999999999999999999 is out of range`},
		{[]string{"query", "--json=maybe", "x"}, `--json: "maybe" is neither true nor false`},
	} {
		code, _, stderr := runGSQ(t, nil, nil, nil, tt.args...)
		if code != ExitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want %q", tt.args, code, stderr, tt.want)
		}
		for _, internal := range []string{"strconv", "time:", "ParseFloat", "ParseInt", "Duration"} {
			if strings.Contains(stderr, internal) {
				t.Errorf("%v: Go internals in %q", tt.args, stderr)
			}
		}
	}
}

// Shell completion of the enumerated flags of query and scan.
func TestCompletion(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"__complete", "query", "--protocol", ""}, protocol.Names()},
		{[]string{"__complete", "scan", "--protocol", ""}, protocol.Names()},
		{[]string{"__complete", "query", "--dialect", ""}, []string{"v0.91", "v1"}},
		{[]string{"__complete", "scan", "--dialect", ""}, []string{"v0.91", "v1"}},
		{[]string{"__complete", "query", "--fields", "info,p"}, []string{"info,players"}},
		{[]string{"__complete", "scan", "--fields", "info,players,"}, []string{"info,players,teams", "info,players,rules", "info,players,addons", "info,players,limits", "info,players,colors", "info,players,dynamic"}},
	} {
		_, stdout, _ := runGSQ(t, nil, nil, nil, tt.args...)
		lines := strings.Split(strings.TrimSpace(stdout), "\n")
		got := lines[:len(lines)-1] // the last line is cobra's directive
		if strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("%v: %q, want %q", tt.args, got, tt.want)
		}
	}
}
