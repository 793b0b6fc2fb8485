package protocol

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strconv"

	"github.com/gsq-project/gsq/internal/hostport"
	"github.com/gsq-project/gsq/minecraft/bedrock"
	"github.com/gsq-project/gsq/minecraft/mcquery"
	"github.com/gsq-project/gsq/minecraft/slp"
	"github.com/gsq-project/gsq/result"
)

// Minecraft is Minecraft Java Edition's Server List Ping over TCP
// (package minecraft/slp), with the legacy pings of servers up to 1.6 as
// a fallback, on the game port.
var Minecraft = &Protocol{
	Name:            "minecraft",
	Title:           "Minecraft Java Edition's Server List Ping (and the legacy pings of servers up to 1.6)",
	DefaultPort:     slp.DefaultPort,
	Transport:       TCP,
	Sections:        []result.Section{result.SectionInfo},
	DefaultSections: []result.Section{result.SectionInfo},
	Options: []Option{
		{Name: "favicon", Values: []string{"hash", "image"},
			Usage: "hash (the default) reports the favicon's SHA-256 and size; image adds the PNG, base64"},
		{Name: "version", Usage: "the protocol version the handshake names (default " + strconv.Itoa(slp.DefaultProtocol) + ", 1.8's)"},
		{Name: "legacy", Values: []string{"fallback", "never", "only"},
			Usage: "when to send the legacy ping of servers up to 1.6: after a modern attempt fails as old servers fail (the default), never, or only"},
		{Name: "srv", Values: []string{"on", "off"},
			Usage: "on (the default) follows the _minecraft._tcp SRV record of a host name given without a port, as the game does"},
		{Name: "ping", Values: []string{"on", "off"},
			Usage: "on (the default) times the round trip with a ping after the status; off skips it (one round trip fewer; the time is the status's)"},
		{Name: "proxy-protocol", Values: []string{"0", "1", "2"},
			Usage: "send a PROXY protocol header of that version first, for servers behind HAProxy or TCPShield (0: none)"},
	},
	Describe: slp.Describe,
	SRV:      "minecraft",
	PortHint: "Java servers answer Server List Ping on the game port (25565 by default), over TCP; " +
		"a host name without a port follows its _minecraft._tcp SRV record",
	prepare: prepareMinecraft,
}

func prepareMinecraft(p *Protocol, _ []result.Section, s Settings) (Query, error) {
	q := &minecraftQuery{asking: asking{p: p, sections: p.Sections, detail: func() result.Detail { return new(result.Minecraft) }}}
	for _, name := range []string{"favicon", "version", "legacy", "srv", "ping", "proxy-protocol"} {
		v, err := p.option(s, name)
		if err != nil {
			return nil, err
		}
		switch name {
		case "favicon":
			q.client.KeepFavicon = v == "image"
		case "version":
			if v != "" {
				n, err := strconv.ParseInt(v, 10, 32)
				if err != nil {
					return nil, fmt.Errorf("%s option version: %q is not a protocol number (767 is 1.21.1)", p.Name, v)
				}
				q.client.Protocol = int32(n)
			}
		case "legacy":
			q.client.Legacy = map[string]slp.LegacyMode{"": slp.LegacyFallback, "fallback": slp.LegacyFallback,
				"never": slp.LegacyNever, "only": slp.LegacyOnly}[v]
		case "srv":
			q.client.NoSRV = v == "off"
		case "ping":
			q.client.NoPing = v == "off"
		case "proxy-protocol":
			q.client.ProxyProtocol, _ = strconv.Atoi(v) // one of the option's values, or "": 0
		}
	}
	return q, nil
}

// minecraftQuery asks Java servers for their status, a connection each.
type minecraftQuery struct {
	asking
	client slp.Client // only read by Do: one serves every exchange at once
}

var _ TargetResolver = (*minecraftQuery)(nil)

// withDebug returns a copy of q whose exchanges show their packets to
// debug.
func (q *minecraftQuery) withDebug(debug func(dir string, addr netip.AddrPort, b []byte)) StreamQuery {
	c := *q
	c.client.Debug = debug
	return &c
}

