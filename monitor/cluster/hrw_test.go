package cluster

import (
	"fmt"
	"testing"
)

func members(n int, prefix string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return out
}

// TestAssignBalance: every shard has exactly one owner, and N workers
// each own about Shards/N shards (within 25%: 1,024 shards over at most
// 8 workers is at least 128 per worker, whose binomial spread is about
// ±10 shards).
func TestAssignBalance(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5, 8} {
		ms := members(n, "eu-worker-")
		a := Assign(ms)
		total := 0
		for _, m := range ms {
			got := len(a[m])
			total += got
			want := Shards / n
			if got < want*3/4 || got > want*5/4 {
				t.Errorf("%d workers: %s owns %d shards, want about %d", n, m, got, want)
			}
		}
		if total != Shards {
			t.Errorf("%d workers: %d shards owned, want %d", n, total, Shards)
		}
	}
}

// TestOwnerMinimalMovement: when a worker joins, only the shards it
// wins move, about Shards/(N+1), and they come from every other worker;
// when one leaves, only its shards move, spread over the others.
func TestOwnerMinimalMovement(t *testing.T) {
	ms := members(4, "w")
	joined := append(append([]string{}, ms...), "w-new")
	moved := 0
	from := map[string]int{}
	for s := range Shards {
		before, after := Owner(s, ms), Owner(s, joined)
		if before != after {
			moved++
			if after != "w-new" {
				t.Fatalf("shard %d moved from %s to %s, not to the new worker", s, before, after)
			}
			from[before]++
		}
	}
	if want := Shards / 5; moved < want*3/4 || moved > want*5/4 {
		t.Errorf("a fifth worker took %d shards, want about %d", moved, want)
	}
	for _, m := range ms {
		if from[m] == 0 {
			t.Errorf("the new worker took nothing from %s: %v", m, from)
		}
	}

	left := []string{"w0", "w1", "w3"}
	to := map[string]int{}
	for s := range Shards {
		before, after := Owner(s, ms), Owner(s, left)
		if before != "w2" && before != after {
			t.Fatalf("shard %d of %s moved to %s when w2 left", s, before, after)
		}
		if before == "w2" {
			to[after]++
		}
	}
	for _, m := range left {
		if to[m] == 0 {
			t.Errorf("w2's shards went to %v, none to %s", to, m)
		}
	}
}

// TestOwnerOrderFree: the owner does not depend on the order in which
// members are listed, and there is none without members.
func TestOwnerOrderFree(t *testing.T) {
	a := []string{"b", "a", "c"}
	b := []string{"c", "b", "a"}
	for s := range Shards {
		if Owner(s, a) != Owner(s, b) {
			t.Fatalf("shard %d: owner depends on the order", s)
		}
	}
	if o := Owner(0, nil); o != "" {
		t.Errorf("Owner with no members = %q", o)
	}
}

func TestShardOf(t *testing.T) {
	seen := map[int]bool{}
	for i := range 20000 {
		s := ShardOf(fmt.Sprintf("server-%d", i))
		if s < 0 || s >= Shards {
			t.Fatalf("ShardOf = %d", s)
		}
		seen[s] = true
	}
	if len(seen) != Shards {
		t.Errorf("20,000 servers fell in %d shards of %d", len(seen), Shards)
	}
}
