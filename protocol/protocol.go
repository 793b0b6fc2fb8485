package protocol

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/gsq-project/gsq/internal/udpclient"
	"github.com/gsq-project/gsq/result"
)

// Transport is how a protocol reaches a server.
type Transport uint8

// The transports.
const (
	UDP  Transport = iota + 1 // datagrams on the shared client transport: a UDPQuery
	TCP                       // a connection per query: a StreamQuery
	HTTP                      // a request per query: a StreamQuery
)

// String returns "udp", "tcp" or "http".
func (t Transport) String() string {
	switch t {
	case UDP:
		return "udp"
	case TCP:
		return "tcp"
	case HTTP:
		return "http"
	}
	return fmt.Sprintf("Transport(%d)", uint8(t))
}

// Protocol is one query protocol: what the command line, the scanner, the
// monitor and /probe need to know of it. The registry holds one per
// protocol; none changes once registered.
type Protocol struct {
	// Name is what --protocol, a monitor's config, /probe and the JSON
	// "protocol" field call it: lower case.
	Name string
	// Title says what it is, for help texts.
	Title string
	// DefaultPort is the port of an address that names none; 0 when the
	// protocol has no conventional port, so that every address needs one.
	DefaultPort uint16
	// Transport is how it reaches a server, and so which kind of Query
	// its Prepare returns: a [UDPQuery] for UDP, a [StreamQuery] for TCP
	// and HTTP.
	Transport Transport
	// Sections are the names a query may ask for (--fields), in the
	// order the protocol answers them; DefaultSections those asked when
	// none is named.
	Sections        []result.Section
	DefaultSections []result.Section
	// Options are the protocol's own settings, given by name (the
	// command line's flags, a config): OGP's dialect, A2S's padded INFO.
	Options []Option
	// Describe names a datagram or message of the protocol in a few
	// words, for the --debug hex dumps; nil when there is nothing to say.
	Describe func(b []byte) string
	// SRV is the service whose SRV record names the server of a host name
	// given without a port, as the game's client follows it ("minecraft":
	// _minecraft._tcp.HOST); "" for none. The protocol's query follows
	// the record itself (so a name with no address of its own, only the
	// record, is no failure before the query), unless its "srv" option is
	// "off".
	SRV string
	// PortHint says where a server of the protocol usually answers, for
	// the advice gsq gives about a server that does not.
	PortHint string
	// ErrIncomplete is what a query's error matches when part of a split
	// reply came and the rest was lost: the server is there. Nil when the
	// protocol does not split.
	ErrIncomplete error
	// A Console field will hold, for the protocols that also administer a
	// server (Palworld's REST API, Rust's WebRCON), how to open a
	// console.Session beside the query; none of the protocols here has
	// one yet, so it is not declared.

	// prepare makes the Query of p asking sections, checked against
	// p.Sections, with s's options (checked against p.Options by name).
	prepare func(p *Protocol, sections []result.Section, s Settings) (Query, error)
}

// Option is a setting of one protocol's own.
type Option struct {
	Name   string   // "dialect"
	Usage  string   // what it does, for help texts
	Values []string // the values it takes, for completion; nil: any
}

// Settings say what a query asks, in words every protocol understands.
type Settings struct {
	// Sections are what to ask for, from the protocol's Sections; nil
	// asks its DefaultSections.
	Sections []result.Section
	// Options are values of the protocol's own Options, by name.
	Options map[string]string
}

// Waits say how long a conversation waits, in the terms of the
// conventions every protocol follows (docs/conventions.md): the first
// send waits Timeout, each resend half as long again up to MaxTimeout,
// Retries times, and the whole conversation takes at most Deadline.
// Zero values are the protocol's defaults; a negative Retries or Deadline
// means none.
type Waits struct {
	Timeout    time.Duration
	MaxTimeout time.Duration
	Retries    int
	Deadline   time.Duration
	// Serial keeps one request in the air at a time, for servers that
	// drop bursts.
	Serial bool
}

// bound returns ctx ended by the Deadline too, when there is one, for a
// StreamQuery's Do.
func (w Waits) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if w.Deadline > 0 {
		return context.WithTimeout(ctx, w.Deadline)
	}
	return ctx, func() {}
}

// inOrder returns the sections asked, in p's order whatever the order
// asked, for a StreamQuery that asks them one by one.
func (p *Protocol) inOrder(asked []result.Section) []result.Section {
	var out []result.Section
	for _, s := range p.Sections {
		if slices.Contains(asked, s) {
			out = append(out, s)
		}
	}
	return out
}

// Query is what to ask the servers of one protocol, made by its Prepare.
// It is read only: one Query serves any number of conversations at once.
// A Query is also a [UDPQuery] or a [StreamQuery], as its protocol's
// Transport says.
type Query interface {
	// Protocol is the protocol the query asks.
	Protocol() *Protocol
	// Sections are the sections it asks, in the order the protocol
	// answers them: each of them ends answered or failed.
	Sections() []result.Section
	// NewResult returns the result of querying target at addr (the zero
	// value while unresolved), before any answer, with the protocol's
	// Detail set up: a failure recorded in it still says which protocol
	// (and dialect) was asked.
	NewResult(target string, addr netip.AddrPort) *result.Result
}

