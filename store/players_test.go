package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestPlayers(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engine) {
		ctx := context.Background()
		clock := newClock(min_(60))
		st := e.open(t, WithClock(clock.now))
		syncNames(t, st, "a", "b", "hidden")
		// Alice: 10 min on a, then 20 min on b and still on; Bob 5 min on
		// a; alina on hidden only; 100%_x on a.
		must(t, st.Write(ctx, []Sample{
			changes(withPlayers("a", min_(0), "Alice:1", "Bob:1", "100%_x:0"), "+Alice", "+Bob", "+100%_x"),
			changes(withPlayers("hidden", min_(0), "alina:1", "Alice:1"), "+alina", "+Alice"),
		}))
		must(t, st.Write(ctx, []Sample{changes(withPlayers("a", min_(5), "Alice:2", "100%_x:0"), "-Bob")}))
		must(t, st.Write(ctx, []Sample{changes(withPlayers("a", min_(10), "100%_x:0"), "-Alice")}))
		must(t, st.Write(ctx, []Sample{changes(withPlayers("b", min_(40), "Alice:3"), "+Alice")}))

		found, err := st.SearchPlayers(ctx, "ALI", []string{"hidden"}, 10)
		must(t, err)
		if len(found) != 1 || found[0].Name != "Alice" || found[0].Sessions != 2 || found[0].Servers != 2 || !found[0].Online ||
			!found[0].FirstSeen.Equal(min_(0)) || !found[0].LastSeen.Equal(min_(60)) {
			t.Errorf("search ALI: %+v", found)
		}
		found, err = st.SearchPlayers(ctx, "ali", nil, 10)
		must(t, err)
		if len(found) != 2 || found[0].Name != "alina" && found[0].Name != "Alice" {
			t.Errorf("search ali with hidden: %+v", found)
		}
		// % and _ are text, not patterns.
		found, err = st.SearchPlayers(ctx, "%_", nil, 10)
		must(t, err)
		if len(found) != 1 || found[0].Name != "100%_x" {
			t.Errorf("search %%_: %+v", found)
		}
		// The exact name comes first.
		found, err = st.SearchPlayers(ctx, "bob", nil, 10)
		must(t, err)
		if len(found) != 1 || found[0].Name != "Bob" || found[0].Online {
			t.Errorf("search bob: %+v", found)
		}

		p, err := st.Player(ctx, "Alice", []string{"hidden"}, min_(30))
		must(t, err)
		if p.Sessions != 2 || p.Total != 30*time.Minute || p.Recent != 20*time.Minute || !p.Online || len(p.Servers) != 2 ||
			p.Servers[0].Server != "b" || p.Servers[0].Total != 20*time.Minute || p.Servers[1].Server != "a" || p.Servers[1].Total != 10*time.Minute ||
			!p.FirstSeen.Equal(min_(0)) || !p.LastSeen.Equal(min_(60)) {
			t.Errorf("player Alice: %+v", p)
		}
		if _, err := st.Player(ctx, "alina", []string{"hidden"}, min_(30)); !errors.Is(err, ErrUnknownPlayer) {
			t.Errorf("alina, hidden: %v", err)
		}

		regs, err := st.Regulars(ctx, "a", min_(0), min_(60), 10)
		must(t, err)
		if len(regs) != 3 || regs[0].Player != "100%_x" || regs[0].Time != 60*time.Minute || regs[1].Player != "Alice" ||
			regs[1].Time != 10*time.Minute || regs[2].Player != "Bob" || regs[2].Time != 5*time.Minute {
			t.Errorf("regulars of a: %+v", regs)
		}
		// Clipped to the period.
		regs, err = st.Regulars(ctx, "a", min_(8), min_(60), 1)
		must(t, err)
		if len(regs) != 1 || regs[0].Time != 52*time.Minute {
			t.Errorf("regulars of a since 8: %+v", regs)
		}

		n, err := st.ForgetPlayer(ctx, "Alice")
		must(t, err)
		if n != 3 {
			t.Errorf("forgot %d sessions, want 3", n)
		}
		if _, err := st.Player(ctx, "Alice", nil, min_(30)); !errors.Is(err, ErrUnknownPlayer) {
			t.Errorf("Alice after forget: %v", err)
		}
		if c := count(t, st, "SELECT count(*) FROM players WHERE name = ?", "Alice"); c != 0 {
			t.Errorf("Alice's name is still stored")
		}
		// The writer goes on: Alice's open session on b is gone, and a
		// later poll neither fails nor brings it back.
		must(t, st.Write(ctx, []Sample{withPlayers("b", min_(41), "Alice:4")}))
		must(t, st.Write(ctx, []Sample{changes(withPlayers("b", min_(42)), "-Alice")}))
		if c := count(t, st, "SELECT count(*) FROM sessions"); c != 3 {
			t.Errorf("%d sessions left, want 3 (Bob, 100%%_x, alina)", c)
		}
	})
}
