//go:build interop

package a2s_test

import (
	"encoding/json"
	"os/exec"
	"sort"
	"strconv"
	"testing"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/a2s/a2stest"
	"github.com/gsq-project/gsq/internal/peertest"
)

// qstatServer is the part of quakestat's -json output we check.
type qstatServer struct {
	Status     string            `json:"status"`
	Name       string            `json:"name"`
	Map        string            `json:"map"`
	NumPlayers int               `json:"numplayers"`
	MaxPlayers int               `json:"maxplayers"`
	Rules      map[string]string `json:"rules"`
	Players    []struct {
		Name  string `json:"name"`
		Score int    `json:"score"`
	} `json:"players"`
}

// TestInteropQstat has qstat (quakestat -a2s -P -R -json, installed by
// .ci/install-peers) query our server.
func TestInteropQstat(t *testing.T) {
	bin, err := exec.LookPath("quakestat")
	if err != nil {
		t.Fatalf("qstat is not installed (apt-get install qstat, or run .ci/install-peers): %v", err)
	}
	forEachInteropProfile(t, func(t *testing.T, srv *a2stest.Server, wantInfo *a2s.Info, wantPlayers *a2s.Players, wantRules *a2s.Rules) {
		out := peertest.Run(t, bin, "-a2s", srv.Addr().String(), "-P", "-R", "-json", "-timeout", "10")
		var got []qstatServer
		if err := json.Unmarshal(out, &got); err != nil || len(got) != 1 {
			t.Fatalf("quakestat output (%v):\n%s", err, out)
		}
		s := got[0]
		if s.Status != "online" || s.Name != string(wantInfo.Name) || s.Map != string(wantInfo.Map) ||
			s.NumPlayers != int(wantInfo.Players) || s.MaxPlayers != int(wantInfo.MaxPlayers) {
			t.Errorf("server: got %+v", s)
		}
		// Known qstat behaviour: the "protocol" rule is printed in hex.
		if s.Rules["protocol"] != strconv.FormatUint(uint64(wantInfo.Protocol), 16) {
			t.Errorf("protocol rule %q, want %x (qstat prints it in hex)", s.Rules["protocol"], wantInfo.Protocol)
		}
		for _, r := range wantRules.List {
			if v := s.Rules[string(r.Name)]; v != string(r.Value) {
				t.Errorf("rule %s = %q, want %q", r.Name, v, r.Value)
			}
		}
		// Known qstat behaviour: players are listed last first.
		var names, wantNames []string
		for i, pl := range s.Players {
			names = append(names, pl.Name)
			want := wantPlayers.List[len(wantPlayers.List)-1-i]
			if pl.Name != string(want.Name) || pl.Score != int(want.Score) {
				t.Errorf("player %d: got %+v, want %s %d", i, pl, want.Name, want.Score)
			}
		}
		for _, pl := range wantPlayers.List {
			wantNames = append(wantNames, string(pl.Name))
		}
		sort.Strings(names)
		sort.Strings(wantNames)
		if len(names) != len(wantNames) {
			t.Errorf("players %q, want %q", names, wantNames)
		}
	})
}
