package store

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// withMigrations opens a store with other schema versions than gsq's.
func withMigrations(list []migration) Option {
	return func(o *options) { o.migrations = list }
}

func TestMigrations(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engine) {
		ctx := context.Background()
		// v1 is this gsq's schema, v2 the next one.
		v1 := migrations
		st := e.open(t, withMigrations(v1))
		syncNames(t, st, "s")
		must(t, st.Write(ctx, []Sample{changes(withPlayers("s", t0, "alice:3"), "+alice")}))
		must(t, st.Close())

		// A version 2 this gsq does not have yet.
		v2 := append(v1[:len(v1):len(v1)], migration{stmts: []string{
			"ALTER TABLE servers ADD COLUMN note TEXT NOT NULL DEFAULT ''",
			"CREATE TABLE extra (id {id}, note TEXT NOT NULL)",
		}})
		broken := append(v1[:len(v1):len(v1)], migration{stmts: []string{
			"CREATE TABLE half (id {id})",
			"THIS IS NOT SQL",
		}})
		if _, err := Open(ctx, e.dsn, withMigrations(broken)); err == nil {
			t.Fatal("a failing migration opened the store")
		}
		st = e.open(t, withMigrations(v1))
		if n := count(t, st, "SELECT count(*) FROM samples"); n != 1 {
			t.Fatalf("after a failed migration: %d samples", n)
		}
		must(t, st.Check(ctx))
		must(t, st.Close())

		st = e.open(t, withMigrations(v2))
		if n := count(t, st, "SELECT count(*) FROM extra"); n != 0 {
			t.Errorf("extra has %d rows", n)
		}
		list, err := st.Sessions(ctx, SessionQuery{To: t0.Add(time.Hour)})
		must(t, err)
		if len(list) != 1 || list[0].Player != "alice" {
			t.Errorf("sessions after migrating: %+v", list)
		}
		must(t, st.Check(ctx))
		must(t, st.Close())

		_, err = Open(ctx, e.dsn, withMigrations(v1))
		if !errors.Is(err, ErrNewerSchema) {
			t.Errorf("opening version 2 with a gsq of version 1: %v, want ErrNewerSchema", err)
		}
	})
}

func TestOpenNewDatabaseConcurrently(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engine) {
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				st, err := Open(context.Background(), e.dsn)
				if err == nil {
					err = st.Close()
				}
				errs[i] = err
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Error(err)
			}
		}
	})
}

func TestCheckFindsBrokenRows(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engine) {
		ctx := context.Background()
		st := e.open(t)
		syncNames(t, st, "s")
		must(t, st.Write(ctx, []Sample{changes(withPlayers("s", t0, "alice:3"), "+alice")}))
		must(t, st.Check(ctx))
		if _, err := st.wdb.Exec("UPDATE sessions SET left_at = joined_at - 10"); err != nil {
			t.Fatal(err)
		}
		if err := st.Check(ctx); !errors.Is(err, ErrCorrupt) {
			t.Errorf("Check of a session that ends before it begins: %v", err)
		}
	})
}

// The fixture testdata/monitor-v1.db is a database written by the first
// version of the schema; every later gsq must open and migrate it.
// GSQ_WRITE_FIXTURE=1 writes it again (only ever for a new version's
// fixture: an old one must stay as it was released).
const fixtureV1 = "testdata/monitor-v1.db"

func TestFixtureV1(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	if os.Getenv("GSQ_WRITE_FIXTURE") == "1" {
		os.Remove(fixtureV1)
		st, err := Open(ctx, fixtureV1, withMigrations(migrations[:1]))
		must(t, err)
		syncNames(t, st, "fixture")
		for m := 0; m < 150; m++ {
			smp := withPlayers("fixture", min_(m), "alice:1", "bob:2")
			if m == 0 {
				smp = changes(smp, "+alice", "+bob")
			}
			must(t, st.Write(ctx, []Sample{smp}))
		}
		must(t, st.Maintain(ctx, min_(150)))
		must(t, st.Close())
		for _, suffix := range []string{"-wal", "-shm"} {
			os.Remove(fixtureV1 + suffix)
		}
	}
	path := filepath.Join(t.TempDir(), "old.db")
	copyFile(t, fixtureV1, path)
	st, err := Open(ctx, path)
	must(t, err)
	defer st.Close()
	must(t, st.Check(ctx))
	points, err := st.History(ctx, "fixture", t0, min_(150), time.Hour)
	must(t, err)
	if len(points) != 3 || points[0].Samples != 60 || points[1].Samples != 60 || points[2].Samples != 30 || points[0].MaxPlayers != 2 {
		t.Errorf("history of the fixture: %+v", points)
	}
	sessions, err := st.Sessions(ctx, SessionQuery{To: min_(150)})
	must(t, err)
	if len(sessions) != 2 {
		t.Errorf("sessions of the fixture: %+v", sessions)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	must(t, err)
	defer src.Close()
	dst, err := os.Create(to)
	must(t, err)
	_, err = io.Copy(dst, src)
	must(t, errors.Join(err, dst.Close()))
}
