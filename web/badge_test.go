package web

import (
	"testing"

	"github.com/gsq-project/gsq/monitor"
)

// TestBadgeOnePlayer: a server that tells no capacity and has one player
// shows "1 player" (issue 19, user row 8: "1 servers").
func TestBadgeOnePlayer(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]string{0: "0 players", 1: "1 player", 2: "2 players"} {
		s := monitor.ServerState{Status: monitor.StatusUp}
		s.Summary.Players = ptr(n)
		if got, _ := badgeValue(&s); got != want {
			t.Errorf("%d players: %q, want %q", n, got, want)
		}
	}
}
