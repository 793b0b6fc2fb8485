package cli

import (
	"context"
	"net/netip"
	"slices"
	"sync"

	"github.com/gsq-project/gsq/protocol"
	"github.com/gsq-project/gsq/scan"
)

// maxFallbackHeld bounds the servers a --game scan holds back to ask with
// the game's next protocol; past it, a server that did not answer the
// first is written as it is.
const maxFallbackHeld = 50_000

// gameFallback runs the rest of a --game scan whose game has several
// protocols (Onset: A2S, then OGP): a server that did not answer one is
// held back, and once the list is done, asked with the next, until one
// answers or none is left; its outcome is then written, with the protocol
// that answered (or the last one asked).
type gameFallback struct {
	gc      *gameChoice
	queries map[*protocol.Protocol]protocol.Query
	write   func(*scan.Outcome)

	mu   sync.Mutex
	step int // the attempt being asked: 0 for the list's pass
	held []*scan.Outcome
}

// emit takes an outcome of the pass being run.
func (fb *gameFallback) emit(oc *scan.Outcome) {
	if oc.Status == scan.StatusTimedOut || oc.Status == scan.StatusUnreachable {
		fb.mu.Lock()
		if len(fb.held) < maxFallbackHeld && fb.next(oc.Target) != nil {
			fb.held = append(fb.held, oc)
			fb.mu.Unlock()
			return
		}
		fb.mu.Unlock()
	}
	fb.write(oc)
}

// next is the attempt after fb.step for target t; nil when there is none.
func (fb *gameFallback) next(t scan.Target) *gameAttempt {
	_, attempts, err := fb.gc.attempts(t.Input)
	if err != nil || fb.step+1 >= len(attempts) {
		return nil
	}
	return &attempts[fb.step+1]
}

// rest asks the servers held back with the next protocols, pass after
// pass, and adds their counts to sum.
func (fb *gameFallback) rest(ctx context.Context, s *scan.Scanner, sum scan.Summary) scan.Summary {
	for len(fb.held) > 0 && ctx.Err() == nil {
		held := fb.held
		fb.held = nil
		var targets []scan.Target
		for _, oc := range held {
			a := fb.next(oc.Target)
			t := oc.Target
			t.Port, t.Query = a.port, fb.queries[a.proto]
			if t.Addr.IsValid() {
				t.Addr = netip.AddrPortFrom(t.Addr.Addr(), a.port)
			}
			targets = append(targets, t)
		}
		fb.step++
		more, _ := s.Run(ctx, slices.Values(targets), fb.emit)
		sum.Sent += more.Sent
		sum.Resent += more.Resent
		sum.Elapsed += more.Elapsed
	}
	for _, oc := range fb.held { // interrupted
		fb.write(oc)
	}
	return sum
}
