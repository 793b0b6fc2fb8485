package monitor

import (
	"strconv"
	"time"
)

// Verdict is a down or up transition of a server that a fleet of
// monitors (package monitor/cluster) committed once, in PostgreSQL, when
// its vantage points agreed: one process of the fleet, the one that took
// its delivery job, alerts on it, and no other.
type Verdict struct {
	Server string
	Down   bool
	// Time is when the vantage points agreed; Since, for an up verdict,
	// is when the down verdict before it began.
	Time  time.Time
	Since time.Time
	// Seq numbers the server's transitions (the state row's counter):
	// with the server's name, the alert's idempotency key.
	Seq int64
	// State is the alerting process's last state of the server, for the
	// alert's details; nil when it has none.
	State *ServerState
}

// HandleVerdict raises the down or up alert of a committed verdict. In a
// fleet, an Alerter learns a server's status only from verdicts: the
// poller hides the status of each poll from it, because each process
// sees only its own vantage point and one process's view is no reason to
// page. The verdict says what was announced before it, whichever process
// announced it: an up verdict answers the down before it (and says how
// long it lasted) even when another process committed that down. The
// fleet commits each transition once, so the down rule's cooldown does
// not apply to verdicts. A JSON, Discord or Slack webhook gets the
// header X-Gsq-Delivery: SERVER:SEQ, the same on a resend.
func (a *Alerter) HandleVerdict(v Verdict) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return
	}
	sa := a.engine.servers[v.Server]
	if sa == nil {
		return
	}
	ev := Event{Kind: EventUp, Server: v.Server, Time: v.Time, State: v.State}
	if v.Down {
		ev.Kind = EventDown
		sa.status = statusTrack{announced: StatusUp}
	} else {
		sa.status = statusTrack{announced: StatusDown, downSince: v.Since}
	}
	alerts := a.engine.handle(ev)
	for _, al := range alerts {
		al.delivery = v.Server + ":" + strconv.FormatInt(v.Seq, 10)
	}
	a.raise(v.Server, alerts)
}
