package a2s

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"net/netip"
	"time"

	"github.com/gsq-project/gsq/internal/neterr"
	"github.com/gsq-project/gsq/internal/udpclient"
)

// Sections is a set of the queries a [Conversation] asks one server.
type Sections uint8

// The sections of a conversation, in the order they are asked.
const (
	SectionInfo    Sections = 1 << iota // A2S_INFO
	SectionPlayers                      // A2S_PLAYER
	SectionRules                        // A2S_RULES
	SectionPing                         // A2A_PING, deprecated: Source servers ignore it
)

// AllSections is what [Options] with no Sections ask: info, players and
// rules.
const AllSections = SectionInfo | SectionPlayers | SectionRules

const numSections = 4

var (
	sectionNames    = [numSections]string{"info", "players", "rules", "ping"}
	sectionRequests = [numSections]byte{TypeInfoRequest, TypePlayerRequest, TypeRulesRequest, TypePingRequest}
)

// Defaults of [Options] (and of [Client]) for the fields left zero.
const (
	DefaultTimeout         = time.Second
	DefaultRetries         = 2
	DefaultDeadline        = 5 * time.Second
	DefaultMaxChallenges   = 3
	DefaultGoldSourceGrace = 50 * time.Millisecond
)

// Options say what a [Conversation] asks a server and how long it waits.
// Options are only read by the conversations that use them, so one value
// may serve any number of them, at the same time too.
type Options struct {
	// Sections is what to ask; zero means AllSections.
	Sections Sections
	// Timeout is how long to wait for the answer to the first send of a
	// request; each resend waits half as long again as the one before.
	// 0 means DefaultTimeout: 1s, 1.5s, 2.25s...
	Timeout time.Duration
	// MaxTimeout caps the wait of one send; 0 means no cap.
	MaxTimeout time.Duration
	// Retries is how many times an unanswered request is sent again: 0
	// means DefaultRetries, a negative value never.
	Retries int
	// Deadline is the most time the conversation takes from its first
	// request, whatever the retries: what is unanswered then fails with a
	// timeout. 0 means DefaultDeadline, a negative value no deadline (the
	// retries bound the wait).
	Deadline time.Duration
	// MaxChallenges bounds the challenges (S2C_CHALLENGE replies carrying
	// a challenge other than the one in use) accepted by one conversation;
	// one more fails what is left with ErrTooManyChallenges. 0 means
	// DefaultMaxChallenges.
	MaxChallenges int
	// GoldSourceGrace is how long the conversation waits, after an
	// obsolete GoldSource 'm' INFO reply, for the Source 'I' reply some
	// GoldSource servers send too. 0 means DefaultGoldSourceGrace, a
	// negative value no wait.
	GoldSourceGrace time.Duration
	// LegacyChallenge fetches a missing challenge for A2S_PLAYER and
	// A2S_RULES with A2S_SERVERQUERY_GETCHALLENGE ('W', 0x57), padded with
	// four bytes to the size of the 'A' reply so that a server refusing to
	// amplify can answer it, instead of a request carrying -1.
	LegacyChallenge bool
	// PadInfo pads A2S_INFO requests to PaddedInfoSize bytes, the
	// alternative to the challenge that Valve proposed in 2020: a server
	// that accepts it (see [Server.AcceptPaddedInfo]) answers at once, one
	// round trip sooner.
	PadInfo bool
	// Serial keeps one request in the air at a time, for servers that drop
	// bursts: the next goes out after the answer to the previous one.
	Serial bool
}

func (o *Options) sections() Sections {
	if s := o.Sections & (AllSections | SectionPing); s != 0 {
		return s
	}
	return AllSections
}

func (o *Options) timeout(attempt int) time.Duration {
	t := o.Timeout
	if t <= 0 {
		t = DefaultTimeout
	}
	return udpclient.Backoff(t, o.MaxTimeout, attempt)
}

func (o *Options) retries() int {
	switch {
	case o.Retries < 0:
		return 0
	case o.Retries == 0:
		return DefaultRetries
	}
	return min(o.Retries, math.MaxUint16)
}

func (o *Options) deadline() time.Duration {
	if o.Deadline == 0 {
		return DefaultDeadline
	}
	return o.Deadline
}

