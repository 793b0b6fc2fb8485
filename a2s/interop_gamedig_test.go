//go:build interop

package a2s_test

import (
	"encoding/json"
	"slices"
	"sort"
	"testing"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/a2s/a2stest"
	"github.com/gsq-project/gsq/internal/peertest"
)

type gamedigState struct {
	Name       string `json:"name"`
	Map        string `json:"map"`
	NumPlayers int    `json:"numplayers"`
	MaxPlayers int    `json:"maxplayers"`
	Players    []struct {
		Name string `json:"name"`
	} `json:"players"`
	Bots []struct {
		Name string `json:"name"`
	} `json:"bots"`
	Raw struct {
		Protocol int               `json:"protocol"`
		AppID    int               `json:"appId"`
		NumBots  int               `json:"numbots"`
		Rules    map[string]string `json:"rules"`
	} `json:"raw"`
}

// TestInteropGamedig has gamedig 5.3.3 (in .peers/, installed by
// .ci/install-peers) query our server.
func TestInteropGamedig(t *testing.T) {
	forEachInteropProfile(t, func(t *testing.T, srv *a2stest.Server, wantInfo *a2s.Info, wantPlayers *a2s.Players, wantRules *a2s.Rules) {
		out := peertest.Gamedig(t, "protocol-valve", srv.Addr().String())
		var s gamedigState
		if err := json.Unmarshal(out, &s); err != nil {
			t.Fatalf("gamedig output (%v):\n%s", err, out)
		}
		if s.Name != string(wantInfo.Name) || s.Map != string(wantInfo.Map) ||
			s.NumPlayers != int(wantInfo.Players) || s.MaxPlayers != int(wantInfo.MaxPlayers) ||
			s.Raw.Protocol != int(wantInfo.Protocol) || s.Raw.AppID != int(wantInfo.ShortAppID) {
			t.Errorf("state: got %+v", s)
		}
		// Known gamedig behaviour: it moves raw.numbots entries of the
		// player list into "bots", so the names are checked together.
		var names, wantNames []string
		for _, pl := range s.Players {
			names = append(names, pl.Name)
		}
		for _, pl := range s.Bots {
			names = append(names, pl.Name)
		}
		for _, pl := range wantPlayers.List {
			wantNames = append(wantNames, string(pl.Name))
		}
		sort.Strings(names)
		sort.Strings(wantNames)
		if len(s.Bots) != int(wantInfo.Bots) || !slices.Equal(names, wantNames) {
			t.Errorf("players %q and %d bots, want %q with %d bots", names, len(s.Bots), wantNames, wantInfo.Bots)
		}
		if len(s.Raw.Rules) != len(wantRules.List) {
			t.Errorf("%d rules, want %d", len(s.Raw.Rules), len(wantRules.List))
		}
		for _, r := range wantRules.List {
			if v := s.Raw.Rules[string(r.Name)]; v != string(r.Value) {
				t.Errorf("rule %s = %q, want %q", r.Name, v, r.Value)
			}
		}
	})
}
