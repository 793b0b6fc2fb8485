package store

import (
	"context"
	"slices"
	"testing"

	"github.com/gsq-project/gsq/store/storetest"
)

// TestResumeHandOver: two workers of a fleet write one PostgreSQL
// history, each with its own writer. The server passes from a to b: b,
// which loaded its state before a opened the session, carries it on
// after Resume (the player's leave ends a's session, once), and a, which
// takes the server back, sees it ended.
func TestResumeHandOver(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := storetest.Postgres(t)
	open := func() *db {
		st, err := Open(ctx, dsn)
		must(t, err)
		t.Cleanup(func() { st.Close() })
		return st.(*db)
	}
	a, b := open(), open()
	servers := []Server{{Name: "s1", Target: "127.0.0.1:27015", Protocol: "a2s"}}
	must(t, a.SyncServers(ctx, servers))
	must(t, b.SyncServers(ctx, servers)) // b's writer loads now: no session yet

	must(t, a.Write(ctx, []Sample{changes(withPlayers("s1", min_(1), "alice:3"), "+alice")}))
	// Hand-over: b reads what a wrote.
	present, err := b.Resume(ctx, []string{"s1", "unknown"})
	must(t, err)
	if p := present["s1"]; !slices.Equal(p.Players, []string{"alice"}) || !p.Listed.Equal(min_(1)) {
		t.Fatalf("Resume = %+v, want alice listed at minute 1", present)
	}
	if _, ok := present["unknown"]; ok {
		t.Errorf("Resume gave a presence to a server the store does not know")
	}
	must(t, b.Write(ctx, []Sample{changes(withPlayers("s1", min_(2)), "-alice")}))
	list, err := b.Sessions(ctx, SessionQuery{Server: "s1", From: t0, To: min_(10)})
	must(t, err)
	if got, want := sessionsText(list), "alice 1-2 3"; got != want {
		t.Errorf("sessions after the hand-over:\n%s\nwant\n%s", got, want)
	}
	// Back to a: nothing open, and its next join is a session of its own.
	present, err = a.Resume(ctx, []string{"s1"})
	must(t, err)
	if len(present) != 0 {
		t.Errorf("a's Resume after b ended the session = %+v, want none open", present)
	}
	must(t, a.Write(ctx, []Sample{changes(withPlayers("s1", min_(3), "alice:5"), "+alice")}))
	list, err = a.Sessions(ctx, SessionQuery{Server: "s1", From: t0, To: min_(10)})
	must(t, err)
	if got, want := sessionsText(list), "alice 1-2 3\nalice 3-- 5"; got != want {
		t.Errorf("sessions after the hand-back:\n%s\nwant\n%s", got, want)
	}
}