func (o *Options) maxChallenges() int {
	if o.MaxChallenges <= 0 {
		return DefaultMaxChallenges
	}
	return o.MaxChallenges
}

func (o *Options) grace() time.Duration {
	if o.GoldSourceGrace == 0 {
		return DefaultGoldSourceGrace
	}
	return o.GoldSourceGrace
}

// Result is what a conversation got from its server: for each section
// asked, its value or its error. A section not asked has neither. Every
// error is an [*OpError] naming the section and the server.
type Result struct {
	Info *Info // the Source 'I' reply when one came, else the GoldSource 'm' one
	// GoldSource is the obsolete 'm' INFO reply when one came (Info too,
	// when it was the only one).
	GoldSource *Info
	InfoErr    error
	Players    *Players
	PlayersErr error
	Rules      *Rules
	RulesErr   error
	PingErr    error // A2A_PING has no value but its round trip
	// RTT is the round-trip time: from the latest request sent to the
	// first datagram of the server's that followed. Zero when nothing came.
	RTT time.Duration
}

func (r *Result) setErr(i int, err error) {
	switch i {
	case 0:
		r.InfoErr = err
	case 1:
		r.PlayersErr = err
	case 2:
		r.RulesErr = err
	default:
		r.PingErr = err
	}
}

// Conversation is the client side of one A2S exchange with one server, as
// a state machine that does no I/O and reads no clock: its driver sends
// the requests it hands out, feeds it the server's datagrams and calls
// Tick when the time it asks for comes. [Client] drives one per query on
// its shared socket, and the scan engine thousands at once on its own.
//
// The conversation follows the challenge protocol for every section: until
// the server's challenge is known (or the server has shown that it needs
// none, by answering A2S_PLAYER or A2S_RULES without one), one section is
// asked at a time, since each request sent without the challenge earns an
// S2C_CHALLENGE ('A') reply; then every section left is asked at once with
// it. A new challenge asks again for every section not answered. An 'l'
// reply (a GoldSource server refusing this address) fails every section at
// once. Split replies are reassembled, several at once; a GoldSource
// server's 'm' INFO reply waits GoldSourceGrace for an 'I' one.
//
// An unanswered request is sent again after its timeout, Retries times;
// when it has no retry left it fails with a timeout, and so does every
// section left if the server never sent anything that reads as A2S (a
// server that is down would not answer them either). The Deadline ends the
// whole conversation. A section that ends without an answer while the
// server sent datagrams that are not A2S fails with [ErrNotA2S] rather
// than a timeout: the server is there, but speaks something else. A split
// reply that cannot be reassembled or decompressed fails the section
// waiting for it at once when only one is.
//
// The zero value is ready for Start; a Conversation may be started again
// once done, which reuses its storage.
type Conversation struct {
	o    *Options
	addr netip.AddrPort

	want     Sections
	finished Sections // answered, or failed
	air      Sections // requests sent and not answered
	asked    Sections // sections not finished whose request went out at least once
	due      Sections // requests to send
	resent   Sections // requests in the air or due that are resends after a timeout
	open     bool     // every section left may be asked at once

	chal     uint32
	hasChal  bool
	newChals int  // challenges accepted
	heard    bool // the server sent something that reads as A2S

	attempt  [numSections]uint16
	expiry   [numSections]time.Time
	started  bool
	deadline time.Time // zero: none
	grace    time.Time // zero: no GoldSource grace running
	lastSend time.Time
	rttSet   bool
	rttClean bool // the round trip was timed with first sends only

	bad error // the first datagram that could not be read

	reasm Reassembler
	res   Result
}

// Start begins a conversation with addr about what o says. challenge is
// the server's challenge when known (hasChallenge), from an earlier
// conversation: then every section is asked at once. o must not change
// while the conversation runs.
func (c *Conversation) Start(o *Options, addr netip.AddrPort, challenge uint32, hasChallenge bool) {
	c.reasm.Reset()
	*c = Conversation{o: o, addr: addr, chal: challenge, hasChal: hasChallenge, open: hasChallenge, reasm: c.reasm}
	c.want = o.sections()
	c.ask(c.next())
}

// next is what to ask when nothing is in the air: every section left once
// open, else the first.
func (c *Conversation) next() Sections {
	left := c.want &^ c.finished
	if c.open {
		return left
	}
	return left & -left
}

