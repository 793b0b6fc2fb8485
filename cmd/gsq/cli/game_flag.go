package cli

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/gsq-project/gsq/catalog"
	"github.com/gsq-project/gsq/internal/hostport"
	"github.com/gsq-project/gsq/protocol"
	"github.com/gsq-project/gsq/result"
)

// This file is --game for gsq query and gsq scan: the catalogue's game
// picks the protocol, and the port when an address names none.
//
// One rule for ports, whatever the command: a port written in an address
// is where gsq asks (a query port, as gsq discover lists them); --game
// supplies the port only when none is written: the game's default game
// port moved by the protocol's offset (Valheim: 2456 + 1), or the
// protocol's fixed port.

// gameEndpoint is one way gsq can query a game's servers.
type gameEndpoint struct {
	proto *protocol.Protocol
	ep    catalog.Endpoint
	port  uint16 // the default query port; 0 when the game has none
}

// gameChoice is what --game chose: the game, and the endpoints gsq
// speaks, in the order to try them.
type gameChoice struct {
	game      *catalog.Game
	endpoints []gameEndpoint
	missing   []string // protocols the catalogue names that this build lacks
}

// chooseGame looks up --game NAME. An unknown name, a game gsq cannot
// query (and why), and a game whose protocols this build lacks are usage
// errors: nothing is sent.
func chooseGame(name string) (*gameChoice, error) {
	g, err := lookupGame(name)
	if err != nil {
		return nil, err
	}
	if g.Unqueryable != "" {
		return nil, usageError("--game %s: gsq cannot query it: %s", g.ID, g.Unqueryable)
	}
	gc := &gameChoice{game: g}
	for _, ep := range g.Query {
		p, err := protocol.Lookup(ep.Protocol)
		if err != nil {
			gc.missing = append(gc.missing, ep.Protocol)
			continue
		}
		port, _ := ep.QueryPort(g, 0)
		gc.endpoints = append(gc.endpoints, gameEndpoint{proto: p, ep: ep, port: port})
	}
	if len(gc.endpoints) == 0 {
		return nil, usageError("%s is queried with %s, which this build of gsq does not speak yet", g.Name, strings.Join(gc.missing, " or "))
	}
	return gc, nil
}

// first is the endpoint tried first.
func (gc *gameChoice) first() gameEndpoint { return gc.endpoints[0] }

// portRule says in words where an endpoint answers: "a2s on the game port
// + 1 (2457 by default)".
func portRule(g *catalog.Game, ep catalog.Endpoint) string {
	var where string
	switch {
	case ep.Port != 0:
		return fmt.Sprintf("%s on port %d", ep.Protocol, ep.Port)
	case ep.Offset > 0:
		where = fmt.Sprintf("%s on the game port + %d", ep.Protocol, ep.Offset)
	case ep.Offset < 0:
		where = fmt.Sprintf("%s on the game port - %d", ep.Protocol, -ep.Offset)
	default:
		where = ep.Protocol + " on the game port"
	}
	if port, ok := ep.QueryPort(g, 0); ok {
		return fmt.Sprintf("%s (%d by default)", where, port)
	}
	return where + " (the game has no usual port: write HOST:PORT)"
}

// gameAttempt is one query of a --game target: a protocol at a port.
type gameAttempt struct {
	gameEndpoint
	port uint16
}

// attempts lists what to ask of a server written s: with a port, each
// protocol once at that port; without, each endpoint at its default port
// (those with none skipped). The error is a usage error.
func (gc *gameChoice) attempts(s string) (hostPort, []gameAttempt, error) {
	hp, err := hostport.Parse(s, 0)
	written := err == nil
	if errors.Is(err, hostport.ErrNoPort) {
		hp, err = hostport.Parse(s, 1) // a port to be replaced
	}
	if err != nil {
		return hostPort{}, nil, usageError("%s", addressProblem(err))
	}
	var out []gameAttempt
	for _, e := range gc.endpoints {
		port := e.port
		if written {
			port = hp.Port
		}
		if port == 0 || slices.ContainsFunc(out, func(a gameAttempt) bool { return a.proto == e.proto && a.port == port }) {
			continue
		}
		out = append(out, gameAttempt{e, port})
	}
	if len(out) == 0 {
		return hostPort{}, nil, usageError("%q: %s has no usual port, so write HOST:PORT", strings.TrimSpace(s), gc.game.Name)
	}
	hp.Port = out[0].port
	if hp.Addr.IsValid() {
		hp.Addr = netip.AddrPortFrom(hp.Addr.Addr(), hp.Port)
	}
	return hostPort{host: hp.Host, port: hp.Port, addr: hp.Addr}, out, nil
}

// portHint is advice for a server of the game that did not answer at
// port: when port is the game's usual game port and the protocol answers
// elsewhere, say where.
func (gc *gameChoice) portHint(host string, a gameAttempt) string {
	g := gc.game
	if a.port != g.GamePort || a.ep.Port == 0 && a.ep.Offset == 0 {
		return ""
	}
	if q, ok := a.ep.QueryPort(g, a.port); ok && q != a.port {
		return fmt.Sprintf("%d is %s's game port, and %s answers %s: try %s", a.port, g.Name, g.Name,
			portRule(g, a.ep), hostport.HostPort{Host: host, Port: q}.String())
	}
	return ""
}

// checkGameFlag refuses --game with --protocol: the game names its
// protocols.
func checkGameFlag(cmd *cobra.Command, o *queryOptions) error {
	if o.game != "" && cmd.Flags().Changed("protocol") {
		return usageError("give --game or --protocol, not both: the game picks its protocol (gsq games %s)", o.game)
	}
	return nil
}

