//go:build interop

package a2s_test

import (
	"context"
	"errors"
	"os/exec"
	"testing"
	"time"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/a2s/a2stest"
)

// interopProfiles are the profiles every peer must read right.
var interopProfiles = []string{"modern", "legacy", "split-out-of-order"}

// forEachInteropProfile runs fn against a server of each interop profile.
func forEachInteropProfile(t *testing.T, fn func(t *testing.T, srv *a2stest.Server, info *a2s.Info, players *a2s.Players, rules *a2s.Rules)) {
	for _, name := range interopProfiles {
		t.Run(name, func(t *testing.T) {
			p, _ := a2stest.ProfileByName(name)
			srv := a2stest.NewServer(p)
			defer srv.Close()
			info, players, rules := profileContent(p)
			fn(t, srv, info, players, rules)
		})
	}
}

// runPeer runs a peer program (bounded to 30s) and returns its stdout.
func runPeer(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, args...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("%s: %v\n%s", bin, err, ee.Stderr)
		}
		t.Fatalf("%s: %v", bin, err)
	}
	return out
}
