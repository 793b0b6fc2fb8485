package peertest

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"
)

// Chromium is the browser the browser tests drive: $GSQ_CHROMIUM, or
// Debian's /usr/bin/chromium. It ends the test when there is none.
func Chromium(t testing.TB) string {
	t.Helper()
	chromium := os.Getenv("GSQ_CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		t.Fatalf("no Chromium at %s (run .ci/install-peers, or set GSQ_CHROMIUM): %v", chromium, err)
	}
	return chromium
}

// Playwright runs the Node script with args in headless Chromium's reach:
// PLAYWRIGHT_CORE names the playwright-core package and CHROMIUM the
// browser, with env added. It returns the script's stdout; a failure, or
// a run longer than limit, ends the test with its stderr and the
// context's words.
func Playwright(t testing.TB, limit time.Duration, script string, args []string, env ...string) []byte {
	t.Helper()
	pw, chromium := Module(t, "playwright-core"), Chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{script}, args...)...)
	cmd.Env = append(append(os.Environ(), "PLAYWRIGHT_CORE="+pw, "CHROMIUM="+chromium), env...)
	return output(t, cmd, script)
}