// prepareGame resolves --game, when given: the choice, with o.protocol set
// to its first protocol, and the query of each of its protocols as the
// flags ask.
func prepareGame(env *Env, o *queryOptions) (*gameChoice, map[*protocol.Protocol]protocol.Query, error) {
	if o.game == "" {
		return nil, nil, nil
	}
	gc, err := chooseGame(o.game)
	if err != nil {
		return nil, nil, err
	}
	queries := map[*protocol.Protocol]protocol.Query{}
	for _, e := range gc.endpoints {
		if _, done := queries[e.proto]; done {
			continue
		}
		s, err := querySettings(env, o, e.proto)
		if err != nil {
			return nil, nil, err
		}
		if queries[e.proto], err = e.proto.Prepare(s); err != nil {
			return nil, nil, usageError("%v", err)
		}
	}
	o.protocol = gc.first().proto.Name
	return gc, queries, nil
}

// queryGameOne asks one server of a --game target every attempt at once
// (a goroutine each: as many as the game has protocols and ports), all
// within one --deadline with the name's resolution, and sends one update
// that names the query it answers: the result of the first attempt, in
// the catalogue's order, that did not time out (the last one's when all
// did), whenever the answers came. A hint says what each of the others
// got, in the same order. The protocol.Client asks each UDP protocol on a
// socket of its own, so two protocols at one address:port (Onset's A2S
// and OGP) do not read each other's replies.
func queryGameOne(ctx context.Context, o *queryOptions, c *protocol.Client, gc *gameChoice, queries map[*protocol.Protocol]protocol.Query,
	attempts []gameAttempt, w protocol.Waits, t hostPort, input string, updates chan<- update) {
	defer close(updates)
	ctx, cancel := context.WithTimeout(ctx, o.deadline)
	defer cancel()
	addr, err := t.resolve(ctx)
	if err != nil {
		updates <- update{sections: []result.Section{sectionAll}, apply: func(r *result.Result) { r.Fail(err) }}
		return
	}
	// The attempts run at once; the first in catalogue order that does
	// not time out is the answer, printed as soon as it and every attempt
	// before it are done (a Minecraft server's Server List Ping answers
	// without waiting for its Query to time out). Those still running
	// then are cancelled, and the hint says so.
	type done struct {
		i int
		r *result.Result
	}
	askCtx, stop := context.WithCancel(ctx)
	ch := make(chan done, len(attempts))
	var wg sync.WaitGroup
	for i, a := range attempts {
		wg.Go(func() {
			ch <- done{i, c.Ask(askCtx, queries[a.proto], input, netip.AddrPortFrom(addr.Addr(), a.port), w, nil)}
		})
	}
	results := make([]*result.Result, len(attempts))
	chosen := -1
	for range attempts {
		d := <-ch
		results[d.i] = d.r
		if chosen = decided(results); chosen >= 0 {
			break
		}
	}
	stop()
	wg.Wait()
	if chosen < 0 {
		chosen = len(attempts) - 1
	}
	r := results[chosen]
	u := update{sections: []result.Section{sectionAll}, apply: func(res *result.Result) { *res = *r }, query: queries[attempts[chosen].proto]}
	var others []string
	for i, a := range attempts {
		if i == chosen {
			continue
		}
		others = append(others, attemptOutcome(a, netip.AddrPortFrom(addr.Addr(), a.port), results[i]))
	}
	at := netip.AddrPortFrom(addr.Addr(), attempts[chosen].port)
	switch {
	case resultExitCode(r) != ExitTimeout && len(others) > 0:
		u.hint = fmt.Sprintf("%s: %s answered at %s (%s)", gc.game.Name, attempts[chosen].proto.Name, at, strings.Join(others, ", "))
	case resultExitCode(r) == ExitTimeout:
		u.hint = gc.portHint(t.host, attempts[0])
		if u.hint == "" && len(others) > 0 {
			tried := make([]string, 0, len(others))
			for _, a := range attempts[:chosen] {
				tried = append(tried, fmt.Sprintf("%s at %s", a.proto.Name, netip.AddrPortFrom(addr.Addr(), a.port)))
			}
			u.hint = fmt.Sprintf("%s: no answer from %s, nor from %s", gc.game.Name, strings.Join(tried, ", "), at)
		}
	}
	updates <- u
}

// decided returns the index of the answer among the attempts' results
// so far (nil: still running): the first that did not time out, once
// every one before it has; -1 while that is not known yet.
func decided(results []*result.Result) int {
	for i, r := range results {
		switch {
		case r == nil:
			return -1
		case resultExitCode(r) != ExitTimeout:
			return i
		}
	}
	return -1
}

// attemptOutcome says in a few words what attempt a, at at, got: "ogp at
// ADDR did not" (a timeout), "answered too", the failure, or "was not
// waited for" (the answer came first).
func attemptOutcome(a gameAttempt, at netip.AddrPort, r *result.Result) string {
	if r == nil || r.Err != nil && r.Err.Kind == result.KindCanceled {
		return fmt.Sprintf("%s at %s was not waited for", a.proto.Name, at)
	}
	switch resultExitCode(r) {
	case ExitTimeout:
		return fmt.Sprintf("%s at %s did not", a.proto.Name, at)
	case ExitOK:
		return fmt.Sprintf("%s at %s answered too", a.proto.Name, at)
	}
	err := r.Err
	if err == nil && len(r.Errors) > 0 {
		err = r.Errors[0].Err
	}
	return fmt.Sprintf("%s at %s failed: %v", a.proto.Name, at, err)
}
