package cli

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/gsq-project/gsq/internal/sim"
	"github.com/gsq-project/gsq/monitor"
	"github.com/gsq-project/gsq/store"
)

// demoInterval is how often --demo polls, unless --interval says: often
// enough that the charts fill within a minute.
const demoInterval = 2 * time.Second

// startDemo starts --demo's simulated fleet and points the loader at it:
// its servers, a fast interval, a history in a temporary directory
// (unless --db is given) and the default port, or a free one when that
// is taken. stop ends the fleet and removes the temporary history.
func startDemo(env *Env, l *monitor.Loader, o *monitorOptions) (stop func(), err error) {
	if o.demoSize < 1 || o.demoSize > 100 {
		return nil, usageError("--demo-servers: from 1 to 100, not %d", o.demoSize)
	}
	fleet, err := sim.StartLiveFleet(sim.LiveConfig{N: o.demoSize, Tick: 3 * time.Second, Seed: uint64(time.Now().UnixNano())})
	if err != nil {
		return nil, withCode(ExitFailure, err)
	}
	var dir string
	stop = func() {
		fleet.Close()
		if dir != "" {
			os.RemoveAll(dir)
		}
	}
	for i := range fleet.Len() {
		l.Targets = append(l.Targets, fmt.Sprintf("demo-%d=%s", i+1, fleet.Addr(i)))
	}
	if l.Interval == 0 {
		l.Interval = demoInterval
	}
	if l.DownAfter == 0 {
		l.DownAfter = 3 * l.Interval
	}
	if l.DB == "" {
		if dir, err = os.MkdirTemp("", "gsq-demo-"); err != nil {
			stop()
			return nil, withCode(ExitFailure, err)
		}
		l.DB = filepath.Join(dir, "monitor.db")
	}
	if l.Listen == "" {
		l.Listen = monitor.DefaultListen
		if ln, err := net.Listen("tcp", l.Listen); err != nil {
			l.Listen = "127.0.0.1:0" // the default port is taken: any free one
		} else {
			ln.Close()
		}
	}
	fmt.Fprintf(env.Stdout, "gsq monitor --demo: %s on %s and up; players come and go every few seconds.\n",
		plural(fleet.Len(), "simulated server"), fleet.Addr(0).Addr())
	end := "Ctrl-C stops the demo and deletes its history."
	if dir == "" {
		end = "Ctrl-C stops the demo; its history stays in " + store.Describe(l.DB) + "."
	}
	fmt.Fprintf(env.Stdout, "Open the page below: the charts fill within a minute. %s\n", end)
	return stop, nil
}
