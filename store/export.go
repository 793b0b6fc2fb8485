package store

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/gsq-project/gsq/internal/textenc"
)

// spanWhere is the condition that selects span's rows of a table, and
// its arguments.
func (s *db) spanWhere(ctx context.Context, span Span, alias string) (string, []any, error) {
	from, to := int64(math.MinInt64), int64(math.MaxInt64)
	if !span.From.IsZero() {
		from = span.From.Unix()
	}
	if !span.To.IsZero() {
		to = ceilUnix(span.To)
	}
	where := " WHERE " + alias + "t >= ? AND " + alias + "t < ?"
	args := []any{from, to}
	if span.Server != "" {
		var id int64
		err := s.rdb.QueryRowContext(ctx, s.q("SELECT id FROM servers WHERE name = ?"), clean(span.Server, maxNameText)).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return "", nil, serverError(span.Server)
		}
		if err != nil {
			return "", nil, err
		}
		where += " AND " + alias + "server = ?"
		args = append(args, id)
	}
	return where, args, nil
}

func (s *db) EachSample(ctx context.Context, span Span, fn func(Sample) error) error {
	if err := s.check(); err != nil {
		return err
	}
	where, args, err := s.spanWhere(ctx, span, "x.")
	if err != nil {
		return s.fail("export", err)
	}
	query := `SELECT x.t, sv.name, x.up, x.players, x.max_players, x.bots, m.value, v.value, x.ping, x.vantage
		FROM samples x JOIN servers sv ON sv.id = x.server
		LEFT JOIN strings m ON m.id = x.map LEFT JOIN strings v ON v.id = x.version` + where + " ORDER BY x.t, x.server, x.vantage"
	var fnErr error
	err = eachRow(ctx, s.rdb, s.q(query), args, func(r *sql.Rows) error {
		var smp Sample
		var t, up int64
		var players, maxPlayers, bots, ping sql.NullInt64
		var mapText, version, vantage sql.NullString
		if err := r.Scan(&t, &smp.Server, &up, &players, &maxPlayers, &bots, &mapText, &version, &ping, &vantage); err != nil {
			return err
		}
		smp.Time = time.Unix(t, 0).UTC()
		smp.Up = up == 1
		smp.Players, smp.MaxPlayers, smp.Bots = orMinus(players), orMinus(maxPlayers), orMinus(bots)
		smp.Map, smp.Version, smp.Vantage = mapText.String, version.String, vantage.String
		smp.Ping = -1
		if ping.Valid {
			smp.Ping = time.Duration(ping.Int64) * time.Microsecond
		}
		fnErr = fn(smp)
		return fnErr
	})
	if fnErr != nil {
		return fnErr
	}
	return s.fail("export", err)
}

// orMinus is n, or -1 for NULL (not reported).
func orMinus(n sql.NullInt64) int {
	if !n.Valid {
		return -1
	}
	return int(n.Int64)
}

func (s *db) EachPoint(ctx context.Context, level Level, span Span, fn func(server string, p Point) error) error {
	if level <= LevelRaw || level > LevelDay {
		return &Error{Op: "export", DB: s.name, Err: fmt.Errorf("%v is not a rollup level", level)}
	}
	size := level.seconds()
	var fnErr error
	err := s.read(ctx, "export", func(tx *sql.Tx) error {
		ids, names, err := s.spanServers(ctx, tx, span.Server)
		if err != nil {
			return err
		}
		m, err := s.readMarks(ctx, tx)
		if err != nil {
			return err
		}
		start, end, err := s.spanBuckets(ctx, tx, m, level, span)
		if err != nil {
			return err
		}
		return s.eachBucket(ctx, tx, m, ids, start, end, size, level, func(id int64, b bucket) error {
			fnErr = fn(names[id], b.a.point(time.Unix(start+b.i*size, 0).UTC()))
			return fnErr
		})
	})
	if fnErr != nil {
		return fnErr
	}
	return err
}

// spanServers returns the ids of the servers a span names (one, or
// all), sorted, and their names.
func (s *db) spanServers(ctx context.Context, tx *sql.Tx, server string) ([]int64, map[int64]string, error) {
	names := make(map[int64]string)
	if server != "" {
		id, err := s.serverID(ctx, tx, server)
		if err != nil {
			return nil, nil, err
		}
		names[id] = clean(server, maxNameText)
		return []int64{id}, names, nil
	}
	var ids []int64
	err := eachRow(ctx, tx, "SELECT id, name FROM servers ORDER BY id", nil, func(r *sql.Rows) error {
		var id int64
		var name string
		if err := r.Scan(&id, &name); err != nil {
			return err
		}
		ids = append(ids, id)
		names[id] = name
		return nil
	})
	return ids, names, err
}

// longAgo is where an open span begins, before anything a store keeps:
// 34,000 years before 1970.
const longAgo = -1 << 40

// spanBuckets returns the buckets of a level a span covers, as [start,
// end) in seconds: From rounded down to a bucket, To rounded up to the
// second (the last bucket then ends at To). An open end is where the
// history begins or ends: the first bucket the level keeps, and the last
// sample or rollup.
func (s *db) spanBuckets(ctx context.Context, tx *sql.Tx, m marks, level Level, span Span) (start, end int64, err error) {
	size := level.seconds()
	start = floorTo(max(longAgo, m.kept[level]), size)
	if !span.From.IsZero() {
		start = floorTo(span.From.Unix(), size)
	}
	if !span.To.IsZero() {
		return start, ceilUnix(span.To), nil
	}
	_, last, err := s.rawBounds(ctx, tx)
	if err != nil {
		return 0, 0, err
	}
	return start, max(start, m.rolled[LevelMinute], last+1), nil
}

