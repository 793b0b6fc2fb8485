package cli

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gsq-project/gsq/store"
)

func newMonitorForgetCmd(env *Env) *cobra.Command {
	var db string
	cmd := &cobra.Command{
		Use:   "forget-player NAME",
		Short: "Delete a player's history: every session of that name, on every server",
		Long: `Delete every session the monitor kept of the player named NAME, on every
server, and the name itself. The name must match exactly, as the servers
sent it (the page's player search finds it).

A running gsq monitor that has the player online goes on without that
session: the player is tracked again once they join a server again. The
database may be in use by a running gsq monitor.

  gsq monitor forget-player 'Alice'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMonitorForget(cmd.Context(), env, db, args[0])
		},
	}
	cmd.Flags().StringVar(&db, "db", "", "the history: a SQLite file, or a postgres:// DSN (default $XDG_STATE_HOME/gsq/monitor.db)")
	return cmd
}

func runMonitorForget(ctx context.Context, env *Env, db, name string) error {
	if name == "" {
		return usageError("forget-player: give the player's name")
	}
	st, err := openHistory(ctx, "forget-player", db)
	if err != nil {
		return err
	}
	defer st.Close()
	n, err := st.ForgetPlayer(ctx, name)
	if err != nil {
		return withCode(ExitFailure, err)
	}
	if err := st.Close(); err != nil {
		return withCode(ExitFailure, err)
	}
	fmt.Fprintf(env.Stdout, "forgot %q: %d sessions deleted\n", name, n)
	return nil
}

// openHistory opens the monitor's existing history for a subcommand
// (export, forget-player, migrate): db, or the default path; a SQLite file that
// is not there is an error rather than a new, empty database.
func openHistory(ctx context.Context, command, dsn string) (store.Store, error) {
	var err error
	if dsn == "" {
		if dsn, err = store.DefaultPath(); err != nil {
			return nil, withCode(ExitFailure, err)
		}
	}
	if !strings.Contains(dsn, "://") && !strings.HasPrefix(dsn, "file:") {
		if _, err := os.Stat(dsn); err != nil {
			return nil, withCode(ExitFailure, fmt.Errorf("monitor %s: no history at %s: %w", command, dsn, err))
		}
	}
	st, err := store.Open(ctx, dsn)
	if err != nil {
		return nil, withCode(ExitFailure, err)
	}
	return st, nil
}
