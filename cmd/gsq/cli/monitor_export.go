package cli

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gsq-project/gsq/internal/duration"
	"github.com/gsq-project/gsq/store"
)

type exportOptions struct {
	db, format, level, from, to, server string
}

func newMonitorExportCmd(env *Env) *cobra.Command {
	o := &exportOptions{}
	cmd := &cobra.Command{
		Use:   "export [--server NAME] [--from TIME] [--to TIME] [--format csv|jsonl] [--level raw|minute|hour|day]",
		Short: "Write the monitor's history as CSV or JSON lines",
		Long: `Write the history gsq monitor kept to standard output, streaming: the
raw samples (one per poll: time, server, up, players, max_players, bots,
map, version, ping_ms), or the buckets of a rollup level: the figures the
page and the API show, the last minutes (not rolled up yet) included.

TIME is RFC 3339 (2026-11-24T21:00:00Z), a date (2026-11-24, UTC), or a
duration back from now (-24h, -7d). The database may be in use by a running
gsq monitor.

  gsq monitor export --server eu1 --from -24h > eu1.csv
  gsq monitor export --format jsonl --level hour --from 2026-11-01`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMonitorExport(cmd.Context(), env, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.db, "db", "", "the history: a SQLite file, or a postgres:// DSN (default $XDG_STATE_HOME/gsq/monitor.db)")
	f.StringVar(&o.format, "format", "csv", "csv or jsonl")
	f.StringVar(&o.level, "level", "raw", "raw (every poll), minute, hour or day")
	f.StringVar(&o.from, "from", "", "the first time (default: all)")
	f.StringVar(&o.to, "to", "", "the end, excluded (default: now)")
	f.StringVar(&o.server, "server", "", "one server's history (default: every server's)")
	return cmd
}

func runMonitorExport(ctx context.Context, env *Env, o *exportOptions) error {
	eo := store.ExportOptions{Format: strings.ToLower(o.format), Span: store.Span{Server: o.server}}
	if eo.Format == "json" {
		eo.Format = "jsonl"
	}
	if eo.Format != "csv" && eo.Format != "jsonl" {
		return usageError("--format: csv or jsonl, not %q", o.format)
	}
	var err error
	if eo.Level, err = store.ParseLevel(o.level); err != nil {
		return usageError("--level: %v", err)
	}
	now := time.Now()
	if eo.From, err = exportTime("--from", o.from, now); err != nil {
		return err
	}
	if eo.To, err = exportTime("--to", o.to, now); err != nil {
		return err
	}
	st, err := openHistory(ctx, "export", o.db)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := store.Export(ctx, st, env.Stdout, eo); err != nil {
		if errors.Is(err, store.ErrUnknownServer) {
			return usageError("--server: %v", err)
		}
		return withCode(ExitFailure, err)
	}
	return st.Close()
}

// exportTime reads a --from or --to value in the API's grammar
// (duration.ParseTime); "" is the zero time.
func exportTime(flag, s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := duration.ParseTime(s, now)
	if err != nil {
		return time.Time{}, usageError("%s: %v", flag, err)
	}
	return t, nil
}
