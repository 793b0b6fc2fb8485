package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/gsq-project/gsq/internal/sim"
	"github.com/gsq-project/gsq/protocol"
	"github.com/gsq-project/gsq/rcon"
)

func init() { register(newDemoCmd) }

func newDemoCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "demo",
		Short: "Start a simulated server in-process and show a query and an RCON session against it",
		Long: `Start a simulated game server on 127.0.0.1 (a random free port), then
show what gsq does with it: an A2S query of its info, players and rules, and
an RCON session. Nothing leaves the machine.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDemo(cmd.Context(), env)
		},
	}
}

func runDemo(ctx context.Context, env *Env) error {
	password := randomPassword()
	cfg := simConfig{
		addr:         "127.0.0.1:0",
		content:      sim.Default(),
		ownContent:   true,
		rconPassword: password,
		rconDialect:  rcon.DialectSource,
	}
	s, err := startSimulation(cfg)
	if err != nil {
		return err
	}
	defer func() {
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		s.Shutdown(shutdownCtx)
	}()
	addr := s.Addr()
	out := env.Stdout
	fmt.Fprintf(out, "Started a simulated game server on %s (A2S and OGP over UDP, RCON over TCP).\n\n", addr)

	fmt.Fprintf(out, "$ gsq query %s\n", addr)
	client := &protocol.Client{}
	defer client.Close()
	q, err := protocol.Default.Prepare(protocol.Settings{})
	if err != nil {
		return err
	}
	if err := printQuery(ctx, out, client, q, addr); err != nil {
		return err
	}

	fmt.Fprintf(out, "\n$ gsq rcon %s status players \"say hello\"   (password from GSQ_RCON_PASSWORD)\n", addr)
	rc, err := rcon.Dial(ctx, addr.String(), password, &rcon.Options{Timeout: 2 * time.Second})
	if err != nil {
		return withCode(ExitFailure, fmt.Errorf("demo rcon: %w", err))
	}
	defer rc.Close()
	for _, command := range []string{"status", "players", "say hello"} {
		output, err := rc.Exec(ctx, command)
		if err != nil {
			return withCode(ExitFailure, fmt.Errorf("demo rcon %q: %w", command, err))
		}
		fmt.Fprintf(out, "> %s\n%s", command, output)
		if len(output) > 0 && output[len(output)-1] != '\n' {
			fmt.Fprintln(out)
		}
	}
	fmt.Fprintf(out, "\nNext: run 'gsq serve' in one terminal and 'gsq query %[1]s' or 'gsq rcon %[1]s' in another,\n"+
		"or 'gsq monitor --demo' to watch a simulated fleet over time in your browser.\n", defaultServeAddr)
	return nil
}

// randomPassword makes the demo's one-off RCON password.
func randomPassword() string {
	b := make([]byte, 12)
	rand.Read(b)
	return hex.EncodeToString(b)
}
