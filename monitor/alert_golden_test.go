package monitor

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/result"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestAlertGolden pins each format's body for a down and an up alert,
// and for a group of alerts that go together, as
// its provider sends it to a receiver on loopback, so that a change of
// shape shows in review. Run with -update to rewrite.
func TestAlertGolden(t *testing.T) {
	t.Parallel()
	name, mapName, players, maxp := "EU #1 | dust2 24/7", "de_dust2", 12, 24
	sum := &result.Summary{Name: &name, Map: &mapName, Players: &players, MaxPlayers: &maxp}
	since := t0.Add(-90 * time.Second)
	down := func(name, target string) *Alert {
		return &Alert{Version: 1, Kind: AlertDown, Server: name, Target: target, Protocol: "a2s",
			Labels: map[string]string{"region": "eu"}, Time: t0, Summary: sum, Failures: 3, Since: &since,
			Error: &result.Error{Kind: result.KindTimeout, Message: "no answer"}}
	}
	up := &Alert{Version: 1, Kind: AlertUp, Server: "eu-1", Target: "203.0.113.10:27015", Protocol: "a2s",
		Time: t0.Add(5 * time.Minute), Summary: sum, Since: &since, DowntimeSeconds: 390}
	// A group: three servers of one host down, one of another, and an up.
	group := []*Alert{down("eu-1", "203.0.113.10:27015"), down("eu-2", "203.0.113.10:27016"),
		down("eu-3", "203.0.113.10:27017"), down("us-1", "198.51.100.7:27015"), up}
	alerts := map[string][]*Alert{
		"down":  {down("eu-1", "203.0.113.10:27015")},
		"up":    {up},
		"group": group,
	}
	rc := testutil.NewReceiver(t, nil)
	for kind, a := range alerts {
		for _, f := range []Format{FormatJSON, FormatDiscord, FormatSlack} {
			p := providerKinds[f].new(Webhook{Name: "golden", URL: rc.URL, Format: f}, http.DefaultClient)
			n, err := p.Send(testutil.Context(t), a)
			if err != nil {
				t.Fatal(err)
			}
			if n != len(a) {
				t.Errorf("%s %s: a message of %d alerts, want all %d", kind, f, n, len(a))
			}
			bodies := rc.Bodies()
			b := bodies[len(bodies)-1]
			var pretty bytes.Buffer
			if err := json.Indent(&pretty, b, "", "  "); err != nil {
				t.Fatal(err)
			}
			pretty.WriteByte('\n')
			path := filepath.Join("testdata", "alert-"+kind+"."+string(f)+".json")
			if *update {
				if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(pretty.Bytes(), want) {
				t.Errorf("%s differs from %s:\n%s", kind+" "+string(f), path, pretty.Bytes())
			}
		}
	}
}
