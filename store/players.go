package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"time"
)

// ErrUnknownPlayer is a player name the store has no session of.
var ErrUnknownPlayer = errors.New("unknown player")

// PlayerMatch is a player a search found: a name the sessions know, on
// the servers the search did not leave out.
type PlayerMatch struct {
	Name      string
	Sessions  int
	Servers   int
	FirstSeen time.Time
	LastSeen  time.Time // now while online
	Online    bool
}

// PlayerServer is what a player did on one server.
type PlayerServer struct {
	Server    string
	Sessions  int
	Total     time.Duration
	Recent    time.Duration // since PlayerQuery.Recent
	FirstSeen time.Time
	LastSeen  time.Time
	Online    bool
}

// Player is a player's history across servers: every server they were
// seen on (most played first), their time in total and since a recent
// time, and when they were first and last seen.
type Player struct {
	Name      string
	Sessions  int
	Total     time.Duration
	Recent    time.Duration
	FirstSeen time.Time
	LastSeen  time.Time
	Online    bool
	Servers   []PlayerServer
}

// Regular is a player with much time on a server over a period.
type Regular struct {
	Player   string
	Time     time.Duration // clipped to the period
	Sessions int
	LastSeen time.Time
	Online   bool
}

// maxPlayerSessions bounds the sessions of one player a Player call
// adds up: a player seen for a year at every map change of a busy
// server has some thousands.
const maxPlayerSessions = 200_000

// maxSearchScan bounds the names a search ranks.
const maxSearchScan = 5000

// likeEscape escapes s for a LIKE pattern with ESCAPE '\'.
func likeEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(s)
}

// SearchPlayers returns up to limit players whose name contains q,
// ignoring case (ASCII case in SQLite, Unicode case in PostgreSQL): the
// exact name first, then names that begin with q, then the others, each
// by last seen. Sessions on the servers named in exclude are left out,
// and a player seen only there is not found.
func (s *db) SearchPlayers(ctx context.Context, q string, exclude []string, limit int) ([]PlayerMatch, error) {
	q0 := clean(q, maxText)
	q = strings.ToLower(q0)
	if limit <= 0 {
		limit = 50
	}
	out := []PlayerMatch{}
	if q == "" {
		return out, nil
	}
	now := s.opts.now().Unix()
	err := s.read(ctx, "search players", func(tx *sql.Tx) error {
		skip, err := s.serverIDs(ctx, tx, exclude)
		if err != nil {
			return err
		}
		// The names first: a scan of the players table, bounded by the
		// limit (with room for players seen only on excluded servers).
		type cand struct {
			id   int64
			name string
			rank int
		}
		// One pass of one folded LIKE over the names (the cost of a
		// search); the names are ranked here, from the first
		// maxSearchScan matches.
		var cands []cand
		seen := make(map[int64]bool)
		query := "SELECT id, name FROM players WHERE " + s.d.likeFold("name") + ` ? ESCAPE '\' LIMIT ?`
		err = eachRow(ctx, tx, s.q(query), []any{"%" + likeEscape(q) + "%", maxSearchScan}, func(r *sql.Rows) error {
			var c cand
			if err := r.Scan(&c.id, &c.name); err != nil {
				return err
			}
			switch low := strings.ToLower(c.name); {
			case low == q:
				c.rank = 0
			case strings.HasPrefix(low, q):
				c.rank = 1
			default:
				c.rank = 2
			}
			seen[c.id] = true
			cands = append(cands, c)
			return nil
		})
		if err != nil {
			return err
		}
		// The name as typed, through the index, in case the scan's
		// limit cut it off.
		var exact cand
		err = tx.QueryRowContext(ctx, s.q("SELECT id, name FROM players WHERE name = ?"), q0).Scan(&exact.id, &exact.name)
		if err == nil && !seen[exact.id] {
			cands = append(cands, exact)
		} else if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		slices.SortFunc(cands, func(a, b cand) int { return cmp.Or(cmp.Compare(a.rank, b.rank), strings.Compare(a.name, b.name)) })
		cands = cands[:min(len(cands), limit+len(skip)*limit)]
		if len(cands) == 0 {
			return nil
		}
		byID := make(map[int64]*PlayerMatch, len(cands))
		args := make([]any, 0, len(cands)+1)
		args = append(args, now)
		for _, c := range cands {
			args = append(args, c.id)
		}
		servers := make(map[int64]map[int64]bool)
		query = "SELECT player, server, count(*), min(joined_at), max(coalesce(left_at, ?)), sum(CASE WHEN left_at IS NULL THEN 1 ELSE 0 END)" +
			" FROM sessions WHERE player IN " + inList(len(cands)) + " GROUP BY player, server"
		err = eachRow(ctx, tx, s.q(query), args, func(r *sql.Rows) error {
			var pid, sid, first, last int64
			var n, online int
			if err := r.Scan(&pid, &sid, &n, &first, &last, &online); err != nil {
				return err
			}
			if skip[sid] {
				return nil
			}
			m := byID[pid]
			if m == nil {
				m = &PlayerMatch{FirstSeen: time.Unix(first, 0).UTC(), LastSeen: time.Unix(last, 0).UTC()}
				byID[pid] = m
				servers[pid] = map[int64]bool{}
			}
			m.Sessions += n
			m.Online = m.Online || online > 0
			servers[pid][sid] = true
			if t := time.Unix(first, 0).UTC(); t.Before(m.FirstSeen) {
				m.FirstSeen = t
			}
			if t := time.Unix(last, 0).UTC(); t.After(m.LastSeen) {
				m.LastSeen = t
			}
			return nil
		})
		if err != nil {
			return err
		}
		slices.SortStableFunc(cands, func(a, b cand) int {
			if c := cmp.Compare(a.rank, b.rank); c != 0 {
				return c
			}
			ma, mb := byID[a.id], byID[b.id]
			if ma == nil || mb == nil {
				return 0
			}
			return mb.LastSeen.Compare(ma.LastSeen)
		})
		for _, c := range cands {
			m := byID[c.id]
			if m == nil || len(out) == limit {
				continue
			}
			m.Name = c.name
			m.Servers = len(servers[c.id])
			out = append(out, *m)
		}
		return nil
	})
	return out, err
}