// ask makes sections s due, as new requests.
func (c *Conversation) ask(s Sections) {
	c.due |= s
	c.air &^= s
	c.resent &^= s
	for w := s; w != 0; w &= w - 1 {
		c.attempt[bits.TrailingZeros8(uint8(w))] = 0
	}
}

// Done reports whether the conversation is over: every section asked is
// answered or failed.
func (c *Conversation) Done() bool { return c.finished == c.want && c.grace.IsZero() }

// Pending reports whether a request is ready to be sent: AppendRequest
// will hand it out.
func (c *Conversation) Pending() bool {
	return c.due != 0 && !(c.o.Serial && c.air != 0)
}

// Heard reports whether the server has sent something that reads as A2S.
// A driver that paces its sends may put the requests of such a live
// server before the resends to silent ones.
func (c *Conversation) Heard() bool { return c.heard }

// Resending reports whether the next request is a resend after a
// timeout.
func (c *Conversation) Resending() bool {
	next := c.due & -c.due
	return c.resent&next != 0
}

// Challenge returns the server's challenge, when known: the driver keeps
// it for the next conversation with the server.
func (c *Conversation) Challenge() (challenge uint32, ok bool) { return c.chal, c.hasChal }

// RoundTrip returns the conversation's round-trip time, and whether it
// times the network: measured while every request in the air was a first
// send (Karn's rule), so that the answer cannot be one to an earlier send.
func (c *Conversation) RoundTrip() (rtt time.Duration, clean bool) {
	return c.res.RTT, c.rttSet && c.rttClean
}

// Result returns what the conversation got so far; the whole answer once
// Done. It points into the conversation: it is valid until the next Start.
func (c *Conversation) Result() *Result { return &c.res }

// AppendRequest appends the next request to send to b and returns it, and
// ok false when none is ready (see Pending). The request counts as sent
// at now: its timeout starts, and the first one starts the Deadline.
func (c *Conversation) AppendRequest(b []byte, now time.Time) (req []byte, ok bool) {
	if !c.Pending() {
		return b, false
	}
	s := c.due & -c.due
	i := bits.TrailingZeros8(uint8(s))
	r := Request{Type: sectionRequests[i], Challenge: c.chal, HasChallenge: c.hasChal}
	switch {
	case c.o.LegacyChallenge && !c.hasChal && (s == SectionPlayers || s == SectionRules):
		r = Request{Type: TypeChallengeRequestLegacy, Padding: 4}
	case c.o.PadInfo && s == SectionInfo:
		r = r.PadTo(PaddedInfoSize)
	}
	out, err := r.AppendBinary(b)
	if err != nil { // cannot happen: known types, bounded padding
		c.finish(i, err, false)
		return b, false
	}
	c.due &^= s
	c.air |= s
	c.asked |= s
	c.expiry[i] = now.Add(c.o.timeout(int(c.attempt[i])))
	c.lastSend = now
	if !c.started {
		c.started = true
		if d := c.o.deadline(); d > 0 {
			c.deadline = now.Add(d)
		}
	}
	return out, true
}

// Wake returns when the conversation next needs Tick: the earliest of its
// requests' timeouts, the Deadline and the GoldSource grace. It is zero
// when no timer is needed.
func (c *Conversation) Wake() time.Time {
	if c.Done() {
		return time.Time{}
	}
	var t time.Time
	earliest := func(u time.Time) {
		if !u.IsZero() && (t.IsZero() || u.Before(t)) {
			t = u
		}
	}
	for w := c.air; w != 0; w &= w - 1 {
		earliest(c.expiry[bits.TrailingZeros8(uint8(w))])
	}
	earliest(c.grace)
	earliest(c.deadline)
	return t
}

