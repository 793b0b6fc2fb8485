package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// StoredWindow is a maintenance window set through the API, as the
// store keeps it: the API's JSON, which the store does not read.
type StoredWindow struct {
	ID      int64
	Spec    string
	Created time.Time
}

// maxWindowSpec bounds a stored window's JSON.
const maxWindowSpec = 64 << 10

func (s *db) AddWindow(ctx context.Context, spec string) (int64, error) {
	if err := s.check(); err != nil {
		return 0, err
	}
	if len(spec) > maxWindowSpec {
		return 0, &Error{Op: "add window", DB: s.name, Err: fmt.Errorf("a window of %d bytes; at most %d", len(spec), maxWindowSpec)}
	}
	var id int64
	err := s.locked(ctx, func() error {
		return s.wdb.QueryRowContext(ctx, s.q("INSERT INTO maintenance (spec, created_at) VALUES (?, ?) RETURNING id"),
			clean(spec, maxWindowSpec), s.opts.now().Unix()).Scan(&id)
	})
	return id, s.fail("add window", err)
}

func (s *db) Windows(ctx context.Context) ([]StoredWindow, error) {
	out := []StoredWindow{}
	err := s.read(ctx, "windows", func(tx *sql.Tx) error {
		return eachRow(ctx, tx, "SELECT id, spec, created_at FROM maintenance ORDER BY id", nil, func(r *sql.Rows) error {
			var w StoredWindow
			var at int64
			if err := r.Scan(&w.ID, &w.Spec, &at); err != nil {
				return err
			}
			w.Created = time.Unix(at, 0).UTC()
			out = append(out, w)
			return nil
		})
	})
	return out, err
}

func (s *db) DeleteWindow(ctx context.Context, id int64) (bool, error) {
	if err := s.check(); err != nil {
		return false, err
	}
	var n int64
	err := s.locked(ctx, func() error {
		res, err := s.wdb.ExecContext(ctx, s.q("DELETE FROM maintenance WHERE id = ?"), id)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n > 0, s.fail("delete window", err)
}
