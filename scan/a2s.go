package scan

import (
	"errors"
	"fmt"
	"math/bits"
	"net/netip"
	"time"

	"github.com/gsq-project/gsq/a2s"
)

// A2S asks each server the Valve A2S queries. With every field false it
// asks for info, players and rules.
type A2S struct {
	Info    bool // A2S_INFO
	Players bool // A2S_PLAYER
	Rules   bool // A2S_RULES
	// MaxChallenges bounds the S2C_CHALLENGE replies accepted in a row,
	// without an answer in between, before the requests waiting for an
	// answer fail with a2s.ErrTooManyChallenges; 0 means 3.
	MaxChallenges int
}

// DefaultPort is the usual A2S query port.
func (A2S) DefaultPort() uint16 { return 27015 }

func (A2S) protocol() {}

// A2SResult is what one server answered. Each section asked for holds a
// value or its own error; a section not asked for has neither.
type A2SResult struct {
	Ping       time.Duration // round trip of the A2S_INFO exchange; 0 if unknown
	Info       *a2s.Info
	GoldSource *a2s.Info // the 'm' reply of a server that sent both 'm' and 'I'
	InfoErr    error
	Players    *a2s.Players
	PlayersErr error
	Rules      *a2s.Rules
	RulesErr   error
}

// The sections of an A2S query, which are also its request slots, in the
// order they are asked.
const (
	secInfo = iota
	secPlayers
	secRules
	secDone
)

var requestTypes = [secDone]byte{a2s.TypeInfoRequest, a2s.TypePlayerRequest, a2s.TypeRulesRequest}

func (p A2S) start(netip.AddrPort) (query, change) {
	q := &a2sQuery{maxChallenges: p.MaxChallenges, res: &A2SResult{}}
	if q.maxChallenges <= 0 {
		q.maxChallenges = 3
	}
	for s, on := range [secDone]bool{p.Info, p.Players, p.Rules} {
		if on {
			q.want |= 1 << s
		}
	}
	if q.want == 0 {
		q.want = 1<<secDone - 1
	}
	return q, change{send: q.next()}
}

// a2sQuery is the conversation with one server. Until the server's
// challenge is known (or it has shown it needs none), one section is asked
// at a time: every request sent without the challenge earns an
// S2C_CHALLENGE. Then every section left is asked at once with it. A new
// challenge (the server changed its mind) asks again for every section not
// answered yet.
type a2sQuery struct {
	want         uint8 // sections asked for, one bit each
	finished     uint8 // sections answered, or failed
	sent         uint8 // sections whose request was sent
	open         bool  // every section left may be asked at once
	challenge    uint32
	hasChallenge bool
	challenges   int // S2C_CHALLENGE replies since the last answer
	heard        bool
	infoSentAt   time.Time
	reasm        *a2s.Reassembler
	res          *A2SResult

	maxChallenges int
}

// next is the sections to ask now, when nothing is in the air: every
// section left once open, else the first.
func (q *a2sQuery) next() uint8 {
	left := q.want &^ q.finished
	if q.open {
		return left
	}
	return left & -left
}

// waiting is the sections whose request was sent and is not answered.
func (q *a2sQuery) waiting() uint8 { return q.sent &^ q.finished }

func (q *a2sQuery) done() bool { return q.finished == q.want }

func (q *a2sQuery) request(b []byte, slot int, now time.Time) []byte {
	req := a2s.Request{Type: requestTypes[slot], Challenge: q.challenge, HasChallenge: q.hasChallenge}
	q.sent |= 1 << slot
	if slot == secInfo {
		q.infoSentAt = now
	}
	b, _ = req.AppendBinary(b) // cannot fail: known type, no padding
	return b
}

// finish ends section s with err (nil: answered). replied is set when
// the server's answer ended it: an answer to A2S_PLAYER or A2S_RULES sent
// without a challenge shows that the server needs none.
func (q *a2sQuery) finish(s int, err error, replied bool) change {
	q.finished |= 1 << s
	if err != nil {
		q.setErr(s, err)
	} else {
		q.challenges = 0
	}
	ch := change{finished: 1 << s}
	if !q.open {
		q.open = replied && s != secInfo
		ch.send = q.next()
	}
	return ch
}

func (q *a2sQuery) setErr(sec int, err error) {
	switch sec {
	case secInfo:
		q.res.InfoErr = err
	case secPlayers:
		q.res.PlayersErr = err
	case secRules:
		q.res.RulesErr = err
	}
}

// garbage handles a datagram that cannot be read. It fails the section
// waiting for an answer when there is one only; with several, which one
// the datagram was meant for is unknown, and their timeouts will tell.
func (q *a2sQuery) garbage(err error) change {
	w := q.waiting()
	if bits.OnesCount8(w) != 1 {
		return change{}
	}
	return q.finish(bits.TrailingZeros8(w), err, false)
}

