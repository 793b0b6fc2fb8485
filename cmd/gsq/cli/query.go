package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gsq-project/gsq/protocol"
	"github.com/gsq-project/gsq/result"
)

func init() { register(newQueryCmd) }

// Defaults of `gsq query`: a person at a terminal gets an answer within
// the deadline. The sends of one request wait 1 s, 1.5 s and 2.25 s (each
// retry lengthens the wait by half, whatever the protocol), 4.75 s in
// all. The retries fit in the deadline.
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
	fields   string   // the sections to ask for, comma-separated
	dialect  string   // OGP: v0.91 or v1
	options  []string // --option NAME=VALUE: a protocol's own settings
	game     string   // --game NAME: the catalogue's game (game_flag.go)
	noSRV    bool     // minecraft: --no-srv, the srv option off
	color    bool     // render colours (stdout is a terminal)
}

// An update records in a result the sections that ended (or the address,
// or the failure of the whole server); sections is what to print of it
// on a terminal, nil for nothing. The goroutines querying a server send
// updates, and the one goroutine printing applies them: a result has one
// owner.
type update struct {
	sections []result.Section
	apply    func(*result.Result)
	// query, when not nil, is the query the result answers, when it is
	// not the command's (--game's other protocols); hint is advice to
	// print in place of queryHint's.
	query protocol.Query
	hint  string
}

// sectionAll stands for the whole of a result, for render.
const sectionAll result.Section = "*"

