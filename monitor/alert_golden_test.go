package monitor

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gsq-project/gsq/result"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestAlertGolden pins each format's body for a down and an up alert, so
// that a change of shape shows in review. Run with -update to rewrite.
func TestAlertGolden(t *testing.T) {
	t.Parallel()
	name, mapName, players, maxp := "EU #1 | dust2 24/7", "de_dust2", 12, 24
	sum := &result.Summary{Name: &name, Map: &mapName, Players: &players, MaxPlayers: &maxp}
	since := t0.Add(-90 * time.Second)
	alerts := map[string]*Alert{
		"down": {Version: 1, Kind: AlertDown, Server: "eu-1", Target: "203.0.113.10:27015", Protocol: "a2s",
			Labels: map[string]string{"region": "eu"}, Time: t0, Summary: sum, Failures: 3, Since: &since,
			Error: &result.Error{Kind: result.KindTimeout, Message: "no answer"}},
		"up": {Version: 1, Kind: AlertUp, Server: "eu-1", Target: "203.0.113.10:27015", Protocol: "a2s",
			Time: t0.Add(5 * time.Minute), Summary: sum, Since: &since, DowntimeSeconds: 390},
	}
	for kind, a := range alerts {
		for _, f := range []Format{FormatJSON, FormatDiscord, FormatSlack} {
			b, err := body(f, a)
			if err != nil {
				t.Fatal(err)
			}
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
