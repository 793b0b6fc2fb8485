package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/monitor"
	"github.com/gsq-project/gsq/protocol"
)

// TestMonitorFileTakesWhatScanTakes gives one list, with duplicates and
// bad lines, to gsq scan's reader and to gsq monitor -f (issue 19, user
// row 7): both take the same servers, in the same order.
func TestMonitorFileTakesWhatScanTakes(t *testing.T) {
	t.Parallel()
	list := testutil.WriteFile(t, filepath.Join(t.TempDir(), "list.txt"),
		"# fleet\n127.0.0.1\n127.0.0.1:27015\nnot a host:1\n127.0.0.1:99999\nLOCALHOST:27016 # a name\nlocalhost:27016\n::1\n[::1]:27015\n127.0.0.2:27017\n")
	sources, err := scanSources(&Env{}, list, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer closeSources(sources)
	duplicates := 0
	feed := newTargetFeed(protocol.Default.DefaultPort, func() { duplicates++ })
	var scanned []string
	invalid := 0
	for tg := range feed.targets(context.Background(), sources) {
		if tg.Err != nil {
			invalid++
			continue
		}
		scanned = append(scanned, tg.String())
	}
	var warnings []string
	cfg, err := (&monitor.Loader{Lists: []string{list}, Warnf: func(format string, args ...any) {
		warnings = append(warnings, fmt.Sprintf(format, args...))
	}}).Load()
	if err != nil {
		t.Fatalf("gsq monitor -f refuses what gsq scan takes: %v", err)
	}
	var monitored []string
	for _, s := range cfg.Servers {
		monitored = append(monitored, s.Address)
	}
	if !slices.Equal(scanned, monitored) || len(scanned) != 4 {
		t.Errorf("gsq scan takes %q, gsq monitor -f %q", scanned, monitored)
	}
	if len(warnings) != invalid+duplicates || invalid != 2 || duplicates != 3 {
		t.Errorf("gsq scan: %d invalid lines, %d duplicates; gsq monitor -f warns %d times:\n%q", invalid, duplicates, len(warnings), warnings)
	}
}
