package cli

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/gsq-project/gsq/internal/duration"
)

// durationFlag defines a duration flag of cmd with a default. It reads
// durations in gsq's one grammar (package internal/duration), the one
// of the config files: 30s, 5m, 1h30m, 1d. Help shows no default when
// it is zero.
func durationFlag(cmd *cobra.Command, p *time.Duration, name string, value time.Duration, usage string) {
	*p = value
	cmd.Flags().Var((*duration.Duration)(p), name, usage)
	if value == 0 {
		cmd.Flags().Lookup(name).DefValue = ""
	}
}
