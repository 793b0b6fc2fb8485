package textdist

import (
	"slices"
	"testing"
)

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"valheim", "valheim", 0},
		{"valhem", "valheim", 1}, {"kitten", "sitting", 3}, {"rust", "ruts", 2},
		{string(make([]byte, MaxLen+1)), "a", MaxLen},
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := Distance(c.b, c.a); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (symmetry)", c.b, c.a, got, c.want)
		}
	}
}

func TestNearest(t *testing.T) {
	known := []string{"rust", "valheim", "vrising", "dust", "Rust2", "conanexiles"}
	if got, want := Nearest("RUSTT", known, 2, 3), []string{"rust", "Rust2", "dust"}; !slices.Equal(got, want) {
		t.Errorf("Nearest = %q, want %q", got, want)
	}
	if got := Nearest("rustt", known, 2, 1); !slices.Equal(got, []string{"rust"}) {
		t.Errorf("Nearest with n 1 = %q", got)
	}
	if got := Nearest("zzzzzzzz", known, 2, 5); len(got) != 0 {
		t.Errorf("Nearest of a word far from all = %q, want none", got)
	}
}