// Do asks the server at addr for its status, within w's Deadline, as the
// vanilla client asks r.Target: the handshake names the host
// the target names; a host name without a port follows its SRV record
// (unless the srv option is off), looked up with the resolver of ctx (see
// [WithResolver]), and then r.Addr becomes the address that answered.
func (q *minecraftQuery) Do(ctx context.Context, addr netip.AddrPort, w Waits, r *result.Result) {
	c := q.clientFor(ctx)
	if w.Deadline > 0 {
		c.Timeout = w.Deadline
	}
	var resp *slp.Response
	var err error
	hp, perr := hostport.Parse(r.Target, slp.DefaultPort)
	switch {
	case perr != nil || hp.Addr.IsValid():
		resp, err = c.Status(ctx, addr)
	case q.followsSRV(r.Target):
		resp, err = c.StatusHost(ctx, hp.Host)
		if err == nil {
			r.Addr = resp.Addr
		}
	default:
		resp, err = c.StatusTarget(ctx, slp.Target{Host: hp.Host, Port: hp.Port}, addr)
	}
	r.SetMinecraft(resp, err)
}

// ResolveTarget returns the address of the server Do asks first for a
// host name given without a port: its SRV record's target (when the srv
// option is not off), or the name on the default port when it has none.
// Any other target is not the query's to resolve.
func (q *minecraftQuery) ResolveTarget(ctx context.Context, target string) (netip.AddrPort, bool, error) {
	if !q.followsSRV(target) {
		return netip.AddrPort{}, false, nil
	}
	c := q.clientFor(ctx)
	_, addr, err := c.ResolveAddr(ctx, target)
	return addr, true, err
}

// followsSRV reports whether Do follows the SRV record of target: a host
// name given without a port, with the srv option not off.
func (q *minecraftQuery) followsSRV(target string) bool {
	hp, err := hostport.Parse(target, slp.DefaultPort)
	_, noPort := hostport.Parse(target, 0)
	return err == nil && !hp.Addr.IsValid() && noPort != nil && !q.client.NoSRV
}

// clientFor returns a copy of q's client that looks names up with the
// resolver of ctx.
func (q *minecraftQuery) clientFor(ctx context.Context) slp.Client {
	c := q.client
	c.Resolver = resolverOf(ctx)
	return c
}

// MCQuery is Minecraft's Query over UDP (package minecraft/mcquery), the
// GameSpy 4 style status a Java server answers with enable-query, on the
// game port by default: the full player list and the plugins.
var MCQuery = &Protocol{
	Name:            "mcquery",
	Title:           "Minecraft's Query (GameSpy 4 style, enable-query): the full player list",
	DefaultPort:     mcquery.DefaultPort,
	Transport:       UDP,
	Sections:        []result.Section{result.SectionInfo, result.SectionPlayers},
	DefaultSections: []result.Section{result.SectionInfo, result.SectionPlayers},
	Describe:        mcquery.Describe,
	PortHint: "Java servers answer Query only with enable-query=true, on query.port (the game port, 25565, by default), over UDP; " +
		"PocketMine and Geyser answer it on the Bedrock port",
	prepare: func(p *Protocol, sections []result.Section, _ Settings) (Query, error) {
		// The basic stat answers the info; the full stat, asked for the
		// players, answers both.
		full := slices.Contains(sections, result.SectionPlayers)
		asked := []result.Section{result.SectionInfo}
		if full {
			asked = p.Sections
		}
		return newUDPQuery[mcquery.Conversation](p, asked,
			func() result.Detail { return new(result.MCQuery) },
			func(w Waits) mcquery.Query {
				return mcquery.Query{Full: full, Timeout: w.Timeout, MaxTimeout: w.MaxTimeout, Retries: w.Retries, Deadline: w.Deadline}
			},
			func(r *result.Result, res *mcquery.Result) { r.SetMCQuery(res, asked) }), nil
	},
}

// Bedrock is Minecraft Bedrock Edition's status, RakNet's unconnected
// ping and pong over UDP (package minecraft/bedrock).
var Bedrock = &Protocol{
	Name:            "bedrock",
	Title:           "Minecraft Bedrock Edition's status (RakNet unconnected ping)",
	DefaultPort:     bedrock.DefaultPort,
	Transport:       UDP,
	Sections:        []result.Section{result.SectionInfo},
	DefaultSections: []result.Section{result.SectionInfo},
	Describe:        bedrock.Describe,
	PortHint:        "Bedrock servers answer on the game port, 19132 by default (19133 for IPv6), over UDP",
	prepare: udpPrepare[bedrock.Conversation](func() result.Detail { return new(result.Bedrock) },
		func(w Waits) bedrock.Query {
			return bedrock.Query{Timeout: w.Timeout, MaxTimeout: w.MaxTimeout, Retries: w.Retries, Deadline: w.Deadline}
		},
		(*result.Result).SetBedrock),
}
