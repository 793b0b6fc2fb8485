package cli

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/gsq-project/gsq/store"
)

func newMonitorMigrateCmd(env *Env) *cobra.Command {
	var from, db string
	cmd := &cobra.Command{
		Use:   "migrate [--from monitor.db] --db postgres://...",
		Short: "Move a SQLite history into PostgreSQL, to run a fleet or an API node on it",
		Long: `Copy the whole history gsq monitor kept in a SQLite file into PostgreSQL:
samples, rollups, sessions, players, map changes, incidents, maintenance
windows and the alert journal, with the watermarks, so that a fleet of
workers (--nats) or an API node (--role api) carries on from it. The
SQLite file keeps its history (it is opened as gsq monitor opens it: the
schema of an older gsq's file is brought up to date).

The copy is one transaction: it is whole or not at all. The PostgreSQL
schema must hold no history: name a new one with ?search_path=NAME in the
URL (gsq creates it; the default is gsq). Stop gsq monitor first: what it
writes once the copy has begun is not copied.

  gsq monitor migrate --db postgres://gsq@db.example:5432/gsq
  gsq monitor migrate --from old.db --db 'postgres://gsq@db.example/gsq?search_path=eu'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMonitorMigrate(cmd.Context(), env, from, db)
		},
	}
	f := cmd.Flags()
	f.StringVar(&from, "from", "", "the SQLite history to copy (default $XDG_STATE_HOME/gsq/monitor.db)")
	f.StringVar(&db, "db", "", "the PostgreSQL history to copy it into (postgres://...)")
	return cmd
}

func runMonitorMigrate(ctx context.Context, env *Env, from, db string) error {
	if !isPostgres(db) {
		return usageError("--db: the history moves into PostgreSQL: give postgres://... (the SQLite file is --from)")
	}
	if isPostgres(from) {
		return usageError("--from: the SQLite file to copy, not a PostgreSQL URL")
	}
	src, err := openHistory(ctx, "migrate", from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := store.Open(ctx, db)
	if err != nil {
		return withCode(ExitFailure, err)
	}
	defer dst.Close()

	log := &logger{w: env.Stderr}
	last := time.Now()
	report, err := store.Copy(ctx, dst, src, func(p store.CopyProgress) {
		// A line per table, and one every few seconds through a long one.
		if p.Done || time.Since(last) >= 5*time.Second {
			last = time.Now()
			more := "..."
			if p.Done {
				more = ""
			}
			log.Printf("monitor migrate: %s: %d rows%s", p.Table, p.Rows, more)
		}
	})
	if err != nil {
		return withCode(ExitFailure, fmt.Errorf("monitor migrate: nothing was copied: %w", err))
	}
	if err := dst.Close(); err != nil {
		return withCode(ExitFailure, err)
	}
	fmt.Fprintf(env.Stdout, "copied the history of %s into %s in %.1fs\n", report.From, report.To, report.Elapsed.Seconds())
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TABLE\tROWS")
	for _, t := range report.Tables {
		fmt.Fprintf(tw, "%s\t%d\n", t.Table, t.Rows)
	}
	return tw.Flush()
}
