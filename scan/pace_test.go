package scan

import (
	"strings"
	"testing"
	"time"
)

// pacedLog records the order in which the pacer serves its waiters.
type pacedLog struct {
	name string
	log  *[]string
}

func (p *pacedLog) paced(time.Time) { *p.log = append(*p.log, p.name) }

func TestPacerServesLiveFirst(t *testing.T) {
	t.Parallel()
	p := newPacer(1_000_000, 100)
	now := time.Now()
	p.mu.Lock()
	p.tat = now.Add(time.Hour) // no token until the test says so
	p.mu.Unlock()
	if p.take(now, prioLive) {
		t.Fatal("a token taken from an empty bucket")
	}
	var log []string
	waiters := map[string]*waiter{}
	queue := func(name string, prio int8) {
		w := waiters[name]
		if w == nil {
			w = &waiter{prio: -1, owner: &pacedLog{name, &log}}
			waiters[name] = w
		}
		p.wait(w, prio)
	}
	queue("new1", prioNew)
	queue("silent1", prioSilent)
	queue("new2", prioNew)
	queue("live1", prioLive)
	queue("silent2", prioSilent)
	queue("silent3", prioSilent)
	queue("silent3", prioLive) // it has answered since: it moves up
	queue("new1", prioSilent)  // never down
	queue("gone", prioLive)
	p.remove(waiters["gone"])

	p.mu.Lock()
	p.tat = time.Time{} // tokens for everyone
	p.mu.Unlock()
	if p.take(now, prioNew) {
		t.Error("a new request took a token while others of its priority waited")
	}
	p.serve()
	if got := strings.Join(log, " "); got != "live1 silent3 new1 new2 silent1 silent2" {
		t.Errorf("served %s", got)
	}
	if !p.take(time.Now(), prioSilent) {
		t.Error("no token once nobody waits")
	}
}