func newQueryCmd(env *Env) *cobra.Command {
	o := &queryOptions{}
	cmd := &cobra.Command{
		Use:   "query HOST[:PORT]...",
		Short: "Ask servers for their info, players and rules",
		Long: `Ask one or more game servers for their info, players and rules.

` + portsHelp() + `
Write IPv6 addresses as [addr]:port.

--game NAME ('gsq games' lists them) picks the game's protocol, and its
query port when an address names none: 'gsq query --game valheim HOST'
asks A2S on the game port + 1 (2457). A port written is asked as written.
Where the game has several protocols, they are asked at once, all within
one --deadline: the first in the game's order that answered is printed,
and a hint says what each of the others got.

A2S asks for the info first; once the server has answered (and given its
challenge), the players and rules together. When one section fails, the
others still print. On a terminal each section prints as it arrives.

Waits: each server takes --deadline (5s) at most, name resolution
included, whatever the retries: what has not answered by then fails with
a timeout. An unanswered request is sent again after --timeout (1s),
--retries (2) times, each retry waiting half as long again
(1s + 1.5s + 2.25s = 4.75s). An A2S server
that does not answer the info is not asked for the rest. A closed port is
reported at once (unreachable) when the network says so; a server that
answers with something that is not the protocol is reported (exit 1) when
the deadline passes. Servers are asked 64 at a time, so N servers take at
most the deadline times N/64, rounded up.

Exit codes: 0 every section answered, 1 a server answered badly,
2 usage error, 3 no answer in time or unreachable, 130 interrupted.`,
		Example: fmt.Sprintf(`  gsq query 127.0.0.1:%[1]d
  gsq query --json play.example.com
  gsq query --fields info,players --deadline 2s 127.0.0.1
  gsq query --protocol ogp --dialect v1 127.0.0.1:%[1]d`, protocol.Default.DefaultPort),
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError("query needs at least one HOST[:PORT]")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkGameFlag(cmd, o); err != nil {
				return err
			}
			return runQuery(cmd.Context(), env, o, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.protocol, "protocol", protocol.Default.Name, "query protocol: "+strings.Join(protocol.Names(), " or "))
	f.BoolVar(&o.json, "json", false, "print one JSON object per server (documented in docs/json.md)")
	durationFlag(cmd, &o.deadline, "deadline", defaultQueryDeadline, "the most time one server may take, whatever the retries")
	durationFlag(cmd, &o.timeout, "timeout", defaultQueryTimeout, "time to wait for an answer before sending again (each retry waits half of it longer)")
	f.IntVar(&o.retries, "retries", defaultQueryRetries, "how many times to resend an unanswered request, within the deadline")
	f.BoolVar(&o.debug, "debug", false, "print an annotated hex dump of every datagram on stderr")
	addQueryFlags(f, o)
	f.BoolVar(&o.padInfo, "pad-info", false, "A2S: pad the INFO request to 1200 bytes (Valve's 2020 alternative to the challenge; servers that accept it answer one round trip sooner)")
	completeQueryFlags(cmd)
	return cmd
}

// addQueryFlags adds the flags query and scan share to say what to ask.
func addQueryFlags(f *pflag.FlagSet, o *queryOptions) {
	f.BoolVar(&o.info, "info", false, "ask for info (default: info, players and rules)")
	f.BoolVar(&o.players, "players", false, "ask for the player list")
	f.BoolVar(&o.rules, "rules", false, "ask for the rules")
	f.StringVar(&o.fields, "fields", "", "comma-separated sections to ask for: "+fieldsHelp())
	f.StringVar(&o.dialect, "dialect", "v0.91", "OGP: protocol dialect, v0.91 or v1")
	f.BoolVar(&o.noSRV, "no-srv", false, "minecraft: do not follow the _minecraft._tcp SRV record of a host name given without a port")
	f.StringArrayVar(&o.options, "option", nil, "NAME=VALUE: a setting of the protocol's own ("+optionsHelp()+"); a password, out of sight of ps: password-file=FILE, or $GSQ_RCON_PASSWORD and the other variables of gsq rcon")
	f.StringVar(&o.game, "game", "", "the game (see gsq games): picks the protocol, and the port when an address names none")
}

// portsHelp says which port each protocol takes when an address has none.
func portsHelp() string {
	var b strings.Builder
	for i, p := range protocol.All() {
		if i > 0 {
			b.WriteString(";\n")
		}
		name := p.Name
		if p == protocol.Default {
			name += " (the default protocol)"
		}
		if p.DefaultPort != 0 {
			fmt.Fprintf(&b, "%s uses port %d when none is given", name, p.DefaultPort)
		} else {
			fmt.Fprintf(&b, "%s has no standard port, so give one", name)
		}
	}
	return b.String() + "."
}

// fieldsHelp lists the sections --fields takes, per protocol.
func fieldsHelp() string {
	var parts []string
	for _, p := range protocol.All() {
		names := make([]string, len(p.Sections))
		for i, s := range p.Sections {
			names[i] = string(s)
		}
		parts = append(parts, p.Name+": "+strings.Join(names, ", "))
	}
	return strings.Join(parts, "; ")
}

// optionsHelp lists the protocols' own options.
func optionsHelp() string {
	var parts []string
	for _, p := range protocol.All() {
		for _, o := range p.Options {
			parts = append(parts, p.Name+" "+o.Name)
		}
	}
	return strings.Join(parts, ", ")
}

// querySettings is what the flags ask of protocol p: the sections of
// --fields, --info, --players and --rules (p's defaults when none), and
// its options from --option, --dialect and --pad-info (the flags of
// another protocol's options are ignored).
func querySettings(env *Env, o *queryOptions, p *protocol.Protocol) (protocol.Settings, error) {
	s := protocol.Settings{Options: map[string]string{}}
	has := func(name string) bool {
		return slices.ContainsFunc(p.Options, func(opt protocol.Option) bool { return opt.Name == name })
	}
	if has("dialect") {
		s.Options["dialect"] = o.dialect
	}
	if has("pad-info") && o.padInfo {
		s.Options["pad-info"] = "true"
	}
	if has("srv") && o.noSRV {
		s.Options["srv"] = "off"
	}
	for _, kv := range o.options {
		name, value, ok := strings.Cut(kv, "=")
		if !ok {
			return s, usageError("--option %q: want NAME=VALUE", kv)
		}
		s.Options[strings.TrimSpace(name)] = strings.TrimSpace(value)
	}
	if has("password") {
		if err := queryPassword(env, s.Options); err != nil {
			return s, err
		}
	}
	want := map[result.Section]bool{result.SectionInfo: o.info, result.SectionPlayers: o.players, result.SectionRules: o.rules}
	if o.fields != "" {
		for _, name := range strings.Split(o.fields, ",") {
			sec := result.Section(strings.ToLower(strings.TrimSpace(name)))
			if !slices.Contains(p.Sections, sec) {
				return s, usageError("--fields: %s has no section %q (it has %s)", p.Name, sec, fieldsOf(p))
			}
			want[sec] = true
		}
	}
	for _, sec := range p.Sections {
		if want[sec] {
			s.Sections = append(s.Sections, sec)
		}
	}
	return s, nil
}

// queryPassword fills the password option of a protocol that logs in
// (webrcon) from where ps cannot see it when --option password=... is
// not given: --option password-file=FILE, or the environment as gsq rcon
// reads it (passwordFromEnv).
func queryPassword(env *Env, opts map[string]string) error {
	if file, ok := opts["password-file"]; ok {
		delete(opts, "password-file")
		if opts["password"] == "" {
			pw, err := readPasswordFile(file)
			if err != nil {
				return err
			}
			opts["password"] = pw
		}
	}
	if opts["password"] != "" {
		return nil
	}
	pw, err := passwordFromEnv(env)
	if err != nil {
		return err
	}
	if pw != "" {
		opts["password"] = pw
	}
	return nil
}

// fieldsOf lists p's sections.
func fieldsOf(p *protocol.Protocol) string {
	names := make([]string, len(p.Sections))
	for i, s := range p.Sections {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

// prepareQuery is the protocol and query the flags ask for; every
// problem is a usage error.
func prepareQuery(env *Env, o *queryOptions) (*protocol.Protocol, protocol.Query, error) {
	p, err := protocol.Lookup(o.protocol)
	if err != nil {
		return nil, nil, usageError("%v", err)
	}
	s, err := querySettings(env, o, p)
	if err != nil {
		return nil, nil, err
	}
	q, err := p.Prepare(s)
	if err != nil {
		return nil, nil, usageError("%v", err)
	}
	return p, q, nil
}

func runQuery(ctx context.Context, env *Env, o *queryOptions, args []string) error {
	gc, gameQueries, err := prepareGame(env, o)
	if err != nil {
		return err
	}
	p, q, err := prepareQuery(env, o)
	if err != nil {
		return err
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
	client := &protocol.Client{}
	if o.debug {
		client.Debug = hexDumper(env.Stderr, p.Describe)
	}
	defer client.Close()
	// Every target is read before any is asked: a malformed one is a
	// usage error, with nothing sent.
	targets := make([]hostPort, len(args))
	attempts := make([][]gameAttempt, len(args))
	for i, arg := range args {
		if gc != nil {
			targets[i], attempts[i], err = gc.attempts(arg)
		} else {
			targets[i], err = parseHostPort(arg, p.DefaultPort)
		}
		if err != nil {
			return err
		}
	}
	// The query's context bounds it by --deadline (with the name's
	// resolution): no deadline of the conversation's own.
	w := protocol.Waits{Timeout: o.timeout, Retries: zeroIsNone(o.retries), Deadline: -1}

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
				if gc != nil {
					queryGameOne(ctx, o, client, gc, gameQueries, attempts[i], w, t, strings.TrimSpace(args[i]), updates[i])
					return
				}
				queryOne(ctx, o, client, q, w, t, strings.TrimSpace(args[i]), updates[i])
			}()
		}
	}()

	out := bufio.NewWriter(env.Stdout)
	stream := !o.json && env.IsTerminal(env.Stdout)
	code := ExitOK
	var line []byte
	for i := range targets {
		r := q.NewResult(strings.TrimSpace(args[i]), netip.AddrPort{})
		if i > 0 && !o.json {
			fmt.Fprintln(out)
		}
		headed, qi, hint := false, q, ""
		for u := range updates[i] {
			u.apply(r)
			if u.query != nil {
				qi, hint = u.query, u.hint
			}
			if stream && u.sections != nil {
				if !headed {
					renderHeader(out, r)
					headed = true
				}
				for _, s := range u.sections {
					renderSection(out, r, qi, s, o.color)
				}
				out.Flush()
			}
		}
		switch {
		case o.json:
			line = append(r.AppendJSON(line[:0]), '\n')
			out.Write(line)
		case !headed:
			renderHeader(out, r)
			renderSection(out, r, qi, sectionAll, o.color)
		}
		if err := out.Flush(); err != nil {
			return fmt.Errorf("writing results: %w", err)
		}
		if hint == "" {
			hint = queryHint(qi.Protocol(), r)
		}
		if hint != "" {
			fmt.Fprintf(env.Stderr, "gsq: hint: %s\n", hint)
		}
		code = worseExit(code, resultExitCode(r))
	}
	return silentExit(code)
}

// queryOne asks one server, within the deadline, and closes updates: each
// section as it ends, in a result of its own that replaces the one
// printed.
func queryOne(ctx context.Context, o *queryOptions, c *protocol.Client, q protocol.Query, w protocol.Waits, t hostPort, input string, updates chan<- update) {
	defer close(updates)
	ctx, cancel := context.WithTimeout(ctx, o.deadline)
	defer cancel()
	addr, err := t.resolve(ctx)
	switch {
	case err == nil:
		updates <- update{apply: func(r *result.Result) { r.Addr = addr }}
	case !o.followsSRV(q.Protocol()) || t.portGiven:
		updates <- update{sections: []result.Section{sectionAll}, apply: func(r *result.Result) { r.Fail(err) }}
		return
	}
	// A name that does not resolve may still have the SRV record its
	// protocol's query follows (Minecraft's, to another host).
	c.Ask(ctx, q, input, addr, w, func(ended []result.Section, snap *result.Result) {
		updates <- update{sections: ended, apply: func(r *result.Result) { *r = *snap }}
	})
}

// followsSRV reports whether queries of p follow the SRV record of a
// host name given without a port: p has one, and --no-srv or --option
// srv=off does not turn it off.
func (o *queryOptions) followsSRV(p *protocol.Protocol) bool {
	if p.SRV == "" || o.noSRV {
		return false
	}
	for _, kv := range o.options {
		if name, value, _ := strings.Cut(kv, "="); strings.TrimSpace(name) == "srv" && strings.TrimSpace(value) == "off" {
			return false
		}
	}
	return true
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
	if o, ok := r.Detail.(*result.OGP); ok {
		fmt.Fprintf(w, " %s", o.Dialect)
	}
	if r.Ping > 0 {
		fmt.Fprintf(w, ", %.2f ms", float64(r.Ping)/float64(time.Millisecond))
	}
	fmt.Fprintln(w)
}

// completeQueryFlags completes the enumerated flags of query and scan.
func completeQueryFlags(cmd *cobra.Command) {
	fixed := func(values ...string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp)
	}
	cmd.RegisterFlagCompletionFunc("protocol", fixed(protocol.Names()...))
	cmd.RegisterFlagCompletionFunc("dialect", fixed(optionValues("dialect")...))
	if cmd.Flags().Lookup("fields") != nil {
		cmd.RegisterFlagCompletionFunc("fields", completeList(allFields()))
	}
}

// optionValues lists the values of the protocols' option name.
func optionValues(name string) []string {
	var values []string
	for _, p := range protocol.All() {
		for _, o := range p.Options {
			if o.Name == name {
				values = append(values, o.Values...)
			}
		}
	}
	return values
}

// allFields lists the sections of every protocol, once each: in the order
// of the protocol that has the most, then the others'.
func allFields() []string {
	var names []string
	all := protocol.All()
	slices.SortStableFunc(all, func(a, b *protocol.Protocol) int { return len(b.Sections) - len(a.Sections) })
	for _, p := range all {
		for _, s := range p.Sections {
			if !slices.Contains(names, string(s)) {
				names = append(names, string(s))
			}
		}
	}
	return names
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
