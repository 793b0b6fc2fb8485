//go:build interop

package interop_test

import (
	"testing"
	"time"

	goa2s "github.com/rumblefrog/go-a2s"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/a2s/a2stest"
)

// answers returns what a server of profile p answers.
func answers(p a2stest.Profile) (*a2s.Info, *a2s.Players, *a2s.Rules) {
	info, players, rules := p.Info, p.Players, p.Rules
	if info == nil {
		info = a2stest.DefaultInfo()
	}
	if players == nil {
		players = a2stest.DefaultPlayers()
	}
	if rules == nil {
		rules = a2stest.DefaultRules()
	}
	return info, players, rules
}

// TestInteropGoA2S has rumblefrog/go-a2s v1.0.2 query our server in the
// profiles every peer must read right (modern: challenge on every query,
// rules in 3 Source fragments; legacy; split-out-of-order).
func TestInteropGoA2S(t *testing.T) {
	for _, name := range []string{"modern", "legacy", "split-out-of-order"} {
		t.Run(name, func(t *testing.T) { goA2SAgainst(t, name) })
	}
}

// goA2SAgainst has go-a2s query a server of the named profile.
func goA2SAgainst(t *testing.T, name string) {
	p, err := a2stest.LookupProfile(name)
	if err != nil {
		t.Fatal(err)
	}
	srv := a2stest.NewServer(p)
	defer srv.Close()
	wantInfo, wantPlayers, wantRules := answers(p)
	c, err := goa2s.NewClient(srv.Addr().String(), goa2s.TimeoutOption(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	info, err := c.QueryInfo()
	if err != nil {
		t.Fatalf("QueryInfo: %v", err)
	}
	if info.Name != string(wantInfo.Name) || info.Map != string(wantInfo.Map) ||
		info.Players != wantInfo.Players || info.MaxPlayers != wantInfo.MaxPlayers ||
		info.ID != wantInfo.ShortAppID || info.Version != string(wantInfo.Version) {
		t.Errorf("info: got %+v", info)
	}
	if wantInfo.EDF&0x20 != 0 && (info.ExtendedServerInfo == nil || info.ExtendedServerInfo.Keywords != string(wantInfo.Keywords)) {
		t.Errorf("keywords: got %+v", info.ExtendedServerInfo)
	}

	players, err := c.QueryPlayer()
	if err != nil {
		t.Fatalf("QueryPlayer: %v", err)
	}
	if int(players.Count) != len(wantPlayers.List) || len(players.Players) != len(wantPlayers.List) {
		t.Fatalf("players: count %d, %d entries", players.Count, len(players.Players))
	}
	for i, pl := range players.Players {
		want := wantPlayers.List[i]
		// A known go-a2s bug: Score is read as uint32,
		// so negative scores come out as their two's complement.
		if pl.Name != string(want.Name) || pl.Score != uint32(want.Score) || pl.Duration != want.Duration {
			t.Errorf("player %d: got %+v, want %+v", i, pl, want)
		}
	}

	rules, err := c.QueryRules()
	if err != nil {
		t.Fatalf("QueryRules: %v", err)
	}
	// go-a2s keeps rules in a map: order and duplicates are lost.
	if int(rules.Count) != len(wantRules.List) || len(rules.Rules) != len(wantRules.List) {
		t.Fatalf("rules: count %d, %d entries, want %d", rules.Count, len(rules.Rules), len(wantRules.List))
	}
	for _, r := range wantRules.List {
		if got := rules.Rules[string(r.Name)]; got != string(r.Value) {
			t.Errorf("rule %s = %q, want %q", r.Name, got, r.Value)
		}
	}
}

// TestInteropGoA2SOversized checks go-a2s against the oversized profile
// (a ~1900-byte unsplit INFO, as Squad and Rust send). Known go-a2s bug
// (go-a2s issues #8 and #11): its default 1400-byte buffer
// truncates the datagram and the unchecked reader panics; raising
// SetMaxPacketSize is the documented workaround and then it reads our
// reply right.
func TestInteropGoA2SOversized(t *testing.T) {
	p, _ := a2stest.LookupProfile("oversized")
	srv := a2stest.NewServer(p)
	defer srv.Close()
	want, _, _ := answers(p)

	c, err := goa2s.NewClient(srv.Addr().String(), goa2s.TimeoutOption(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	panicked := func() (p any) {
		defer func() { p = recover() }()
		_, _ = c.QueryInfo()
		return nil
	}()
	if panicked == nil {
		t.Error("go-a2s read a 1900-byte INFO with its 1400-byte buffer without panicking: has the known bug been fixed?")
	}

	big, err := goa2s.NewClient(srv.Addr().String(), goa2s.TimeoutOption(5*time.Second), goa2s.SetMaxPacketSize(65535))
	if err != nil {
		t.Fatal(err)
	}
	defer big.Close()
	info, err := big.QueryInfo()
	if err != nil {
		t.Fatal(err)
	}
	if info.ExtendedServerInfo == nil || info.ExtendedServerInfo.Keywords != string(want.Keywords) {
		t.Errorf("keywords not read back: %+v", info.ExtendedServerInfo)
	}
}
