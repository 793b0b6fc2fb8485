package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/gsq-project/gsq/catalog"
	"github.com/gsq-project/gsq/internal/jsonenc"
	"github.com/gsq-project/gsq/master"
	"github.com/gsq-project/gsq/protocol"
	"github.com/gsq-project/gsq/result"
	"github.com/gsq-project/gsq/serverlist"
	"github.com/gsq-project/gsq/steamapi"
)

func init() { register(newDiscoverCmd) }

// discoverOptions are the flags of `gsq discover`.
type discoverOptions struct {
	json     bool
	game     string
	appID    uint32
	filter   string
	region   string
	limit    int
	key      string
	apiURL   string
	master   string
	listed   string
	interval time.Duration
	timeout  time.Duration
	debug    bool
}

func newDiscoverCmd(env *Env) *cobra.Command {
	o := &discoverOptions{}
	cmd := &cobra.Command{
		Use:   "discover [--game NAME | --appid N] [--filter F] [--region R] [--limit N] [--json]",
		Short: "List a game's servers from the Steam Web API or a master server, as a target list for gsq scan",
		Long: `List the servers a server list holds, as they come: by default the Steam
Web API's IGameServersService/GetServerList, or with --master HOST:PORT a
master server (Valve's UDP master server protocol: community masters for
GoldSource and Xash3D, or 'gsq serve --fleet N --master ADDR').

Standard output is gsq's target list, one query address a line, which
'gsq scan' reads; --json writes one JSON object a server instead, with
what the list said of it (name, players, map, game and query ports, steam
id, tags). Each server is written as it comes, so

  gsq discover --game rust | gsq scan

queries the first servers while the rest are still listed.

The servers: --game NAME (see 'gsq games') or --appid N picks the game,
--filter the servers, in the list's own language ('\dedicated\1\secure\1',
'\map\de_dust2', '\name_match\*EU*', '\nor\1\password\1'; the field notes
and 'go doc github.com/gsq-project/gsq/serverlist Filter.Match' list the
keys), --region where they are (eu, us-east, us-west, south-america, asia,
australia, middle-east, africa, world). The Web API takes no region: gsq
drops the servers of other regions as they come.

Filters are advisory: a list may hold servers that do not match, and what
it says of a server may be stale. gsq scan checks every server with its
own query.

Servers behind Steam Datagram Relay are listed at 169.254.x.x addresses,
which no query reaches: they are not written as targets (a '# relay'
comment line says where they are) and are flagged "relay": true in --json.

The Web API needs a key of your own (https://steamcommunity.com/dev/apikey;
gsq ships none): --key, the STEAM_API_KEY environment variable, or the
config file's steam: {api_key: KEY} or {api_key_file: PATH}
($XDG_CONFIG_HOME/gsq/config.yaml). The key is never printed, not even by
--debug. Valve's terms ask for a personal key and paced requests, and
Valve revoked a shared key once it was used to find players and attack
their servers: gsq waits --interval (1s) between two requests, and waits
as long as a 429 answer asks.

One request lists 10,000 servers at most, and the API has no paging: when
an answer comes back full, gsq asks again in complementary halves
('\secure\1' and '\nor\1\secure\1', then dedicated, linux, empty, by
map...) until every part fits. When even that cannot list everything, gsq
says which parts were cut short and exits 1.

--listed HOST[:PORT] asks Steam instead whether a server is listed, and if
not, why (ISteamApps/GetServersAtAddress: no key; Valve asks for it once
in 10 minutes at most, for troubleshooting).

Exit codes: 0 the whole list, 1 a list cut short or a failed request (or,
with --listed, a server not listed), 2 usage error or no key, 3 no answer
in time, 4 the key was refused, 130 interrupted.`,
		Example: `  STEAM_API_KEY=... gsq discover --game rust --region eu --filter '\dedicated\1' > servers.txt
  gsq discover --appid 892970 --json --limit 100
  gsq discover --master 127.0.0.1:27011 | gsq scan
  gsq discover --listed 203.0.113.10:2457`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDiscover(cmd.Context(), env, cmd, o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.json, "json", false, "write one JSON object a server, with what the list said of it")
	f.StringVar(&o.game, "game", "", "the game whose servers to list (its Steam app id; see gsq games)")
	f.Var(&numberFlag[uint32]{p: &o.appID, min: 1, max: 1<<32 - 1}, "appid", "the Steam `app id` whose servers to list")
	f.StringVar(&o.filter, "filter", "", `the list's filter, \key\value... (advisory: gsq scan checks each server)`)
	f.StringVar(&o.region, "region", "", "the region: eu, us-east, us-west, south-america, asia, australia, middle-east, africa or world")
	f.Var(&numberFlag[int]{p: &o.limit, min: 0, max: 1 << 30}, "limit", "list at most `N` servers (0: all)")
	f.StringVar(&o.key, "key", "", "the Steam Web API key (other users may see it in the process list: prefer STEAM_API_KEY or the config file's steam.api_key)")
	f.StringVar(&o.apiURL, "api-url", steamapi.DefaultBaseURL, "the Web API's base URL: a mirror, or a local fake")
	f.StringVar(&o.master, "master", "", "ask the master server at `HOST:PORT` (UDP; port 27011 when none is given) instead of the Web API")
	f.StringVar(&o.listed, "listed", "", "say whether the server at `HOST:PORT` is listed by Steam, and if not why")
	durationFlag(cmd, &o.interval, "interval", steamapi.DefaultMinInterval, "the least time between two Web API requests (below 1s only with --api-url)")
	durationFlag(cmd, &o.timeout, "timeout", 0, "Web API: the most time one request may take (default 1m); master: the whole listing (default 2m)")
	f.BoolVar(&o.debug, "debug", false, "print every request and answer on stderr (the key is never shown)")
	cmd.RegisterFlagCompletionFunc("game", completeGames)
	cmd.RegisterFlagCompletionFunc("region", cobra.FixedCompletions(regionNames, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// regionNames are the names --region takes.
var regionNames = []string{"eu", "us-east", "us-west", "south-america", "asia", "australia", "middle-east", "africa", "world"}

// discoverFilter is the filter the flags ask for: --filter, with the app
// id of --game or --appid in front unless the filter names one.
func discoverFilter(o *discoverOptions) (string, error) {
	flt, err := serverlist.Parse(o.filter)
	if err == nil {
		err = flt.Check()
	}
	if err != nil {
		return "", usageError("--filter %q: %v", o.filter, err)
	}
	appID := o.appID
	switch {
	case o.game != "" && o.appID != 0:
		return "", usageError("give --game or --appid, not both")
	case o.game != "":
		g, err := lookupGame(o.game)
		if err != nil {
			return "", err
		}
		if len(g.AppIDs) == 0 {
			why := "gsq does not know its Steam app id"
			if g.Unqueryable != "" {
				why = g.Unqueryable
			}
			return "", usageError("--game %s: %s; to list by app id, give --appid", g.ID, why)
		}
		appID = g.AppIDs[0]
	}
	if appID != 0 {
		var ok bool
		if flt, ok = flt.ForApp(appID); !ok {
			return "", usageError("--filter names an app id already; drop --game or --appid")
		}
	}
	return flt.String(), nil
}

func runDiscover(ctx context.Context, env *Env, cmd *cobra.Command, o *discoverOptions) error {
	stderr := &lockedWriter{w: env.Stderr}
	if o.listed != "" {
		for _, name := range []string{"master", "game", "appid", "filter", "region", "limit", "json"} {
			if cmd.Flags().Changed(name) {
				return usageError("--%s does not apply to --listed", name)
			}
		}
		return runListed(ctx, env, stderr, o)
	}
	filter, err := discoverFilter(o)
	if err != nil {
		return err
	}
	region := serverlist.RegionWorld
	if o.region != "" {
		if region, err = serverlist.ParseRegion(o.region); err != nil {
			return usageError("--region: %v", err)
		}
	}
	if o.timeout < 0 {
		return usageError("--timeout must not be negative")
	}
	out := &discoverOutput{w: env.Stdout, json: o.json, limit: o.limit}
	if o.master != "" {
		for _, name := range []string{"key", "api-url", "interval"} {
			if cmd.Flags().Changed(name) {
				return usageError("--%s applies to the Web API, not to --master", name)
			}
		}
		return discoverMaster(ctx, stderr, o, filter, region, out)
	}
	c, err := steamClient(env, stderr, cmd, o)
	if err != nil {
		return err
	}
	return discoverWebAPI(ctx, stderr, c, filter, region, out)
}

// steamClient is the Web API client the flags ask for: the key, the URL,
// the pacing and the debug hooks.
func steamClient(env *Env, stderr io.Writer, cmd *cobra.Command, o *discoverOptions) (*steamapi.Client, error) {
	u, err := url.Parse(o.apiURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usageError("--api-url %q: want an http:// or https:// URL", o.apiURL)
	}
	if o.interval < steamapi.DefaultMinInterval && strings.EqualFold(u.Host, "api.steampowered.com") {
		return nil, usageError("--interval %v: Valve's API is asked at most once a second (a shorter interval is for a mirror or a local fake, with --api-url)", o.interval)
	}
	c := &steamapi.Client{
		BaseURL:     strings.TrimRight(o.apiURL, "/"),
		MinInterval: zeroIsNoneDuration(o.interval),
		Timeout:     o.timeout,
		Logf:        func(format string, args ...any) { fmt.Fprintf(stderr, "gsq: "+format+"\n", args...) },
	}
	if o.debug {
		c.Debug = httpDumper(stderr)
	}
	if o.listed != "" {
		return c, nil // GetServersAtAddress needs no key
	}
	key, err := steamKey(env, o.key, cmd.Flags().Changed("key"))
	if err != nil {
		return nil, err
	}
	c.Key = key
	return c, nil
}

// zeroIsNoneDuration maps a flag's 0 ("none") to the -1 the library
// settings take for none.
func zeroIsNoneDuration(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// httpDumper is a steamapi.Client's Debug hook writing to w: each request
// line (the key already redacted by the client) and the size and start of
// each chunk of body read.
func httpDumper(w io.Writer) func(dir string, _ netip.AddrPort, b []byte) {
	const show = 512
	return func(dir string, _ netip.AddrPort, b []byte) {
		if dir == "send" {
			fmt.Fprintf(w, "send -> %s\n", printable(string(b)))
			return
		}
		text := string(b[:min(len(b), show)])
		more := ""
		if len(b) > show {
			more = "…"
		}
		fmt.Fprintf(w, "recv <- %d bytes: %s%s\n", len(b), printable(text), more)
	}
}

// discoverWebAPI lists the servers of the Web API, partitioning past the
// 10,000 cap.
func discoverWebAPI(ctx context.Context, stderr io.Writer, c *steamapi.Client, filter string, region serverlist.Region, out *discoverOutput) error {
	if out.limit > 0 && out.limit < steamapi.MaxLimit {
		c.Limit = out.limit // ask for no more than will be written
	}
	res, err := c.List(ctx, filter, func(s *serverlist.Server) bool {
		if region != serverlist.RegionWorld && s.Region != region {
			out.otherRegion++
			return true
		}
		return out.server(s, "steamapi")
	})
	if res != nil {
		out.requests = res.Requests
		out.duplicates = res.Duplicates
		out.malformed = res.Malformed
	}
	fmt.Fprintln(stderr, out.summary("the Steam Web API"))
	if out.err != nil {
		return fmt.Errorf("writing the list: %w", out.err)
	}
	if err == nil {
		return nil
	}
	if errors.Is(err, steamapi.ErrCutShort) && res != nil {
		limit := c.Limit
		if limit == 0 {
			limit = steamapi.MaxLimit
		}
		fmt.Fprintf(stderr, "gsq: the list is incomplete: %s came back full at the cap of %d servers a request even when split, or were not asked:\n",
			plural(len(res.CutShort), "part"), limit)
		for _, f := range res.CutShort {
			fmt.Fprintf(stderr, "gsq:   %s\n", printable(f))
		}
		return withCode(ExitFailure, errors.New("listing cut short: narrow the filter (--filter, --region) to list the rest"))
	}
	return steamError(ctx, err)
}

// steamError says in words what a Web API error means, with its exit
// code. The library's errors never carry the key.
func steamError(ctx context.Context, err error) error {
	var se *steamapi.StatusError
	switch {
	case ctx.Err() != nil:
		return silentExit(ExitInterrupted)
	case errors.Is(err, steamapi.ErrNoKey), errors.Is(err, steamapi.ErrBadKey):
		return usageError("%v", err)
	case errors.Is(err, steamapi.ErrForbidden):
		return withCode(ExitAuth, fmt.Errorf("%w\ngsq: hint: check the key (--key, STEAM_API_KEY or the config file's steam.api_key); a key is per Steam account: https://steamcommunity.com/dev/apikey", err))
	case errors.Is(err, steamapi.ErrRateLimited):
		wait := "a while"
		if errors.As(err, &se) && se.RetryAfter > 0 {
			wait = se.RetryAfter.String()
		}
		return withCode(ExitFailure, fmt.Errorf("rate limited: %w\ngsq: hint: the API asks for fewer requests: wait %s and ask again, with a narrower filter or a longer --interval", err, wait))
	case errors.Is(err, steamapi.ErrNotAPI):
		return withCode(ExitFailure, fmt.Errorf("%w: check --api-url", err))
	}
	return withCode(exitCodeFor(errorKind(err)), err)
}

// discoverMaster lists the servers of a master server.
func discoverMaster(ctx context.Context, stderr io.Writer, o *discoverOptions, filter string, region serverlist.Region, out *discoverOutput) error {
	hp, err := parseHostPort(o.master, master.DefaultPort)
	if err != nil {
		return usageError("--master: %v", err)
	}
	addr, err := hp.resolve(ctx)
	if err != nil {
		return err
	}
	if !addr.Addr().Unmap().Is4() {
		return usageError("--master %s: the master server protocol is IPv4 only", o.master)
	}
	addr = netip.AddrPortFrom(addr.Addr().Unmap(), addr.Port())
	c := &master.Client{Deadline: o.timeout}
	if o.debug {
		c.Debug = hexDumper(stderr, nil)
	}
	defer c.Close()
	res, err := c.List(ctx, addr, master.Query{Region: region, Filter: filter}, func(page []netip.AddrPort) bool {
		return out.page(page)
	})
	if res != nil {
		out.requests = res.Stats.Sent
		out.duplicates = res.Duplicates
	}
	fmt.Fprintln(stderr, out.summary("the master at "+addr.String()))
	switch {
	case out.err != nil:
		return fmt.Errorf("writing the list: %w", out.err)
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return silentExit(ExitInterrupted)
	case errors.Is(err, master.ErrLimit):
		return withCode(ExitFailure, fmt.Errorf("%w\ngsq: the list is incomplete; it resumes after %s", err, res.Next))
	case errorKind(err) == result.KindTimeout:
		what := "the master did not answer"
		if res != nil && res.Pages > 0 {
			what = fmt.Sprintf("the master fell silent after %s (a master may stop answering an address that asked too much: Valve's allowed 30 pages a minute); the list is incomplete, it resumes after %s", plural(res.Pages, "page"), res.Next)
		}
		return withCode(ExitTimeout, fmt.Errorf("%w: %s", err, what))
	}
	return withCode(exitCodeFor(errorKind(err)), err)
}

// discoverOutput writes the servers listed, as they come: a target list,
// or JSON lines. Each server (each page of a master) is one write, so
// that a reader down a pipe gets it at once.
type discoverOutput struct {
	mu    sync.Mutex
	w     io.Writer
	json  bool
	limit int // 0: no limit
	buf   []byte
	err   error

	written, relays, otherRegion, requests, duplicates, malformed int
}

// server writes s; it returns false when the listing should stop (the
// limit reached, or stdout gone).
func (out *discoverOutput) server(s *serverlist.Server, source string) bool {
	out.mu.Lock()
	defer out.mu.Unlock()
	out.buf = out.appendServer(out.buf[:0], s, source)
	return out.flush()
}

// page writes a master's page of addresses.
func (out *discoverOutput) page(page []netip.AddrPort) bool {
	out.mu.Lock()
	defer out.mu.Unlock()
	out.buf = out.buf[:0]
	ok := true
	for _, a := range page {
		if out.limit > 0 && out.written+out.relays >= out.limit {
			ok = false
			break
		}
		s := serverlist.Server{Addr: a}
		out.buf = out.appendServer(out.buf, &s, "master")
	}
	return out.flush() && ok
}

// appendServer appends s's line to b and counts it.
func (out *discoverOutput) appendServer(b []byte, s *serverlist.Server, source string) []byte {
	relay := s.Relay()
	if relay {
		out.relays++
	} else {
		out.written++
	}
	if out.json {
		return append(appendDiscovered(b, s, source), '\n')
	}
	if relay {
		// A comment: the list says where the server is, and no scan
		// asks it.
		b = append(b, "# relay "...)
		b = append(b, s.Addr.String()...)
		if s.Name != "" {
			b = append(b, "  "...)
			b = append(b, printable(s.Name)...)
		}
		b = append(b, " (Steam Datagram Relay: no query reaches it)"...)
		return append(b, '\n')
	}
	b = append(b, s.Addr.String()...)
	return append(b, '\n')
}

// flush writes the buffer; out.mu is held. It returns false when the
// listing should stop.
func (out *discoverOutput) flush() bool {
	if out.err == nil && len(out.buf) > 0 {
		_, out.err = out.w.Write(out.buf)
	}
	return out.err == nil && (out.limit == 0 || out.written+out.relays < out.limit)
}

// appendDiscovered appends the JSON object of a listed server to b: what
// the list said, each field left out when the list left it out.
func appendDiscovered(b []byte, s *serverlist.Server, source string) []byte {
	o := jsonenc.Begin(b, false)
	o.Str("addr", s.Addr.String())
	o.Str("source", source)
	o.Int("query_port", int64(s.Addr.Port()))
	if s.GamePort != 0 {
		o.Int("game_port", int64(s.GamePort))
	}
	if s.SpecPort != 0 {
		o.Int("spec_port", int64(s.SpecPort))
	}
	if s.Relay() {
		o.Bool("relay", true)
	}
	if source == "master" {
		return o.End() // a master lists addresses only
	}
	if s.SteamID != 0 {
		o.Str("steamid", strconv.FormatUint(s.SteamID, 10))
	}
	o.Str("name", s.Name)
	if s.AppID != 0 {
		o.Int("appid", int64(s.AppID))
	}
	for _, f := range [][2]string{{"gamedir", s.GameDir}, {"version", s.Version}, {"product", s.Product}, {"map", s.Map}, {"os", s.OS}} {
		if f[1] != "" {
			o.Str(f[0], f[1])
		}
	}
	o.Int("players", int64(s.Players))
	o.Int("max_players", int64(s.MaxPlayers))
	o.Int("bots", int64(s.Bots))
	if s.Region != serverlist.RegionNone {
		o.Str("region", s.Region.String())
	}
	o.Bool("secure", s.Secure)
	o.Bool("dedicated", s.Dedicated)
	o.Strings("tags", s.Tags())
	return o.End()
}

// summary is the line written on stderr at the end.
func (out *discoverOutput) summary(from string) string {
	out.mu.Lock()
	defer out.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "gsq: listed %s from %s in %s", plural(out.written, "server"), from, plural(out.requests, "request"))
	for _, extra := range []struct {
		n    int
		what string
	}{
		{out.relays, "relay address (169.254.x.x, not a target)"},
		{out.otherRegion, "server of another region, dropped"},
		{out.duplicates, "duplicate, dropped"},
		{out.malformed, "unreadable record, skipped"},
	} {
		if extra.n > 0 {
			fmt.Fprintf(&b, "; %d %s", extra.n, extra.what)
		}
	}
	if out.limit > 0 && out.written+out.relays >= out.limit {
		fmt.Fprintf(&b, "; stopped at --limit %d", out.limit)
	}
	return b.String()
}

// runListed answers --listed: is the server listed by Steam, and if not,
// why.
func runListed(ctx context.Context, env *Env, stderr io.Writer, o *discoverOptions) error {
	hp, err := parseHostPort(o.listed, protocol.Default.DefaultPort)
	if err != nil {
		return usageError("--listed: %v", err)
	}
	addr, err := hp.resolve(ctx)
	if err != nil {
		return err
	}
	c, err := steamClient(env, stderr, nil, o)
	if err != nil {
		return err
	}
	l, err := c.Listed(ctx, addr)
	if err != nil {
		return steamError(ctx, err)
	}
	fmt.Fprintf(env.Stdout, "%s: %s\n", addr, printable(l.Why))
	if !l.Listed {
		return silentExit(ExitFailure)
	}
	return nil
}

// lookupGame is the catalogue's game called name, or a usage error that
// names the nearest ones.
func lookupGame(name string) (*catalog.Game, error) {
	g, err := catalog.Lookup(name)
	if err != nil {
		return nil, usageError("--game: %s", strings.TrimPrefix(err.Error(), "catalog: "))
	}
	return g, nil
}

// completeGames completes --game with the catalogue's IDs.
func completeGames(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	var out []string
	for _, g := range catalog.All() {
		if strings.HasPrefix(g.ID, toComplete) {
			out = append(out, g.ID+"\t"+g.Name)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
