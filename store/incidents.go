package store

import (
	"context"
	"database/sql"
	"time"
)

// incidentSchema is schema version 3: the incidents, the maintenance
// windows set through the API, and an index for the regulars.
var incidentSchema = []string{
	// incidents: one per down period of a server, from the first failed
	// poll of the run that took it down to the first poll that answered
	// again (NULL while it lasts). cause is the failed poll's error kind
	// ("timeout", "unreachable", "protocol", ...), detail its message;
	// maintenance is 1 when the server went down inside a maintenance
	// window.
	`CREATE TABLE incidents (
		id          {id},
		server      INTEGER NOT NULL,
		started_at  BIGINT NOT NULL,
		ended_at    BIGINT,
		cause       TEXT NOT NULL,
		detail      TEXT NOT NULL,
		maintenance SMALLINT NOT NULL
	)`,
	`CREATE INDEX incidents_server ON incidents (server, started_at)`,
	// A server's regulars are added up from this index alone: the
	// sessions of a time range with their player and end.
	`CREATE INDEX sessions_regulars ON sessions (server, joined_at, player, left_at)`,
	`CREATE INDEX incidents_started ON incidents (started_at)`,
	// maintenance: the windows set through the API, each as the API's
	// JSON (the monitor's package parses it); the config's windows are
	// not stored.
	`CREATE TABLE maintenance (
		id         {id},
		spec       TEXT NOT NULL,
		created_at BIGINT NOT NULL
	)`,
}

// Outage opens an incident: the server a sample is of went down.
type Outage struct {
	// Since is when the run of failed polls that took it down began.
	Since time.Time
	// Cause is the kind of error the polls failed with ("timeout",
	// "unreachable", "protocol", ...), Detail its message.
	Cause, Detail string
	// Maintenance is whether the server was in a maintenance window.
	Maintenance bool
}

// Incident is one down period of a server.
type Incident struct {
	ID     int64
	Server string
	Start  time.Time
	End    *time.Time // nil while it lasts
	Cause  string
	Detail string
	// Maintenance is whether it began inside a maintenance window: not
	// an outage.
	Maintenance bool
}

// IncidentQuery selects incidents: those of Server (every server when
// empty) that overlap [From, To) (a zero To means now). At most Limit
// are returned, newest first (0 means 1000).
type IncidentQuery struct {
	Server string
	From   time.Time
	To     time.Time
	Limit  int
}

// maxIncidentText bounds an incident's detail.
const maxIncidentText = 512

// incidentChange is an incident a round opens (open) or ends.
type incidentChange struct {
	server int64
	open   bool
	t      int64 // start or end
	cause  string
	detail string
	maint  bool
}

// incidents plans the incident a sample opens or ends, if any: a server
// has at most one open incident, so a second Outage while one is open
// (a monitor that restarted during an outage) changes nothing.
func (p *roundPlan) incidents(st *serverState, smp *Sample, t int64) {
	switch {
	case smp.Outage != nil && !st.down:
		since := smp.Outage.Since.Unix()
		if smp.Outage.Since.IsZero() || since > t {
			since = t
		}
		st.down = true
		p.incidentChanges = append(p.incidentChanges, incidentChange{server: st.id, open: true, t: since,
			cause: clean(smp.Outage.Cause, maxText), detail: clean(smp.Outage.Detail, maxIncidentText), maint: smp.Outage.Maintenance})
	case smp.Recovered && st.down:
		st.down = false
		p.incidentChanges = append(p.incidentChanges, incidentChange{server: st.id, t: t})
	}
}

// writeIncidents writes a round's incident changes, in order.
func (s *db) writeIncidents(ctx context.Context, tx *sql.Tx, changes []incidentChange) error {
	for _, c := range changes {
		var err error
		if c.open {
			m := 0
			if c.maint {
				m = 1
			}
			_, err = tx.ExecContext(ctx, s.q("INSERT INTO incidents (server, started_at, cause, detail, maintenance) VALUES (?, ?, ?, ?, ?)"),
				c.server, c.t, c.cause, c.detail, m)
		} else {
			_, err = tx.ExecContext(ctx, s.q("UPDATE incidents SET ended_at = ? WHERE server = ? AND ended_at IS NULL"),
				c.t, c.server)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Incidents returns incidents, newest first.
func (s *db) Incidents(ctx context.Context, q IncidentQuery) ([]Incident, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = 1000
	}
	to := q.To
	if to.IsZero() {
		to = s.opts.now()
	}
	list := []Incident{}
	err := s.read(ctx, "incidents", func(tx *sql.Tx) error {
		where := " WHERE i.started_at < ? AND (i.ended_at IS NULL OR i.ended_at > ?)"
		args := []any{ceilUnix(to), q.From.Unix()}
		if q.Server != "" {
			id, err := s.serverID(ctx, tx, q.Server)
			if err != nil {
				return err
			}
			where += " AND i.server = ?"
			args = append(args, id)
		}
		query := "SELECT i.id, sv.name, i.started_at, i.ended_at, i.cause, i.detail, i.maintenance FROM incidents i" +
			" JOIN servers sv ON sv.id = i.server" + where + " ORDER BY i.started_at DESC, i.id DESC LIMIT ?"
		return eachRow(ctx, tx, s.q(query), append(args, limit), func(r *sql.Rows) error {
			var in Incident
			var start int64
			var end sql.NullInt64
			var maint int
			if err := r.Scan(&in.ID, &in.Server, &start, &end, &in.Cause, &in.Detail, &maint); err != nil {
				return err
			}
			in.Start = time.Unix(start, 0).UTC()
			if end.Valid {
				e := time.Unix(end.Int64, 0).UTC()
				in.End = &e
			}
			in.Maintenance = maint != 0
			list = append(list, in)
			return nil
		})
	})
	return list, err
}

// maxMaintenanceIncidents bounds the maintenance incidents an uptime
// reads: a nightly window on each of many servers over a month.
const maxMaintenanceIncidents = 100_000

// maintenancePolls sums, by server, the polls of the maintenance
// incidents of a server (every server when id is 0) over [from, to):
// those from each incident's start to its end (to while it lasts), the
// down ones and any up one in between. Uptime leaves them out: a
// maintenance window is neither up nor down time.
func (s *db) maintenancePolls(ctx context.Context, tx *sql.Tx, m marks, id, from, to int64) (map[int64]agg, error) {
	type stretch struct{ server, a, b int64 }
	var list []stretch
	query := "SELECT server, started_at, ended_at FROM incidents WHERE maintenance = 1 AND started_at < ? AND (ended_at IS NULL OR ended_at > ?)"
	args := []any{to, from}
	if id != 0 {
		query += " AND server = ?"
		args = append(args, id)
	}
	err := eachRow(ctx, tx, s.q(query+" LIMIT ?"), append(args, maxMaintenanceIncidents), func(r *sql.Rows) error {
		var st stretch
		var end sql.NullInt64
		if err := r.Scan(&st.server, &st.a, &end); err != nil {
			return err
		}
		st.b = to
		if end.Valid {
			st.b = min(end.Int64, to)
		}
		st.a = max(st.a, from)
		list = append(list, st)
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make(map[int64]agg)
	for _, st := range list {
		a, err := s.aggregate(ctx, tx, m, st.server, st.a, st.b)
		if err != nil {
			return nil, err
		}
		t := out[st.server]
		t.add(a)
		out[st.server] = t
	}
	return out, nil
}
