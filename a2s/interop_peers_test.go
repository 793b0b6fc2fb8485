//go:build interop

package a2s_test

import (
	"testing"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/a2s/a2stest"
)

// interopProfiles are the profiles every peer must read right.
var interopProfiles = []string{"modern", "legacy", "split-out-of-order"}

// forEachInteropProfile runs fn against a server of each interop profile.
func forEachInteropProfile(t *testing.T, fn func(t *testing.T, srv *a2stest.Server, info *a2s.Info, players *a2s.Players, rules *a2s.Rules)) {
	for _, name := range interopProfiles {
		t.Run(name, func(t *testing.T) {
			p, _ := a2stest.LookupProfile(name)
			srv := a2stest.NewServer(p)
			defer srv.Close()
			info, players, rules := p.Content()
			fn(t, srv, info, players, rules)
		})
	}
}