// Tick handles the timers due at now: it ends the GoldSource grace, makes
// unanswered requests due again or fails them, and enforces the
// Deadline.
func (c *Conversation) Tick(now time.Time) {
	if c.Done() {
		return
	}
	if !c.grace.IsZero() && !now.Before(c.grace) {
		c.grace = time.Time{}
	}
	if !c.deadline.IsZero() && !now.Before(c.deadline) {
		c.failLeft(c.silence())
		return
	}
	retries := c.o.retries()
	for w := c.air; w != 0; w &= w - 1 {
		i := bits.TrailingZeros8(uint8(w))
		if now.Before(c.expiry[i]) {
			continue
		}
		s := Sections(1) << i
		c.air &^= s
		if int(c.attempt[i]) < retries {
			c.attempt[i]++
			c.due |= s
			c.resent |= s
			continue
		}
		if !c.heard {
			// Nothing ever came back: the server is down or filtered, and
			// the other sections would only time out too.
			c.failLeft(c.silence())
			return
		}
		c.finish(i, c.silence(), false)
	}
}

// silence is the cause of a section that got no answer: a timeout, unless
// the server sent what is not A2S.
func (c *Conversation) silence() error {
	if c.bad != nil {
		return c.bad
	}
	return noAnswer{fragments: c.reasm.held()}
}

// Ended returns the sections that have ended, answered or failed; INFO
// not while the GoldSource grace runs, as an 'I' reply may still replace
// the 'm' one. A driver that shows each section as it comes reads it
// between steps.
func (c *Conversation) Ended() Sections {
	if !c.grace.IsZero() {
		return c.finished &^ SectionInfo
	}
	return c.finished
}

// Fail ends every section not finished yet with err: the driver gave up
// (a send failed, its context ended, it closed). A context's deadline
// (err matches context.DeadlineExceeded) ends them as the Deadline does:
// with a timeout that matches context.DeadlineExceeded too, unless the
// server sent what is not A2S.
func (c *Conversation) Fail(err error) {
	switch {
	case !errors.Is(err, context.DeadlineExceeded):
		c.failLeft(err)
	case c.bad != nil:
		c.failLeft(c.bad)
	default:
		c.failLeft(noAnswer{ctx: true, fragments: c.reasm.held()})
	}
}

// Unreachable ends every section not finished yet with [ErrUnreachable]
// and err, the kernel's report: the network says the server cannot be
// reached (an ICMP port unreachable, for a closed port).
func (c *Conversation) Unreachable(err error) {
	c.failLeft(&neterr.Unreachable{Sentinel: ErrUnreachable, Err: err})
}

// Receive digests a datagram from the server. b is not retained.
func (c *Conversation) Receive(b []byte, now time.Time) { c.receive(b, false, now) }

// receive is Receive; owned is set when the conversation may keep b (the
// parsed values then alias it).
func (c *Conversation) receive(b []byte, owned bool, now time.Time) {
	if c.Done() {
		return // nothing is waiting: no reassembly, no decompression
	}
	h, typ, err := ParseHeader(b)
	if err != nil {
		c.garbage(err)
		return
	}
	if h == HeaderSplit {
		f, err := ParseFragment(b)
		if err != nil {
			c.badReply(err)
			return
		}
		c.sawA2S(now)
		if c.asked == 0 && c.grace.IsZero() {
			return // no request out that it may answer: not worth reassembling
		}
		whole, done, err := c.reasm.Add(f)
		switch {
		case err != nil:
			c.badReply(err)
			return
		case !done:
			return
		case len(whole) < 5:
			c.badReply(parseErr("reply", len(whole), ErrTruncated))
			return
		}
		b, typ, owned = whole, whole[4], true
	}
	switch typ {
	case TypeChallengeReply:
		chal, err := ParseChallenge(b)
		if err != nil {
			c.badReply(err)
			return
		}
		c.sawA2S(now)
		c.challenged(chal)
	case TypeBannedReply:
		msg, err := ParseBanned(b)
		if err != nil {
			c.badReply(err)
			return
		}
		c.sawA2S(now)
		c.failLeft(&BannedError{Message: msg})
	case TypeInfoReply, TypeInfoReplyGoldSource:
		c.sawA2S(now)
		c.info(b, typ, owned, now)
	case TypePlayerReply:
		c.sawA2S(now)
		if c.asked&SectionPlayers != 0 {
			p, err := parsePlayers(b, owned)
			c.res.Players = p
			c.finish(1, err, true)
		}
	case TypeRulesReply:
		c.sawA2S(now)
		if c.asked&SectionRules != 0 {
			r, err := parseRules(b, owned)
			c.res.Rules = r
			c.finish(2, err, true)
		}
	case TypePingReply:
		c.sawA2S(now)
		if c.asked&SectionPing != 0 {
			_, err := ParsePing(b)
			c.finish(3, err, true)
		}
	default:
		c.garbage(parseErr("reply", 4, fmt.Errorf("%w 0x%02x", ErrUnexpectedType, typ)))
	}
}

