package fakeprofile

import (
	"slices"
	"testing"
)

func TestLookup(t *testing.T) {
	t.Parallel()
	type prof struct{ name string }
	all := []prof{{"a"}, {"b"}}
	name := func(p prof) string { return p.name }
	if p, err := Lookup("x", all, name, "b"); err != nil || p.name != "b" {
		t.Errorf("Lookup(b) = %v, %v", p, err)
	}
	if _, err := Lookup("x", all, name, "c"); err == nil || err.Error() != `x: unknown profile "c" (known: a, b)` {
		t.Errorf("Lookup(c): %v", err)
	}
	if got := Names(all, name); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("Names = %v", got)
	}
}
