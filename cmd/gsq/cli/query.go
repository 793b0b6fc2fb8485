package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gsq-project/gsq/result"
)

func init() { register(newQueryCmd) }

// Defaults of `gsq query`: a person at a terminal gets an answer within
// the deadline. The sends of one A2S request wait 1 s, 1.5 s and 2.25 s
// (the client lengthens each retry by half the previous wait), 4.75 s in
// all; OGP's wait 1 s each. The retries fit in the deadline.
const (
	defaultQueryDeadline = 5 * time.Second
	defaultQueryTimeout  = time.Second
	defaultQueryRetries  = 2
	// queriesAtOnce bounds the servers of one `gsq query` asked at once.
	queriesAtOnce = 64
)

// queryOptions are the flags of `gsq query`, shared by every protocol.
type queryOptions struct {
	protocol string
	json     bool
	timeout  time.Duration
	deadline time.Duration
	retries  int
	debug    bool
	padInfo  bool // A2S: pad INFO requests to 1200 bytes
	info     bool
	players  bool
	rules    bool
	fields   string // the sections to ask for, comma-separated
	dialect  string // OGP: v0.91 or v1
	color    bool   // render colours (stdout is a terminal)
}

// queryProtocol is one protocol of `gsq query`: it asks a server and
// prints what came back.
type queryProtocol interface {
	name() result.Protocol
	defaultPort() uint16
	// ask queries addr, sending each section's outcome to updates as soon
	// as it is known. It does not close updates.
	ask(ctx context.Context, addr netip.AddrPort, updates chan<- update)
	// render prints section s of r as a table; sectionAll prints every
	// section there is.
	render(w io.Writer, r *result.Result, s result.Section)
	// hint is a line of advice after r, or "".
	hint(r *result.Result) string
	close()
}

// sectionAll stands for the whole of a result, for render.
const sectionAll result.Section = "*"

// An update records in a result one section's outcome (or the address,
// or the failure of the whole server); section is what to print of it on
// a terminal, "" for nothing. The goroutines querying a server send
// updates, and the one goroutine printing applies them: a result has one
// owner.
type update struct {
	section result.Section
	apply   func(*result.Result)
}

// queryProtocols maps --protocol values to the constructors of their
// implementations; each protocol's file adds itself in an init function.
var queryProtocols = map[string]func(env *Env, o *queryOptions) (queryProtocol, error){}

