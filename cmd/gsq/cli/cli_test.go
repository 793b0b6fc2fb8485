package cli

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// runGSQ runs gsq in a test environment and returns the exit code,
// stdout and stderr. environ supplies the environment variables.
func runGSQ(t *testing.T, ctx context.Context, stdin io.Reader, environ map[string]string, args ...string) (int, string, string) {
	t.Helper()
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	var stdout, stderr bytes.Buffer
	env := &Env{
		Stdin:      stdin,
		Stdout:     &stdout,
		Stderr:     &stderr,
		Getenv:     func(k string) string { return environ[k] },
		IsTerminal: func(any) bool { return false },
	}
	if ctx == nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
	}
	code := env.Run(ctx, args)
	return code, stdout.String(), stderr.String()
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
	for _, want := range []string{"gsq simulated server", "de_dust2", "Alice", "mp_timelimit", "Console: hello", "Players (3/24)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("demo output lacks %q:\n%s", want, stdout)
		}
	}
}