// ExportOptions says what Export writes.
type ExportOptions struct {
	// Format is "csv" (with a header line) or "jsonl" (one JSON object a
	// line).
	Format string
	// Level is LevelRaw for the samples, or a rollup level for its
	// buckets.
	Level Level
	Span
}

// Export writes a store's history to w as CSV or JSON lines, streaming:
// the samples of a span oldest first, or a rollup level's buckets by
// server then time, the ones not rolled up yet included ([Store.EachPoint]:
// the figures History answers). A number the server did not report is an empty CSV
// cell or a missing JSON field. Map names and versions come from the
// game servers, so in CSV a text is made a safe cell ([cell]): every
// control character (C0, DEL and C1: escape sequences, line breaks,
// tabs) becomes U+FFFD, and a text that a spreadsheet would take for a
// formula (it begins with = + - or @) is written after a single quote,
// as OWASP advises. JSON lines keep every character, escaped as JSON
// escapes them.
func Export(ctx context.Context, st Store, w io.Writer, o ExportOptions) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	var write func(rec []string, obj any) error
	finish := bw.Flush
	switch o.Format {
	case "csv":
		cw := csv.NewWriter(bw)
		write = func(rec []string, _ any) error { return cw.Write(rec) }
		finish = func() error {
			cw.Flush()
			return errors.Join(cw.Error(), bw.Flush())
		}
	case "jsonl":
		enc := json.NewEncoder(bw)
		enc.SetEscapeHTML(false)
		write = func(_ []string, obj any) error { return enc.Encode(obj) }
	default:
		return fmt.Errorf("store: unknown export format %q (want csv or jsonl)", o.Format)
	}
	var err error
	if o.Level == LevelRaw {
		if o.Format == "csv" {
			err = write([]string{"time", "server", "up", "players", "max_players", "bots", "map", "version", "ping_ms", "vantage"}, nil)
		}
		if err == nil {
			err = st.EachSample(ctx, o.Span, func(smp Sample) error { return write(sampleRecord(smp), sampleObject(smp)) })
		}
	} else {
		if o.Format == "csv" {
			err = write([]string{"time", "server", "level", "samples", "uptime", "up", "min_players", "avg_players", "max_players", "capacity"}, nil)
		}
		if err == nil {
			level := o.Level.String()
			err = st.EachPoint(ctx, o.Level, o.Span, func(server string, p Point) error {
				return write(pointRecord(server, level, p), pointObject{server, level, p})
			})
		}
	}
	if err != nil {
		return err
	}
	if err := finish(); err != nil {
		return fmt.Errorf("store: export: %w", err)
	}
	return nil
}

// cell makes a text a CSV cell that carries no control character and
// that a spreadsheet does not run as a formula.
func cell(s string) string {
	s = textenc.ReplaceControls(s, utf8.RuneError)
	if s != "" {
		switch s[0] {
		case '=', '+', '-', '@':
			return "'" + s
		}
	}
	return s
}

func num(n int) string {
	if n < 0 {
		return ""
	}
	return strconv.Itoa(n)
}

func sampleRecord(smp Sample) []string {
	ping := ""
	if smp.Ping >= 0 && smp.Up {
		ping = strconv.FormatFloat(float64(smp.Ping)/float64(time.Millisecond), 'f', 3, 64)
	}
	return []string{smp.Time.Format(time.RFC3339), cell(smp.Server), strconv.FormatBool(smp.Up),
		num(smp.Players), num(smp.MaxPlayers), num(smp.Bots), cell(smp.Map), cell(smp.Version), ping, cell(smp.Vantage)}
}

type sampleJSON struct {
	Time       time.Time `json:"time"`
	Server     string    `json:"server"`
	Up         bool      `json:"up"`
	Players    *int      `json:"players,omitempty"`
	MaxPlayers *int      `json:"max_players,omitempty"`
	Bots       *int      `json:"bots,omitempty"`
	Map        string    `json:"map,omitempty"`
	Version    string    `json:"version,omitempty"`
	PingMS     *float64  `json:"ping_ms,omitempty"`
	Vantage    string    `json:"vantage,omitempty"` // a fleet worker's region
}

func sampleObject(smp Sample) sampleJSON {
	opt := func(n int) *int {
		if n < 0 {
			return nil
		}
		return &n
	}
	o := sampleJSON{Time: smp.Time, Server: smp.Server, Up: smp.Up, Players: opt(smp.Players),
		MaxPlayers: opt(smp.MaxPlayers), Bots: opt(smp.Bots), Map: smp.Map, Version: smp.Version, Vantage: smp.Vantage}
	if smp.Ping >= 0 && smp.Up {
		ms := float64(smp.Ping) / float64(time.Millisecond)
		o.PingMS = &ms
	}
	return o
}

func pointRecord(server, level string, p Point) []string {
	rec := []string{p.Time.Format(time.RFC3339), cell(server), level, strconv.Itoa(p.Samples),
		strconv.FormatFloat(p.Uptime, 'f', 4, 64), strconv.FormatBool(p.Up), "", "", "", ""}
	if p.Up {
		rec[6], rec[8], rec[9] = num(p.MinPlayers), num(p.MaxPlayers), num(p.Capacity)
		if p.AvgPlayers >= 0 {
			rec[7] = strconv.FormatFloat(p.AvgPlayers, 'f', 2, 64)
		}
	}
	return rec
}

type pointObject struct {
	Server string `json:"server"`
	Level  string `json:"level"`
	Point
}
