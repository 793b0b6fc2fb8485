package monitor

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/gsq-project/gsq/internal/ratelog"
	"github.com/gsq-project/gsq/store"
)

// journal writes the Alerter's state to a store.AlertJournal: the rules'
// state of each server whose state changed, and each alert before it is
// sent (the outbox); and takes alerts out once delivered or given up
// on. One goroutine writes, a transaction at a time, everything that
// came since the last: Handle never waits for the database, and an
// alert reaches its queue only once it is written, with the state that
// raised it, so that a restart neither sends it twice nor forgets it.
type journal struct {
	st  store.AlertJournal
	log *ratelog.Limiter

	mu     sync.Mutex
	states map[string][]byte // changed since the last write; nil deletes
	adds   []pending
	done   []int64
	saved  map[string]string // the state last handed over, by server
	busy   bool              // a write is under way
	idle   *sync.Cond        // signalled when a write ends

	// The goroutine starts with the first thing to write, so that an
	// Alerter that never sees an event holds none.
	once     sync.Once
	wake     chan struct{}
	quit     chan struct{}
	finished chan struct{}
}

// pending is an alert for a webhook, admitted by its queue, on its way
// through the journal.
type pending struct {
	q       *queue
	webhook string
	alert   *Alert
}

// journalTimeout bounds one write.
const journalTimeout = 30 * time.Second

func newJournal(st store.AlertJournal, log *ratelog.Limiter) *journal {
	j := &journal{st: st, log: log, states: map[string][]byte{}, saved: map[string]string{},
		wake: make(chan struct{}, 1), quit: make(chan struct{}), finished: make(chan struct{})}
	j.idle = sync.NewCond(&j.mu)
	return j
}

func (j *journal) signal() {
	j.once.Do(func() { go j.run() })
	select {
	case j.wake <- struct{}{}:
	default:
	}
}

// record notes a server's state after an event (nil: unknown server)
// and the alerts it raised.
func (j *journal) record(server string, state []byte, pend []pending) {
	j.mu.Lock()
	changed := state != nil && j.saved[server] != string(state)
	if changed {
		j.saved[server] = string(state)
		j.states[server] = state
	}
	j.adds = append(j.adds, pend...)
	j.mu.Unlock()
	if changed || len(pend) > 0 {
		j.signal()
	}
}

// forget deletes a server's state.
func (j *journal) forget(server string) {
	j.mu.Lock()
	delete(j.saved, server)
	j.states[server] = nil
	j.mu.Unlock()
	j.signal()
}

// finish takes alerts out of the outbox.
func (j *journal) finish(ids []int64) {
	if len(ids) == 0 {
		return
	}
	j.mu.Lock()
	j.done = append(j.done, ids...)
	j.mu.Unlock()
	j.signal()
}

func (j *journal) run() {
	defer close(j.finished)
	for {
		select {
		case <-j.wake:
			j.write()
		case <-j.quit:
			j.write()
			return
		}
	}
}

// write writes what came since the last write, then queues its alerts.
func (j *journal) write() {
	j.mu.Lock()
	states, adds, done := j.states, j.adds, j.done
	j.states, j.adds, j.done = map[string][]byte{}, nil, nil
	j.busy = true
	j.mu.Unlock()
	defer func() {
		j.mu.Lock()
		j.busy = false
		j.idle.Broadcast()
		j.mu.Unlock()
	}()
	rows := make([]store.OutboxAlert, len(adds))
	now := time.Now()
	for i, p := range adds {
		b, err := json.Marshal(p.alert)
		if err != nil { // an Alert always encodes; a row must still be written
			b = []byte("{}")
		}
		rows[i] = store.OutboxAlert{Webhook: p.webhook, Time: p.alert.Time, Alert: b}
	}
	ctx, cancel := context.WithTimeout(context.Background(), journalTimeout)
	ids, err := j.st.SaveAlerts(ctx, states, rows, done)
	cancel()
	if err != nil {
		// Better sent without a record than not sent: a restart may
		// repeat these alerts, or lose them if they do not go now.
		j.log.Printf("journal", "monitor: alerts: writing to the store failed (%v); %d alerts go without a record, and a restart may repeat or forget them", err, len(adds))
		ids = make([]int64, len(adds))
	}
	byQueue := map[*queue][]item{}
	var order []*queue
	for i, p := range adds {
		if byQueue[p.q] == nil {
			order = append(order, p.q)
		}
		byQueue[p.q] = append(byQueue[p.q], item{alert: p.alert, id: ids[i], at: now})
	}
	for _, q := range order {
		q.push(byQueue[q], len(byQueue[q]))
	}
}

// drain waits until what was recorded so far is written and queued.
func (j *journal) drain() {
	j.mu.Lock()
	for j.busy || len(j.adds) > 0 || len(j.states) > 0 {
		j.mu.Unlock()
		j.signal()
		j.mu.Lock()
		if j.busy || len(j.adds) > 0 || len(j.states) > 0 {
			j.idle.Wait()
		}
	}
	j.mu.Unlock()
}

// stop writes what is left and stops the journal's goroutine.
func (j *journal) stop() {
	j.once.Do(func() { close(j.finished) }) // never started: nothing to write
	close(j.quit)
	<-j.finished
}