// sawA2S records that the server sent something that reads as A2S, and
// times the round trip on the first such datagram.
func (c *Conversation) sawA2S(now time.Time) {
	c.heard = true
	if c.rttSet || !c.started {
		return
	}
	c.rttSet = true
	c.res.RTT = max(now.Sub(c.lastSend), 0)
	c.rttClean = c.resent&c.air == 0
}

// garbage records a datagram that is not A2S at all. It does not end a
// section at once (it may be a stray), but a section that then ends
// unanswered reports it.
func (c *Conversation) garbage(err error) {
	if c.bad == nil {
		c.bad = &notA2S{err}
	}
}

// badReply records a reply that reads as A2S but cannot be used (a split
// reply that cannot be reassembled or decompressed, a malformed challenge)
// and fails the section waiting for it when only one is.
func (c *Conversation) badReply(err error) {
	if c.bad == nil {
		c.bad = err
	}
	if c.due == 0 && bits.OnesCount8(uint8(c.air)) == 1 {
		c.finish(bits.TrailingZeros8(uint8(c.air)), err, false)
	}
}

// challenged handles an S2C_CHALLENGE reply.
func (c *Conversation) challenged(chal uint32) {
	if c.hasChal && chal == c.chal {
		return // a copy of the challenge in use
	}
	if c.newChals++; c.newChals > c.o.maxChallenges() {
		c.failLeft(ErrTooManyChallenges)
		return
	}
	c.chal, c.hasChal, c.open = chal, true, true
	c.ask(c.want &^ c.finished)
}

// info handles an A2S_INFO reply. A GoldSource server may send an 'm'
// reply and an 'I' reply to one request: the first answers the section,
// and an 'I' arriving later still replaces an 'm', which is kept in
// GoldSource.
func (c *Conversation) info(b []byte, typ byte, owned bool, now time.Time) {
	if c.asked&SectionInfo == 0 {
		if typ == TypeInfoReply && c.res.GoldSource != nil && c.res.Info == c.res.GoldSource {
			if in, err := parseInfo(b, owned, nil); err == nil {
				c.res.Info = in
			}
			c.grace = time.Time{}
		}
		return // a copy, or a reply to a question not asked
	}
	in, err := parseInfo(b, owned, nil)
	if err == nil {
		c.res.Info = in
		if typ == TypeInfoReplyGoldSource {
			c.res.GoldSource = in
			if g := c.o.grace(); g > 0 {
				c.grace = now.Add(g)
			}
		}
	}
	c.finish(0, err, true)
}

// finish ends section i with err (nil: answered). replied is set when the
// server's answer ended it: an answer to A2S_PLAYER or A2S_RULES sent
// without a challenge shows that the server needs none.
func (c *Conversation) finish(i int, err error, replied bool) {
	s := Sections(1) << i
	if c.finished&s != 0 {
		return
	}
	c.finished |= s
	c.air &^= s
	c.asked &^= s
	c.due &^= s
	c.resent &^= s
	if err != nil {
		c.res.setErr(i, c.opError(i, err))
	}
	if c.finished == c.want {
		c.reasm.Reset() // hands partial replies' storage back
		return
	}
	if !c.open {
		c.open = replied && (s == SectionPlayers || s == SectionRules)
		if c.air == 0 && c.due == 0 {
			c.ask(c.next())
		}
	}
}

// failLeft ends every section not finished yet with err.
func (c *Conversation) failLeft(err error) {
	left := c.want &^ c.finished
	for w := left; w != 0; w &= w - 1 {
		i := bits.TrailingZeros8(uint8(w))
		c.res.setErr(i, c.opError(i, err))
	}
	c.finished = c.want
	c.air, c.asked, c.due, c.resent = 0, 0, 0, 0
	c.grace = time.Time{}
	c.reasm.Reset() // hands partial replies' storage back
}

func (c *Conversation) opError(i int, err error) error {
	return &OpError{Pkg: "a2s", Op: sectionNames[i], Addr: c.addr.String(), Err: err}
}
