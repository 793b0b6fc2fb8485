package satisfactorytest

import (
	"strings"
	"testing"
)

func TestLookupProfile(t *testing.T) {
	t.Parallel()
	for _, n := range ProfileNames() {
		if p, err := LookupProfile(n); err != nil || p.Name != n || p.Description == "" {
			t.Errorf("LookupProfile(%q) = %+v, %v", n, p, err)
		}
	}
	if _, err := LookupProfile("x"); err == nil || !strings.Contains(err.Error(), "playing, idle") {
		t.Errorf("unknown profile: %v", err)
	}
}
