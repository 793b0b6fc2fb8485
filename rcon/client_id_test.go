package rcon

import (
	"math"
	"testing"
)

func TestIDSequence(t *testing.T) {
	t.Parallel()
	c, err := newClient("", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int32]bool{}
	check := func(id int32) {
		t.Helper()
		if id <= 0 || id == 42 || id&0xFFFFFF == 0 || seen[id] {
			t.Fatalf("bad or repeated id %d", id)
		}
		seen[id] = true
	}
	for range 100 {
		check(c.newID())
	}
	if seen[42] || !seen[41] || !seen[43] {
		t.Fatal("ids around 42 wrong")
	}
	if c.issued(1000) || !c.issued(100) {
		t.Fatal("issued wrong before the wrap")
	}
	c.ids.Store(1<<24 - 2)
	check(c.newID())
	if got := c.newID(); got != 1<<24+1 {
		t.Fatalf("id after 1<<24-1 = %d, want %d", got, 1<<24+1)
	}
	c.ids.Store(math.MaxInt32 - 1)
	if got := c.newID(); got != math.MaxInt32 {
		t.Fatalf("got %d", got)
	}
	if got := c.newID(); got != 1 || !c.issued(1<<30) {
		t.Fatalf("after wrap got %d, issued(1<<30) = %v", got, c.issued(1<<30))
	}
}
