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
	query := `SELECT x.t, sv.name, x.up, x.players, x.max_players, x.bots, m.value, v.value, x.ping
		FROM samples x JOIN servers sv ON sv.id = x.server
		LEFT JOIN strings m ON m.id = x.map LEFT JOIN strings v ON v.id = x.version` + where + " ORDER BY x.t, x.server"
	var fnErr error
	err = eachRow(ctx, s.rdb, s.q(query), args, func(r *sql.Rows) error {
		var smp Sample
		var t, up int64
		var players, maxPlayers, bots, ping sql.NullInt64
		var mapText, version sql.NullString
		if err := r.Scan(&t, &smp.Server, &up, &players, &maxPlayers, &bots, &mapText, &version, &ping); err != nil {
			return err
		}
		smp.Time = time.Unix(t, 0).UTC()
		smp.Up = up == 1
		smp.Players, smp.MaxPlayers, smp.Bots = orMinus(players), orMinus(maxPlayers), orMinus(bots)
		smp.Map, smp.Version = mapText.String, version.String
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
	if err := s.check(); err != nil {
		return err
	}
	if level <= LevelRaw || level > LevelDay {
		return &Error{Op: "export", DB: s.name, Err: fmt.Errorf("%v is not a rollup level", level)}
	}
	where, args, err := s.spanWhere(ctx, span, "x.")
	if err != nil {
		return s.fail("export", err)
	}
	query := `SELECT sv.name, x.t, x.polls, x.down, x.nocount, x.min_players, x.max_players, x.sum_players, x.capacity
		FROM ` + tables[level] + ` x JOIN servers sv ON sv.id = x.server` + where + " ORDER BY x.server, x.t"
	var fnErr error
	err = eachRow(ctx, s.rdb, s.q(query), args, func(r *sql.Rows) error {
		var name string
		var t int64
		var a agg
		var sum sql.NullInt64
		if err := r.Scan(&name, &t, &a.polls, &a.down, &a.nocount, &a.min, &a.max, &sum, &a.capacity); err != nil {
			return err
		}
		a.sum = sum.Int64
		fnErr = fn(name, a.point(time.Unix(t, 0).UTC()))
		return fnErr
	})
	if fnErr != nil {
		return fnErr
	}
	return s.fail("export", err)
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
// server then time. A number the server did not report is an empty CSV
// cell or a missing JSON field. In CSV, a text that a spreadsheet would
// take for a formula (it begins with = + - @, a tab or a carriage
// return) is written after a single quote, as OWASP advises: map names
// come from the servers.
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
			err = write([]string{"time", "server", "up", "players", "max_players", "bots", "map", "version", "ping_ms"}, nil)
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

// cell keeps a spreadsheet from running a text as a formula.
func cell(s string) string {
	if s != "" {
		switch s[0] {
		case '=', '+', '-', '@', '\t', '\r':
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
		num(smp.Players), num(smp.MaxPlayers), num(smp.Bots), cell(smp.Map), cell(smp.Version), ping}
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
}

func sampleObject(smp Sample) sampleJSON {
	opt := func(n int) *int {
		if n < 0 {
			return nil
		}
		return &n
	}
	o := sampleJSON{Time: smp.Time, Server: smp.Server, Up: smp.Up, Players: opt(smp.Players),
		MaxPlayers: opt(smp.MaxPlayers), Bots: opt(smp.Bots), Map: smp.Map, Version: smp.Version}
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
