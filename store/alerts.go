package store

import (
	"context"
	"database/sql"
	"maps"
	"slices"
	"time"
)

// AlertJournal keeps the monitor's alerts across restarts, so that a
// restart sends nothing that was already sent and loses nothing that was
// due: what each server's alert rules last announced (and when, for
// their cooldowns), as an opaque state per server name, and an outbox of
// the alerts raised and not yet delivered. The monitor writes an alert
// to the outbox, with the state that raised it, before it sends it, and
// takes it out once it is delivered or given up on. A crash between
// the two sends it again: at most once per crash.
type AlertJournal interface {
	// LoadAlerts returns the states and the outbox, oldest first.
	LoadAlerts(ctx context.Context) (AlertLog, error)
	// SaveAlerts, in one transaction, sets the states of servers (a nil
	// state deletes it), adds alerts to the outbox and returns their
	// ids, in order, and takes the alerts of the ids in done out of it.
	SaveAlerts(ctx context.Context, states map[string][]byte, add []OutboxAlert, done []int64) ([]int64, error)
}

// AlertLog is what an AlertJournal keeps.
type AlertLog struct {
	States map[string][]byte // by server name
	Outbox []OutboxAlert     // oldest first
}

// OutboxAlert is an alert raised and not yet delivered.
type OutboxAlert struct {
	ID      int64     // assigned by SaveAlerts
	Webhook string    // the webhook's name
	Time    time.Time // when it was raised; stored to the second
	Alert   []byte    // the alert, as the monitor encodes it
}

// maxOutboxLoad bounds the alerts LoadAlerts returns: the monitor keeps
// fewer in its queues than this.
const maxOutboxLoad = 1_000_000

func (s *db) LoadAlerts(ctx context.Context) (AlertLog, error) {
	log := AlertLog{States: map[string][]byte{}}
	if err := s.check(); err != nil {
		return log, err
	}
	err := eachRow(ctx, s.rdb, "SELECT server, state FROM alert_state", nil, func(r *sql.Rows) error {
		var name, state string
		if err := r.Scan(&name, &state); err != nil {
			return err
		}
		log.States[name] = []byte(state)
		return nil
	})
	if err != nil {
		return log, s.fail("load alerts", err)
	}
	err = eachRow(ctx, s.rdb, s.q("SELECT id, webhook, t, alert FROM alert_outbox ORDER BY id LIMIT ?"), []any{maxOutboxLoad}, func(r *sql.Rows) error {
		var o OutboxAlert
		var t int64
		var alert string
		if err := r.Scan(&o.ID, &o.Webhook, &t, &alert); err != nil {
			return err
		}
		o.Time, o.Alert = time.Unix(t, 0), []byte(alert)
		log.Outbox = append(log.Outbox, o)
		return nil
	})
	return log, s.fail("load alerts", err)
}

func (s *db) SaveAlerts(ctx context.Context, states map[string][]byte, add []OutboxAlert, done []int64) ([]int64, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if len(states) == 0 && len(add) == 0 && len(done) == 0 {
		return nil, nil
	}
	var ids []int64
	err := s.locked(ctx, func() error {
		return s.inTx(ctx, nil, func(tx *sql.Tx) error {
			names := slices.Sorted(maps.Keys(states))
			for _, name := range names {
				var err error
				if st := states[name]; st == nil {
					_, err = tx.ExecContext(ctx, s.q("DELETE FROM alert_state WHERE server = ?"), name)
				} else {
					_, err = tx.ExecContext(ctx, s.q("INSERT INTO alert_state (server, state) VALUES (?, ?) ON CONFLICT (server) DO UPDATE SET state = excluded.state"), name, string(st))
				}
				if err != nil {
					return err
				}
			}
			for _, id := range done {
				if _, err := tx.ExecContext(ctx, s.q("DELETE FROM alert_outbox WHERE id = ?"), id); err != nil {
					return err
				}
			}
			ids = make([]int64, len(add))
			for i, o := range add {
				if err := tx.QueryRowContext(ctx, s.q("INSERT INTO alert_outbox (webhook, t, alert) VALUES (?, ?, ?) RETURNING id"),
					o.Webhook, o.Time.Unix(), string(o.Alert)).Scan(&ids[i]); err != nil {
					return err
				}
			}
			return nil
		})
	})
	if err != nil {
		return nil, s.fail("save alerts", err)
	}
	return ids, nil
}
