package peertest

import (
	"bufio"
	"context"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// Start runs a peer that serves until its standard input closes, and
// returns the first line it prints (a server prints its port there). The
// peer is stopped, and waited for, when the test ends; a peer that fails
// to start, or prints nothing within 30 s, ends the test.
func Start(t testing.TB, bin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	cmd := exec.CommandContext(ctx, bin, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("%s: %v", bin, err)
	}
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Wait()
		cancel()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("%s printed no line (%v)\n%s", bin, err, stderr.String())
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	return strings.TrimSpace(line)
}
