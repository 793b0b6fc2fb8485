package scan

import (
	"errors"
	"fmt"
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
	// MaxChallenges bounds the S2C_CHALLENGE replies accepted for one
	// request before giving up with a2s.ErrTooManyChallenges; 0 means 3.
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

// The sections of an A2S query, in the order they are asked.
const (
	secInfo = iota
	secPlayers
	secRules
	secDone
)

var requestTypes = [secDone]byte{a2s.TypeInfoRequest, a2s.TypePlayerRequest, a2s.TypeRulesRequest}

func (p A2S) start(netip.AddrPort) query {
	q := &a2sQuery{maxChallenges: p.MaxChallenges, res: &A2SResult{}}
	if q.maxChallenges <= 0 {
		q.maxChallenges = 3
	}
	q.want = [secDone]bool{p.Info, p.Players, p.Rules}
	if !p.Info && !p.Players && !p.Rules {
		q.want = [secDone]bool{true, true, true}
	}
	q.sec = -1
	q.advance()
	return q
}

// a2sQuery is the conversation with one server: one section at a time,
// each answering challenges, the challenge kept for the next sections.
type a2sQuery struct {
	want          [secDone]bool
	sec           int
	challenge     uint32
	hasChallenge  bool
	sentWith      bool // the current request carried the challenge
	challenges    int  // S2C_CHALLENGE replies to the current section
	maxChallenges int
	heard         bool // the server sent something valid
	reasm         *a2s.Reassembler
	res           *A2SResult
}

func (q *a2sQuery) request(b []byte) []byte {
	req := a2s.Request{Type: requestTypes[q.sec], Challenge: q.challenge, HasChallenge: q.hasChallenge}
	q.sentWith = q.hasChallenge
	b, _ = req.AppendBinary(b) // cannot fail: known type, no padding
	return b
}

// advance moves to the next section asked for.
func (q *a2sQuery) advance() step {
	q.challenges = 0
	if q.reasm != nil {
		q.reasm.Reset()
	}
	for q.sec++; q.sec < secDone; q.sec++ {
		if q.want[q.sec] {
			return stepSend
		}
	}
	return stepDone
}

// fail records err for the current section and moves on.
func (q *a2sQuery) fail(err error) step {
	q.setErr(q.sec, err)
	return q.advance()
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

func (q *a2sQuery) reply(b []byte, rtt time.Duration) step {
	h, typ, err := a2s.ParseHeader(b)
	if err != nil {
		return q.fail(err)
	}
	if h == a2s.HeaderSplit {
		if b, err = q.reassemble(b); err != nil {
			return q.fail(err)
		}
		if b == nil {
			return stepWait
		}
		typ = b[4]
	}
	switch typ {
	case a2s.TypeChallengeReply:
		c, err := a2s.ParseChallenge(b)
		if err != nil {
			return q.fail(err)
		}
		if q.sentWith && c == q.challenge {
			return stepWait // a late copy of a challenge already used
		}
		q.heard = true
		q.challenges++
		if q.challenges > q.maxChallenges {
			return q.fail(a2s.ErrTooManyChallenges)
		}
		q.challenge, q.hasChallenge = c, true
		return stepSend
	case a2s.TypeInfoReply, a2s.TypeInfoReplyGoldSource:
		return q.info(b, typ, rtt)
	case a2s.TypePlayerReply:
		if q.sec != secPlayers {
			return stepWait
		}
		q.heard = true
		if q.res.Players, err = a2s.ParsePlayers(b); err != nil {
			return q.fail(err)
		}
		return q.advance()
	case a2s.TypeRulesReply:
		if q.sec != secRules {
			return stepWait
		}
		q.heard = true
		if q.res.Rules, err = a2s.ParseRules(b); err != nil {
			return q.fail(err)
		}
		return q.advance()
	}
	return stepWait // a type this conversation does not expect: a stray
}

// info handles an A2S_INFO reply. GoldSource servers may send an 'm'
// reply and an 'I' reply to one request: the first one moves the query
// on; an 'I' arriving later still replaces an 'm', which is kept in
// GoldSource.
func (q *a2sQuery) info(b []byte, typ byte, rtt time.Duration) step {
	switch {
	case q.sec == secInfo:
	case q.want[secInfo] && q.res.Info != nil && q.res.Info.Format == a2s.TypeInfoReplyGoldSource && typ == a2s.TypeInfoReply:
		if in, err := a2s.ParseInfo(b); err == nil {
			q.res.GoldSource, q.res.Info = q.res.Info, in
		}
		return stepWait
	default:
		return stepWait
	}
	q.heard = true
	in, err := a2s.ParseInfo(b)
	if err != nil {
		return q.fail(err)
	}
	q.res.Info, q.res.Ping = in, rtt
	return q.advance()
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

func (q *a2sQuery) expire(err error) step {
	if err == nil {
		err = a2s.ErrTimeout
	}
	if !q.heard {
		// Nothing ever came back: the server is down or filtered, so the
		// other sections would only time out too.
		for s := q.sec; s < secDone; s++ {
			if q.want[s] {
				q.setErr(s, err)
			}
		}
		q.sec = secDone
		return stepDone
	}
	return q.fail(err)
}

func (q *a2sQuery) status() Status {
	var ok, timeouts, failures int
	for s, errp := range [secDone]error{q.res.InfoErr, q.res.PlayersErr, q.res.RulesErr} {
		switch {
		case !q.want[s]:
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

func (q *a2sQuery) fill(r *Result) { r.A2S = q.res }
