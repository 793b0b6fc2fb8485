package betest

import (
	"strings"
	"testing"
)

func TestLookupProfile(t *testing.T) {
	t.Parallel()
	for _, name := range ProfileNames() {
		if p, err := LookupProfile(name); err != nil || p.Name != name {
			t.Errorf("LookupProfile(%q) = %+v, %v", name, p, err)
		}
	}
	if _, err := LookupProfile("arma4"); err == nil || !strings.Contains(err.Error(), "dayz, arma3, reforger") {
		t.Errorf("unknown profile: %v", err)
	}
	if p, _ := LookupProfile("reforger"); !p.Reforger {
		t.Error("reforger profile answers classically")
	}
}
