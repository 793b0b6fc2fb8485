//go:build interop

package mcquery_test

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/gsq-project/gsq/internal/peertest"
	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/minecraft/mcquery"
	"github.com/gsq-project/gsq/minecraft/mctest"
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
		Name string `json:"name"`
	} `json:"players"`
}

// TestInteropQstat has qstat's -gs4 (installed by .ci/install-peers) query
// our Query servers: vanilla, Geyser's key order, PocketMine's negative
// tokens.
func TestInteropQstat(t *testing.T) {
	bin, err := exec.LookPath("quakestat")
	if err != nil {
		t.Fatalf("qstat is not installed (apt-get install qstat, or run .ci/install-peers): %v", err)
	}
	for _, name := range []string{"vanilla", "pocketmine"} {
		t.Run(name, func(t *testing.T) {
			srv := mctest.Start(t, name)
			addr := srv.Addr()
			if name == "pocketmine" {
				addr = srv.BedrockAddr()
			}
			out := peertest.Run(t, bin, "-gs4", addr.String(), "-P", "-R", "-json", "-timeout", "10")
			var got []qstatServer
			if err := json.Unmarshal(out, &got); err != nil || len(got) != 1 {
				t.Fatalf("quakestat output (%v):\n%s", err, out)
			}
			full, _, err := (&mcquery.Client{}).FullStat(testutil.Context(t), addr)
			if err != nil {
				t.Fatal(err)
			}
			q := got[0]
			if q.Status != "online" || q.NumPlayers != int(full.NumPlayers()) || q.MaxPlayers != int(full.MaxPlayers()) {
				t.Errorf("qstat %+v\nwe %+v", q, full)
			}
			for _, key := range []string{"gametype", "game_id", "version", "plugins", "hostport", "hostip"} {
				v, ok := q.Rules[key]
				if w, _ := full.Value(key); !ok || v != w.String() {
					t.Errorf("rule %s: qstat %q (%v), we %q", key, v, ok, w)
				}
			}
			// Known qstat behaviour: it drops the § of a colour code and
			// keeps the code's letter ("§6" becomes "6"); a Minecraft code
			// is both characters (rcon/mctext strips them).
			if want := strings.ReplaceAll(full.MOTD().String(), "§", ""); q.Name != want {
				t.Errorf("name: qstat %q, want %q", q.Name, want)
			}
			var names, want []string
			for _, p := range q.Players {
				names = append(names, p.Name)
			}
			for _, p := range full.Players {
				want = append(want, p.String())
			}
			slices.Sort(names)
			slices.Sort(want)
			if !slices.Equal(names, want) {
				t.Errorf("players: qstat %q, we %q", names, want)
			}
		})
	}
}
