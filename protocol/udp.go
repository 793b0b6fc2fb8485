package protocol

import (
	"net/netip"

	"github.com/gsq-project/gsq/result"
)

// asking is what every Query shares: the protocol, the sections it asks
// and the Detail its results start with. A Query type embeds it.
type asking struct {
	p        *Protocol
	sections []result.Section
	detail   func() result.Detail // a result's Detail before any answer
}

func (a *asking) Protocol() *Protocol        { return a.p }
func (a *asking) Sections() []result.Section { return a.sections }

func (a *asking) NewResult(target string, addr netip.AddrPort) *result.Result {
	r := result.New(target, addr, a.p.Name)
	r.Detail = a.detail()
	return r
}

// exchanger is what [udpQuery] needs of a UDP protocol package's
// Conversation C (internal/udpclient's template): its pointer type PC is
// a Conversation, begun by a Start that reads options of type *O, whose
// Result is an *R, all of it once Done.
type exchanger[C, O, R any] interface {
	*C
	Conversation
	Start(o *O, addr netip.AddrPort, challenge uint32, hasChallenge bool)
	Result() *R
}

// udpQuery is the Query of a UDP protocol whose conversation ends all at
// once (OGP, Minecraft's Query, Bedrock, Satisfactory): it starts the
// package's Conversation with options made from the waits, and records
// its Result once it is done. A2S, whose sections end one by one, has a
// Query of its own.
type udpQuery[C, O, R any, PC exchanger[C, O, R]] struct {
	asking
	options func(w Waits) O                // a conversation's options
	record  func(r *result.Result, res *R) // records a done conversation's Result
}

// newUDPQuery returns the Query of p that asks sections (in p's order)
// with C, a UDP protocol package's Conversation: detail makes a result's
// Detail, options a conversation's options from the waits, and record
// records a done conversation's Result in a result of detail's. Its type
// arguments past C follow from options and record:
//
//	newUDPQuery[satisfactory.Conversation](p, p.Sections, detail, options, (*result.Result).SetSatisfactory)
func newUDPQuery[C, O, R any, PC exchanger[C, O, R]](p *Protocol, sections []result.Section, detail func() result.Detail,
	options func(w Waits) O, record func(r *result.Result, res *R)) *udpQuery[C, O, R, PC] {
	return &udpQuery[C, O, R, PC]{asking: asking{p: p, sections: sections, detail: detail}, options: options, record: record}
}

// udpPrepare is the prepare of a UDP protocol with no options of its own
// that answers all of its sections at once, whatever is asked: a
// [newUDPQuery] of C with detail, options and record.
func udpPrepare[C, O, R any, PC exchanger[C, O, R]](detail func() result.Detail, options func(w Waits) O,
	record func(r *result.Result, res *R)) func(p *Protocol, sections []result.Section, s Settings) (Query, error) {
	return func(p *Protocol, _ []result.Section, _ Settings) (Query, error) {
		return newUDPQuery[C, O, R, PC](p, p.Sections, detail, options, record), nil
	}
}

// udpConversation is a conversation with the options it reads, in one
// allocation.
type udpConversation[C, O any] struct {
	conv C
	opts O
}

func (q *udpQuery[C, O, R, PC]) Start(w Waits, addr netip.AddrPort, challenge uint32, hasChallenge bool) Conversation {
	c := &udpConversation[C, O]{opts: q.options(w)}
	conv := PC(&c.conv)
	conv.Start(&c.opts, addr, challenge, hasChallenge)
	return conv
}

// Record records the conversation's Result, answer or error, in every
// section asked, once it is done.
func (q *udpQuery[C, O, R, PC]) Record(conv Conversation, r *result.Result) []result.Section {
	c := conv.(PC)
	if !c.Done() {
		return nil
	}
	q.record(r, c.Result())
	return q.sections
}