// serverIDs returns the ids of the named servers the store knows.
func (s *db) serverIDs(ctx context.Context, tx *sql.Tx, names []string) (map[int64]bool, error) {
	ids := make(map[int64]bool, len(names))
	for len(names) > 0 {
		n := min(len(names), 500)
		args := make([]any, n)
		for i, name := range names[:n] {
			args[i] = clean(name, maxNameText)
		}
		err := eachRow(ctx, tx, s.q("SELECT id FROM servers WHERE name IN "+inList(n)), args, func(r *sql.Rows) error {
			var id int64
			if err := r.Scan(&id); err != nil {
				return err
			}
			ids[id] = true
			return nil
		})
		if err != nil {
			return nil, err
		}
		names = names[n:]
	}
	return ids, nil
}

// Player returns a player's history: every session the store keeps,
// added up per server, leaving out the servers named in exclude. Recent
// is the start of the "recent" time. It fails with ErrUnknownPlayer
// when the player has no session left.
func (s *db) Player(ctx context.Context, name string, exclude []string, recent time.Time) (Player, error) {
	p := Player{Name: clean(name, maxText)}
	now := s.opts.now().Unix()
	from := recent.Unix()
	err := s.read(ctx, "player", func(tx *sql.Tx) error {
		skip, err := s.serverIDs(ctx, tx, exclude)
		if err != nil {
			return err
		}
		byServer := make(map[string]*PlayerServer)
		query := "SELECT x.server, sv.name, x.joined_at, x.left_at FROM sessions x JOIN servers sv ON sv.id = x.server" +
			" WHERE x.player = (SELECT id FROM players WHERE name = ?) LIMIT ?"
		err = eachRow(ctx, tx, s.q(query), []any{p.Name, maxPlayerSessions}, func(r *sql.Rows) error {
			var sid, joined int64
			var server string
			var left sql.NullInt64
			if err := r.Scan(&sid, &server, &joined, &left); err != nil {
				return err
			}
			if skip[sid] {
				return nil
			}
			end := now
			if left.Valid {
				end = left.Int64
			}
			ps := byServer[server]
			if ps == nil {
				ps = &PlayerServer{Server: server, FirstSeen: time.Unix(joined, 0).UTC(), LastSeen: time.Unix(end, 0).UTC()}
				byServer[server] = ps
			}
			ps.Sessions++
			ps.Total += time.Duration(max(0, end-joined)) * time.Second
			ps.Recent += time.Duration(max(0, end-max(joined, from))) * time.Second
			ps.Online = ps.Online || !left.Valid
			ps.FirstSeen = minTime(ps.FirstSeen, time.Unix(joined, 0).UTC())
			if t := time.Unix(end, 0).UTC(); t.After(ps.LastSeen) {
				ps.LastSeen = t
			}
			return nil
		})
		if err != nil {
			return err
		}
		if len(byServer) == 0 {
			return ErrUnknownPlayer
		}
		for _, ps := range byServer {
			if p.Servers == nil || ps.FirstSeen.Before(p.FirstSeen) {
				p.FirstSeen = ps.FirstSeen
			}
			if ps.LastSeen.After(p.LastSeen) {
				p.LastSeen = ps.LastSeen
			}
			p.Sessions += ps.Sessions
			p.Total += ps.Total
			p.Recent += ps.Recent
			p.Online = p.Online || ps.Online
			p.Servers = append(p.Servers, *ps)
		}
		slices.SortFunc(p.Servers, func(a, b PlayerServer) int {
			return cmp.Or(cmp.Compare(b.Total, a.Total), strings.Compare(a.Server, b.Server))
		})
		return nil
	})
	return p, err
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// Regulars returns up to limit players with the most time on a server
// over [from, to) (a zero to means now), each session clipped to it.
func (s *db) Regulars(ctx context.Context, server string, from, to time.Time, limit int) ([]Regular, error) {
	if limit <= 0 {
		limit = 10
	}
	now := s.opts.now().Unix()
	if to.IsZero() {
		to = s.opts.now()
	}
	lo, hi := from.Unix(), ceilUnix(to)
	out := []Regular{}
	err := s.read(ctx, "regulars", func(tx *sql.Tx) error {
		id, err := s.serverID(ctx, tx, server)
		if err != nil {
			return err
		}
		// Added up by the engine: each session clipped to [lo, hi), the
		// open ones up to now.
		end := "coalesce(x.left_at, ?)"
		query := "SELECT x.player, sum((CASE WHEN " + end + " < ? THEN " + end + " ELSE ? END) - (CASE WHEN x.joined_at > ? THEN x.joined_at ELSE ? END)) AS played," +
			" count(*), max(" + end + "), sum(CASE WHEN x.left_at IS NULL THEN 1 ELSE 0 END)" +
			" FROM sessions x" + s.d.indexedBy("sessions_server_joined") + " WHERE x.server = ? AND (x.left_at IS NULL OR x.left_at > ?) AND x.joined_at < ?" +
			" GROUP BY x.player ORDER BY played DESC, x.player LIMIT ?"
		type ranked struct {
			id int64
			r  *Regular
		}
		var all []ranked
		err = eachRow(ctx, tx, s.q(query), []any{now, hi, now, hi, lo, lo, now, id, lo, hi, limit}, func(r *sql.Rows) error {
			var g ranked
			g.r = &Regular{}
			var played, last, online int64
			if err := r.Scan(&g.id, &played, &g.r.Sessions, &last, &online); err != nil {
				return err
			}
			g.r.Time = time.Duration(max(0, played)) * time.Second
			g.r.LastSeen = time.Unix(last, 0).UTC()
			g.r.Online = online > 0
			all = append(all, g)
			return nil
		})
		if err != nil || len(all) == 0 {
			return err
		}
		args := make([]any, len(all))
		for i, a := range all {
			args[i] = a.id
		}
		names := make(map[int64]string, len(all))
		err = eachRow(ctx, tx, s.q("SELECT id, name FROM players WHERE id IN "+inList(len(args))), args, func(r *sql.Rows) error {
			var pid int64
			var name string
			if err := r.Scan(&pid, &name); err != nil {
				return err
			}
			names[pid] = name
			return nil
		})
		if err != nil {
			return err
		}
		for _, a := range all {
			a.r.Player = names[a.id]
			out = append(out, *a.r)
		}
		return nil
	})
	return out, err
}

// ForgetPlayer deletes every session of the named player, on every
// server, and the name itself; it returns how many sessions it deleted.
// A session open now ends with it: the player is not tracked on that
// server until they join again.
func (s *db) ForgetPlayer(ctx context.Context, name string) (int, error) {
	if err := s.check(); err != nil {
		return 0, err
	}
	name = clean(name, maxText)
	var n int64
	err := s.locked(ctx, func() error {
		tx, err := s.wdb.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		res, err := tx.ExecContext(ctx, s.q("DELETE FROM sessions WHERE player = (SELECT id FROM players WHERE name = ?)"), name)
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, s.q("DELETE FROM players WHERE name = ?"), name); err != nil {
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
		for _, st := range s.w.servers {
			st.open = slices.DeleteFunc(st.open, func(o *openSession) bool { return o.player == name })
		}
		return nil
	})
	return int(n), s.fail("forget player", err)
}
