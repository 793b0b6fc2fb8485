package cli

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/gsq-project/gsq/internal/testutil"
)

// serveConsoles runs gsq serve with args in the background until the test
// ends, once it has described what it serves (its stderr so far, which
// holds want), and returns that description; stop interrupts it and
// returns its exit code.
func serveConsoles(t *testing.T, want string, args ...string) (described string, stop func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(testutil.Context(t))
	stderr := newWatchedBuffer(want)
	env := testEnv(nil, nil)
	env.Stderr = stderr
	done := make(chan int, 1)
	go func() { done <- env.Run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)) }()
	stopped := false
	stop = func() int {
		stopped = true
		cancel()
		return <-done
	}
	t.Cleanup(func() {
		if !stopped {
			stop()
		}
	})
	select {
	case <-stderr.seen:
	case code := <-done:
		stopped = true
		t.Fatalf("serve ended (%d): %s", code, stderr)
	case <-ctx.Done():
		t.Fatalf("serve never started: %s", stderr)
	}
	return stderr.String(), stop
}

// consoleURLs are the console URLs and commands in serve's description.
var consoleURLs = regexp.MustCompile(`gsq rcon ((?:webrcon|battleye|telnet|palworld)://(\S+)) (\S+)`)

// gsq serve --webrcon, --battleye, --telnet and --palworld serve the
// content on each console, and gsq rcon reaches each with the password
// of --rcon-password; the players given to serve are the ones listed.
func TestServeConsoles(t *testing.T) {
	t.Parallel()
	described, stop := serveConsoles(t, "gsq:   palworld", "--rcon-password", testPassword,
		"--player", "Alice:10:5m", "--player", "Ünïcode Bob:3:1m",
		"--webrcon", "127.0.0.1:0", "--battleye", "127.0.0.1:0", "--telnet", "127.0.0.1:0", "--palworld", "127.0.0.1:0",
		"--battleye-profile", "reforger")
	// The try lines hold each console's URL and a command.
	try := consoleURLs.FindAllStringSubmatch(described, -1)
	if len(try) != 4 {
		t.Fatalf("want 4 consoles described:\n%s", described)
	}
	for _, m := range try {
		url, cmd := m[1], m[3]
		r := withPassword.run(t, "rcon", url, cmd)
		if r.code != ExitOK || !strings.Contains(r.stdout, "Alice") || !strings.Contains(r.stdout, "Ünïcode Bob") {
			t.Errorf("%s %s: exit %d, stdout %q\nstderr: %s", url, cmd, r.code, r.stdout, r.stderr)
		}
		r = gsqCase{vars: map[string]string{"RCON_PASSWORD": "not-it"}}.run(t, "rcon", url, cmd)
		if r.code != ExitAuth {
			t.Errorf("%s with a wrong password: exit %d, want %d\nstderr: %s", url, r.code, ExitAuth, r.stderr)
		}
	}
	if strings.Contains(described, testPassword) {
		t.Errorf("serve printed the password:\n%s", described)
	}
	if code := stop(); code != ExitOK {
		t.Errorf("serve exit %d after the interrupt, want 0", code)
	}
}

func TestServeConsoleUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--fleet", "2", "--webrcon", "127.0.0.1:0"}, "--webrcon does not apply to --fleet"},
		{[]string{"--addr", "127.0.0.1:0", "--battleye", "127.0.0.1:0", "--battleye-profile", "arma9"}, "--battleye-profile"},
		{[]string{"--addr", "127.0.0.1:0", "--telnet", "256.0.0.1:1"}, "--telnet"},
	} {
		code, _, stderr := runGSQ(t, nil, nil, nil, append([]string{"serve"}, tc.args...)...)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, ExitUsage, tc.want)
		}
	}
}