// Conversation is a query of one server over UDP as a sans-IO state
// machine (a2s.Conversation, ogp.Conversation): see
// internal/udpclient.Conversation, which this names.
type Conversation = udpclient.Conversation

// UDPQuery is the Query of a protocol over UDP: a conversation that the
// scan engine and [Client] drive on a shared socket.
type UDPQuery interface {
	Query
	// Start begins a conversation with the server at addr, waiting as w
	// says; challenge is the server's, when known from an earlier
	// conversation of this protocol.
	Start(w Waits, addr netip.AddrPort, challenge uint32, hasChallenge bool) Conversation
	// Record records in r every section conv has ended so far (answered
	// or failed; everything, once conv is done) and returns them, in the
	// order of Sections, in a slice that may be conv's own (valid until
	// the next Record). conv is one Start returned. r is a result of this
	// query's NewResult that holds none of them yet.
	Record(conv Conversation, r *result.Result) []result.Section
}

// StreamQuery is the Query of a protocol over TCP or HTTP: one blocking
// exchange per server, which the scan engine runs on a goroutine of its
// own, a bounded number at once.
type StreamQuery interface {
	Query
	// Do queries the server at addr within ctx, waiting as w says, and
	// records every section asked in r, answered or failed.
	Do(ctx context.Context, addr netip.AddrPort, w Waits, r *result.Result)
}

// registry is the table of protocols, sorted by name: the one place that
// says which protocols exist. Each entry is declared in the protocol's
// file of this package.
var registry = []*Protocol{A2S, Bedrock, FiveM, MCQuery, Minecraft, OGP, Satisfactory, WebRcon}

// Default is the protocol asked when none is named: A2S.
var Default = A2S

// All returns every protocol, sorted by name.
func All() []*Protocol { return slices.Clone(registry) }

// Names returns the names of every protocol, sorted.
func Names() []string {
	names := make([]string, len(registry))
	for i, p := range registry {
		names[i] = p.Name
	}
	return names
}

// Lookup returns the protocol named name, whatever its case. An unknown
// name is an error that lists the known ones.
func Lookup(name string) (*Protocol, error) {
	for _, p := range registry {
		if strings.EqualFold(p.Name, name) {
			return p, nil
		}
	}
	return nil, fmt.Errorf("unknown protocol %q (known: %s)", name, strings.Join(Names(), ", "))
}

// Prepare makes the Query that asks what s says. An unknown section or
// option, or a bad value, is an error that says what is known.
func (p *Protocol) Prepare(s Settings) (Query, error) {
	sections, err := p.checkSettings(s)
	if err != nil {
		return nil, err
	}
	return p.prepare(p, sections, s)
}

// checkSettings checks s against p's sections and options, and returns
// the sections to ask: s.Sections, or p's defaults.
func (p *Protocol) checkSettings(s Settings) ([]result.Section, error) {
	for name := range s.Options {
		if !slices.ContainsFunc(p.Options, func(o Option) bool { return o.Name == name }) {
			return nil, fmt.Errorf("%s has no option %q (it has %s)", p.Name, name, p.optionNames())
		}
	}
	if s.Sections == nil {
		return p.DefaultSections, nil
	}
	for _, sec := range s.Sections {
		if !slices.Contains(p.Sections, sec) {
			return nil, fmt.Errorf("%s has no section %q (it has %s)", p.Name, sec, p.sectionNames())
		}
	}
	return s.Sections, nil
}

func (p *Protocol) sectionNames() string {
	names := make([]string, len(p.Sections))
	for i, s := range p.Sections {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

func (p *Protocol) optionNames() string {
	if len(p.Options) == 0 {
		return "none"
	}
	names := make([]string, len(p.Options))
	for i, o := range p.Options {
		names[i] = o.Name
	}
	return strings.Join(names, ", ")
}

// option returns the value of the option name in s, and an error when it
// is not one of the option's values.
func (p *Protocol) option(s Settings, name string) (string, error) {
	v, ok := s.Options[name]
	if !ok {
		return "", nil
	}
	for _, o := range p.Options {
		if o.Name == name && o.Values != nil && !slices.Contains(o.Values, v) {
			return "", fmt.Errorf("%s option %s: %q is not one of %s", p.Name, name, v, strings.Join(o.Values, ", "))
		}
	}
	return v, nil
}

// MustPrepare is p.Prepare(s) for settings known to be good, such as
// those of tests and examples; it panics on an error.
func (p *Protocol) MustPrepare(s Settings) Query {
	q, err := p.Prepare(s)
	if err != nil {
		panic(err)
	}
	return q
}
