package sim

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/gsq-project/gsq/a2s"
)

// TestLiveFleet checks that a live fleet's players come and go, that its
// servers announce the names given, and that a stopped server is
// unreachable until started again on its port.
func TestLiveFleet(t *testing.T) {
	t.Parallel()
	f, err := StartLiveFleet(LiveConfig{N: 2, Tick: 20 * time.Millisecond, Seed: 1, Names: []string{"<b>first</b>"}})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c := &a2s.Client{Timeout: 2 * time.Second}
	defer c.Close()
	ctx := context.Background()

	info, err := c.Info(ctx, f.Addr(0))
	if err != nil || info.Info.Name.String() != "<b>first</b>" || f.Name(0) != "<b>first</b>" {
		t.Fatalf("server 0: %+v, %v", info, err)
	}
	names := func() []string {
		p, err := c.Players(ctx, f.Addr(1))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, pl := range p.List {
			out = append(out, pl.Name.String())
		}
		return out
	}
	first := names()
	changed := false
	// Players change at nearly every tick (20 ms): within 5 s for sure.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		if !slices.Equal(names(), first) {
			changed = true
			break
		}
	}
	if !changed {
		t.Errorf("the players of server 1 never changed from %q", first)
	}

	addr := f.Addr(1)
	f.Stop(1)
	if _, err := c.Info(ctx, addr); !errors.Is(err, a2s.ErrUnreachable) {
		t.Errorf("a stopped server: %v, want unreachable", err)
	}
	if err := f.Start(1); err != nil {
		t.Fatal(err)
	}
	if f.Addr(1) != addr {
		t.Errorf("restarted on %s, not %s", f.Addr(1), addr)
	}
	if _, err := c.Info(ctx, addr); err != nil {
		t.Errorf("a restarted server: %v", err)
	}
}

func TestStartLiveFleetRejects(t *testing.T) {
	for _, cfg := range []LiveConfig{{N: 0}, {N: 1001}, {N: 1, Host: "nowhere"}} {
		if f, err := StartLiveFleet(cfg); err == nil {
			f.Close()
			t.Errorf("%+v: no error", cfg)
		}
	}
}
