package store

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// migrationIndex is where a migration whose work is a run is in the
// list: the schema version before it.
func migrationIndex(t *testing.T, m migration) int {
	t.Helper()
	i := slices.IndexFunc(migrations, func(x migration) bool {
		return x.run != nil && reflect.ValueOf(x.run).Pointer() == reflect.ValueOf(m.run).Pointer()
	})
	if i < 0 {
		t.Fatal("the migration is not in the list")
	}
	return i
}

// TestSessionIndexMigration: a database of the version before answers
// the sessions, regulars, player and search queries the same through
// the migration, from the new indexes of the sessions.
func TestSessionIndexMigration(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engine) {
		ctx := context.Background()
		v := migrationIndex(t, sessionIndexMigration)
		st := e.open(t, withMigrations(migrations[:v]))
		syncNames(t, st, "a", "b")
		a, b := newHonest("a", 1), newHonest("b", 2)
		pollEvery10s(t, st, 40*time.Minute, a.poll, b.poll)
		end := t0.Add(40 * time.Minute)
		player := a.lists[len(a.lists)-1][0]

		answers := func(st *db) []string {
			var out []string
			add := func(what string, v any, err error) {
				must(t, err)
				out = append(out, fmt.Sprintf("%s: %v", what, v))
			}
			for _, q := range []SessionQuery{
				{To: end, Limit: 1 << 20},
				{To: end, Limit: 50},
				{From: t0.Add(25 * time.Minute), To: t0.Add(26 * time.Minute), Limit: 30},
				{Server: "a", To: end, Limit: 1 << 20},
				{Server: "b", From: t0.Add(5 * time.Minute), To: t0.Add(15 * time.Minute), Limit: 40},
				{Player: player, To: end},
			} {
				list, err := st.Sessions(ctx, q)
				add(fmt.Sprintf("sessions %+v", q), sessionsText(list), err)
			}
			regulars, err := st.Regulars(ctx, "a", t0.Add(10*time.Minute), end, 20)
			add("regulars", regulars, err)
			p, err := st.Player(ctx, player, nil, t0.Add(30*time.Minute))
			add("player", p, err)
			found, err := st.SearchPlayers(ctx, "regular-1", nil, 10)
			add("search", found, err)
			return out
		}
		// Close writes the open sessions' scores: compare what a store
		// of either version reads of the same rows.
		// One clock for both: an open session's "last seen" is now.
		now := time.Now()
		clock := WithClock(func() time.Time { return now })
		must(t, st.Close())
		st = e.open(t, withMigrations(migrations[:v]), clock)
		before := answers(st)
		if !strings.Contains(before[0], player) || len(before[0]) < 10_000 {
			t.Fatalf("the polls made too few sessions to compare: %.200s", before[0])
		}
		must(t, st.Close())

		st = e.open(t, clock)
		if after := answers(st); !slices.Equal(after, before) {
			for i := range after {
				if after[i] != before[i] {
					t.Errorf("after migrating:\n%.2000s\nbefore:\n%.2000s", after[i], before[i])
				}
			}
		}
		must(t, st.Check(ctx))

		query := "SELECT sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'sessions' AND sql IS NOT NULL ORDER BY name"
		want := []string{
			"CREATE INDEX sessions_joined ON sessions (joined_at, id, left_at)",
			"CREATE INDEX sessions_player ON sessions (player)",
			"CREATE INDEX sessions_server ON sessions (server, left_at)",
			"CREATE INDEX sessions_server_joined ON sessions (server, joined_at, id, player, left_at)",
		}
		if e.name == "postgres" {
			query = "SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'sessions' ORDER BY indexname"
			want = []string{
				"CREATE INDEX sessions_joined ON %s.sessions USING btree (joined_at, id, left_at)",
				"CREATE UNIQUE INDEX sessions_pkey ON %s.sessions USING btree (id)",
				"CREATE INDEX sessions_player ON %s.sessions USING btree (player)",
				"CREATE INDEX sessions_server ON %s.sessions USING btree (server, left_at)",
				"CREATE INDEX sessions_server_joined ON %s.sessions USING btree (server, joined_at, id) INCLUDE (player, left_at)",
			}
			var schema string
			must(t, st.rdb.QueryRowContext(ctx, "SELECT current_schema()").Scan(&schema))
			for i := range want {
				want[i] = fmt.Sprintf(want[i], schema)
			}
		}
		got, err := column[string](ctx, st.rdb, query)
		must(t, err)
		if !slices.Equal(got, want) {
			t.Errorf("the sessions' indexes:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}
