package webrcontest

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
	if _, err := LookupProfile("carbon"); err == nil || !strings.Contains(err.Error(), "rust, oxide") {
		t.Errorf("unknown profile: %v", err)
	}
	s := NewUnstartedServer(Oxide, "pw", nil)
	defer s.Listener.Close()
	if !s.WS.BroadcastReplies || !s.WS.IgnorePings {
		t.Error("the oxide profile does not broadcast replies and ignore pings")
	}
}
