package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/gsq-project/gsq/internal/sim"
)

// runFleet serves o.fleet simulated A2S and OGP servers until ctx ends.
func runFleet(ctx context.Context, stderr io.Writer, o *serveOptions) error {
	if o.basePort+o.fleet-1 > 65535 {
		return usageError("--fleet %d from --base-port %d does not fit in ports 1-65535", o.fleet, o.basePort)
	}
	cfg := sim.FleetConfig{
		N:         o.fleet,
		BasePort:  o.basePort,
		Host:      "127.0.0.1",
		Loss:      o.loss,
		Reorder:   o.reorder,
		Duplicate: o.duplicate,
		Seed:      o.seed,
		Challenge: !o.noChallenge,
	}
	logf := func(format string, args ...any) { fmt.Fprintf(stderr, "gsq: "+format+"\n", args...) }
	return sim.RunFleet(ctx, cfg, logf)
}