func (q *a2sQuery) reply(b []byte, now time.Time) change {
	h, typ, err := a2s.ParseHeader(b)
	if err != nil {
		return q.garbage(err)
	}
	owned := false // b is the reassembler's, not the socket's
	if h == a2s.HeaderSplit {
		if b, err = q.reassemble(b); err != nil {
			return q.garbage(err)
		}
		if b == nil {
			return change{}
		}
		typ, owned = b[4], true
	}
	switch typ {
	case a2s.TypeChallengeReply:
		c, err := a2s.ParseChallenge(b)
		if err != nil {
			return q.garbage(err)
		}
		if q.hasChallenge && c == q.challenge {
			return change{} // a copy of the challenge in use
		}
		q.heard = true
		if q.challenges++; q.challenges > q.maxChallenges {
			q.challenges = 0
			var ch change
			for w := q.waiting(); w != 0; w &= w - 1 {
				c := q.finish(bits.TrailingZeros8(w), a2s.ErrTooManyChallenges, false)
				ch.finished |= c.finished
				ch.send |= c.send &^ ch.finished
			}
			return ch
		}
		q.challenge, q.hasChallenge, q.open = c, true, true
		return change{send: q.next()}
	case a2s.TypeBannedReply:
		// The server refuses this address every query: every section
		// left fails now, as retries would only earn more refusals.
		msg, err := a2s.ParseBanned(b)
		if err != nil {
			return q.garbage(err)
		}
		q.heard = true
		return q.failLeft(&a2s.BannedError{Message: msg})
	case a2s.TypeInfoReply, a2s.TypeInfoReplyGoldSource:
		return q.info(b, typ, now)
	case a2s.TypePlayerReply:
		if q.waiting()&(1<<secPlayers) == 0 {
			return change{}
		}
		q.heard = true
		q.res.Players, err = a2s.ParsePlayers(b)
		return q.finish(secPlayers, err, true)
	case a2s.TypeRulesReply:
		if q.waiting()&(1<<secRules) == 0 {
			return change{}
		}
		q.heard = true
		if owned {
			q.res.Rules, err = a2s.ParseRulesOwned(b)
		} else {
			q.res.Rules, err = a2s.ParseRules(b)
		}
		return q.finish(secRules, err, true)
	}
	return change{} // a type this conversation does not expect: a stray
}

// info handles an A2S_INFO reply. GoldSource servers may send an 'm'
// reply and an 'I' reply to one request: the first one answers the
// section; an 'I' arriving later still replaces an 'm', which is kept in
// GoldSource.
func (q *a2sQuery) info(b []byte, typ byte, now time.Time) change {
	switch {
	case q.waiting()&(1<<secInfo) != 0:
	case q.res.Info != nil && q.res.Info.Format == a2s.TypeInfoReplyGoldSource && typ == a2s.TypeInfoReply:
		if in, err := a2s.ParseInfo(b); err == nil {
			q.res.GoldSource, q.res.Info = q.res.Info, in
		}
		return change{}
	default:
		return change{}
	}
	q.heard = true
	in, err := a2s.ParseInfo(b)
	if err == nil {
		q.res.Info, q.res.Ping = in, now.Sub(q.infoSentAt)
	}
	return q.finish(secInfo, err, true)
}

// reassemble adds a split fragment; it returns the whole reply, with its
// simple header, once every fragment is in, and nil before.
func (q *a2sQuery) reassemble(b []byte) ([]byte, error) {
	f, err := a2s.ParseFragment(b)
	if err != nil {
		return nil, err
	}
	if q.reasm == nil {
		q.reasm = &a2s.Reassembler{}
	}
	payload, done, err := q.reasm.Add(f)
	if err != nil || !done {
		return nil, err
	}
	if len(payload) < 5 {
		return nil, fmt.Errorf("scan: reassembled reply of %d bytes: %w", len(payload), a2s.ErrTruncated)
	}
	return payload, nil
}

func (q *a2sQuery) expire(slot int, err error) change {
	if err == nil {
		err = a2s.ErrTimeout
	}
	if !q.heard {
		// Nothing ever came back: the server is down or filtered, so the
		// other sections would only time out too.
		return q.failLeft(err)
	}
	return q.finish(slot, err, false)
}

// failLeft ends every section not finished yet with err.
func (q *a2sQuery) failLeft(err error) change {
	left := q.want &^ q.finished
	for w := left; w != 0; w &= w - 1 {
		q.setErr(bits.TrailingZeros8(w), err)
	}
	q.finished = q.want
	return change{finished: left}
}

func (q *a2sQuery) status() Status {
	var ok, timeouts, failures int
	for s, errp := range [secDone]error{q.res.InfoErr, q.res.PlayersErr, q.res.RulesErr} {
		switch {
		case q.want&(1<<s) == 0:
		case errp == nil:
			ok++
		case errors.Is(errp, a2s.ErrTimeout):
			timeouts++
		default:
			failures++
		}
	}
	switch {
	case failures == 0 && timeouts == 0:
		return StatusAnswered
	case ok > 0:
		return StatusPartial
	case failures == 0:
		return StatusTimedOut
	}
	return StatusFailed
}

func (q *a2sQuery) fill(r *Result) {
	r.A2S = q.res
	if q.reasm != nil {
		q.reasm.Reset() // hands the storage of partial replies back
	}
}