// protocolNames lists the --protocol values, sorted.
func protocolNames() []string {
	names := make([]string, 0, len(queryProtocols))
	for n := range queryProtocols {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func newQueryCmd(env *Env) *cobra.Command {
	o := &queryOptions{}
	cmd := &cobra.Command{
		Use:   "query HOST[:PORT]...",
		Short: "Ask servers for their info, players and rules",
		Long: `Ask one or more game servers for their info, players and rules.

A2S (the default protocol) uses port 27015 when none is given; write IPv6
addresses as [addr]:port. OGP has no standard port, so give one.
A2S asks for the info first; once the server has answered (and given its
challenge), the players and rules together. When one section fails, the
others still print. On a terminal each section prints as it arrives.

Waits: each server takes --deadline (5s) at most, name resolution
included, whatever the retries: what has not answered by then fails with
a timeout. An unanswered request is sent again after --timeout (1s),
--retries (2) times: A2S waits half as long again on each retry
(1s + 1.5s + 2.25s = 4.75s), OGP the same each time (3s). An A2S server
that does not answer the info is not asked for the rest. A closed port is
reported at once (unreachable) when the network says so; a server that
answers with something that is not the protocol is reported (exit 1) when
the deadline passes. Servers are asked 64 at a time, so N servers take at
most the deadline times N/64, rounded up.

Exit codes: 0 every section answered, 1 a server answered badly,
2 usage error, 3 no answer in time or unreachable, 130 interrupted.`,
		Example: `  gsq query 127.0.0.1:27015
  gsq query --json play.example.com
  gsq query --fields info,players --deadline 2s 127.0.0.1
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
	f.BoolVar(&o.json, "json", false, "print one JSON object per server (documented in docs/json.md)")
	f.DurationVar(&o.deadline, "deadline", defaultQueryDeadline, "the most time one server may take, whatever the retries")
	f.DurationVar(&o.timeout, "timeout", defaultQueryTimeout, "time to wait for an answer before sending again (each retry waits half of it longer)")
	f.IntVar(&o.retries, "retries", defaultQueryRetries, "how many times to resend an unanswered request, within the deadline")
	f.BoolVar(&o.debug, "debug", false, "print an annotated hex dump of every datagram on stderr")
	f.BoolVar(&o.padInfo, "pad-info", false, "A2S: pad the INFO request to 1200 bytes (Valve's 2020 alternative to the challenge; servers that accept it answer one round trip sooner)")
	f.BoolVar(&o.info, "info", false, "ask for info (default: info, players and rules)")
	f.BoolVar(&o.players, "players", false, "ask for the player list")
	f.BoolVar(&o.rules, "rules", false, "ask for the rules")
	f.StringVar(&o.fields, "fields", "", "comma-separated sections to ask for: info, players, rules; OGP also teams, addons, limits, colors (default: info, players and rules; all of them with OGP)")
	f.StringVar(&o.dialect, "dialect", "v0.91", "OGP: protocol dialect, v0.91 or v1")
	completeQueryFlags(cmd)
	return cmd
}

func runQuery(ctx context.Context, env *Env, o *queryOptions, args []string) error {
	newProtocol, ok := queryProtocols[strings.ToLower(o.protocol)]
	if !ok {
		return usageError("unknown protocol %q (known: %s)", o.protocol, strings.Join(protocolNames(), ", "))
	}
	switch {
	case o.timeout <= 0:
		return usageError("--timeout must be positive")
	case o.deadline <= 0:
		return usageError("--deadline must be positive")
	case o.retries < 0:
		return usageError("--retries must not be negative")
	}
	o.color = !o.json && env.IsTerminal(env.Stdout)
	p, err := newProtocol(env, o)
	if err != nil {
		return err
	}
	defer p.close()
	// Every target is read before any is asked: a malformed one is a
	// usage error, with nothing sent.
	targets := make([]hostPort, len(args))
	for i, arg := range args {
		if targets[i], err = parseHostPort(arg, p.defaultPort()); err != nil {
			return err
		}
	}

	// Ask queriesAtOnce servers at a time; print in the order given.
	updates := make([]chan update, len(targets))
	for i := range updates {
		updates[i] = make(chan update, 8) // more than a server sends: senders never block
	}
	go func() {
		sem := make(chan struct{}, queriesAtOnce)
		for i, t := range targets {
			sem <- struct{}{}
			go func() {
				defer func() { <-sem }()
				queryOne(ctx, o, p, t, updates[i])
			}()
		}
	}()

	out := bufio.NewWriter(env.Stdout)
	stream := !o.json && env.IsTerminal(env.Stdout)
	code := ExitOK
	var line []byte
	for i := range targets {
		r := result.New(strings.TrimSpace(args[i]), netip.AddrPort{}, p.name())
		if i > 0 && !o.json {
			fmt.Fprintln(out)
		}
		headed := false
		for u := range updates[i] {
			u.apply(r)
			if stream && u.section != "" {
				if !headed {
					renderHeader(out, r)
					headed = true
				}
				p.render(out, r, u.section)
				out.Flush()
			}
		}
		switch {
		case o.json:
			line = append(r.AppendJSON(line[:0]), '\n')
			out.Write(line)
		case !headed:
			renderHeader(out, r)
			p.render(out, r, sectionAll)
		}
		if err := out.Flush(); err != nil {
			return fmt.Errorf("writing results: %w", err)
		}
		if hint := p.hint(r); hint != "" {
			fmt.Fprintf(env.Stderr, "gsq: hint: %s\n", hint)
		}
		code = worseExit(code, resultExitCode(r))
	}
	return silentExit(code)
}

// queryOne asks one server, within the deadline, and closes updates.
func queryOne(ctx context.Context, o *queryOptions, p queryProtocol, t hostPort, updates chan<- update) {
	defer close(updates)
	ctx, cancel := context.WithTimeout(ctx, o.deadline)
	defer cancel()
	addr, err := t.resolve(ctx)
	if err != nil {
		updates <- update{sectionAll, func(r *result.Result) { r.Fail(err) }}
		return
	}
	updates <- update{"", func(r *result.Result) { r.Addr = addr }}
	p.ask(ctx, addr, updates)
}

// renderHeader prints the first line of a server's table: the target,
// the address queried when it reads differently, the protocol and the
// round trip.
func renderHeader(w io.Writer, r *result.Result) {
	fmt.Fprint(w, printable(r.Target))
	if r.Addr.IsValid() && r.Addr.String() != r.Target {
		fmt.Fprintf(w, " (%s)", r.Addr)
	}
	fmt.Fprintf(w, "  %s", r.Protocol)
	if r.OGP != nil {
		fmt.Fprintf(w, " %s", r.OGP.Dialect)
	}
	if r.Ping > 0 {
		fmt.Fprintf(w, ", %.2f ms", float64(r.Ping)/float64(time.Millisecond))
	}
	fmt.Fprintln(w)
}

// querySections is the sections --fields, --info, --players and --rules
// ask for together, in the order given by known; all of defaults when
// none is given. A name not in known is a usage error.
func querySections(o *queryOptions, protocol string, known, defaults []string) ([]string, error) {
	want := map[string]bool{"info": o.info, "players": o.players, "rules": o.rules}
	if o.fields != "" {
		for _, name := range strings.Split(o.fields, ",") {
			name = strings.ToLower(strings.TrimSpace(name))
			if !slices.Contains(known, name) {
				return nil, usageError("--fields: %s has no section %q (it has %s)", protocol, name, strings.Join(known, ", "))
			}
			want[name] = true
		}
	}
	var sections []string
	for _, name := range known {
		if want[name] {
			sections = append(sections, name)
		}
	}
	if len(sections) == 0 {
		return defaults, nil
	}
	return sections, nil
}

// completeQueryFlags completes the enumerated flags of query and scan.
func completeQueryFlags(cmd *cobra.Command) {
	fixed := func(values ...string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp)
	}
	cmd.RegisterFlagCompletionFunc("protocol", fixed(protocolNames()...))
	cmd.RegisterFlagCompletionFunc("dialect", fixed("v0.91", "v1"))
	if cmd.Flags().Lookup("fields") != nil {
		cmd.RegisterFlagCompletionFunc("fields", completeList(ogpFieldNames))
	}
}

// completeList completes a comma-separated list of names: the names not
// yet in the list, after what is already typed.
func completeList(names []string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		prefix, last := "", toComplete
		if i := strings.LastIndexByte(toComplete, ','); i >= 0 {
			prefix, last = toComplete[:i+1], toComplete[i+1:]
		}
		have := strings.Split(prefix, ",")
		var out []string
		for _, n := range names {
			if strings.HasPrefix(n, last) && !slices.Contains(have, n) {
				out = append(out, prefix+n)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
}
