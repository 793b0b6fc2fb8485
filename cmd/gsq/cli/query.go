package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gsq-project/gsq/a2s"
	"github.com/spf13/cobra"
)

func init() { register(newQueryCmd) }

// queryOptions are the flags of `gsq query`, shared by every protocol.
type queryOptions struct {
	protocol string
	json     bool
	timeout  time.Duration
	retries  int
	debug    bool
	padInfo  bool // A2S: pad INFO requests to 1200 bytes
	info     bool
	players  bool
	rules    bool
	fields   string // OGP: what to request
	dialect  string // OGP: v0.91 or v1
	color    bool   // render colours (stdout is a terminal)

	a2sOnce   sync.Once
	a2sClient *a2s.Client // shared by every A2S target of one run
}

// queryOutcome is what querying one server produced, ready to print.
type queryOutcome struct {
	json   any               // the DESIGN.md envelope
	render func(w io.Writer) // the human-readable table
	code   int               // this server's exit code
	hint   string            // optional hint for stderr
	usage  error             // a bad target: nothing is printed, gsq exits 2
}

// protocolQuery queries one target with one protocol. Debug output goes
// to stderr as it happens.
type protocolQuery func(ctx context.Context, env *Env, o *queryOptions, target string) queryOutcome

// queryProtocols maps --protocol values to their implementations; each
// protocol's file adds itself in an init function.
var queryProtocols = map[string]protocolQuery{}

func newQueryCmd(env *Env) *cobra.Command {
	o := &queryOptions{}
	cmd := &cobra.Command{
		Use:   "query HOST[:PORT]...",
		Short: "Ask servers for their info, players and rules",
		Long: `Ask one or more game servers for their info, players and rules.

A2S (the default protocol) uses port 27015 when none is given; write IPv6
addresses as [addr]:port. OGP has no standard port, so give one.
When one section fails, the others still print.

Exit codes: 0 every section answered, 1 a server answered badly,
2 usage error, 3 no answer in time or unreachable.`,
		Example: `  gsq query 127.0.0.1:27015
  gsq query --json play.example.com
  gsq query --protocol ogp 127.0.0.1:27015`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError("query needs at least one HOST[:PORT]")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runQuery(cmd.Context(), env, o, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.protocol, "protocol", "a2s", "query protocol: a2s or ogp")
	f.BoolVar(&o.json, "json", false, "print one JSON object per server (the documented contract)")
	f.DurationVar(&o.timeout, "timeout", 2*time.Second, "time to wait for each answer before retrying")
	f.IntVar(&o.retries, "retries", 2, "how many times to resend an unanswered request")
	f.BoolVar(&o.debug, "debug", false, "print an annotated hex dump of every datagram on stderr")
	f.BoolVar(&o.padInfo, "pad-info", false, "A2S: pad the INFO request to 1200 bytes (Valve's 2020 alternative to the challenge; servers that accept it answer one round trip sooner)")
	f.BoolVar(&o.info, "info", false, "ask for info (default: info, players and rules)")
	f.BoolVar(&o.players, "players", false, "ask for the player list")
	f.BoolVar(&o.rules, "rules", false, "ask for the rules")
	f.StringVar(&o.fields, "fields", "", "OGP: comma-separated fields to request: info, teams, players, rules, addons, limits, colors (default all)")
	f.StringVar(&o.dialect, "dialect", "v0.91", "OGP: protocol dialect, v0.91 or v1")
	return cmd
}

func runQuery(ctx context.Context, env *Env, o *queryOptions, targets []string) error {
	query, ok := queryProtocols[o.protocol]
	if !ok {
		names := make([]string, 0, len(queryProtocols))
		for n := range queryProtocols {
			names = append(names, n)
		}
		sort.Strings(names)
		return usageError("unknown protocol %q (known: %s)", o.protocol, strings.Join(names, ", "))
	}
	if o.timeout <= 0 {
		return usageError("--timeout must be positive")
	}
	if o.retries < 0 {
		return usageError("--retries must not be negative")
	}
	if !o.info && !o.players && !o.rules {
		o.info, o.players, o.rules = true, true, true
	}
	o.color = !o.json && env.IsTerminal(env.Stdout)

	// Query every target at once, but print in the order given.
	outcomes := make([]queryOutcome, len(targets))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	for i, t := range targets {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			outcomes[i] = query(ctx, env, o, t)
		}()
	}
	wg.Wait()

	code := ExitOK
	enc := json.NewEncoder(env.Stdout)
	enc.SetEscapeHTML(false)
	for i, out := range outcomes {
		if out.usage != nil {
			return out.usage
		}
		if o.json {
			if err := enc.Encode(out.json); err != nil {
				return err
			}
		} else {
			if i > 0 {
				fmt.Fprintln(env.Stdout)
			}
			out.render(env.Stdout)
		}
		if out.hint != "" {
			fmt.Fprintf(env.Stderr, "gsq: hint: %s\n", out.hint)
		}
		code = worseExit(code, out.code)
	}
	return silentExit(code)
}
