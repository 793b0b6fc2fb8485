package palworld_test

import (
	"context"
	"testing"

	"github.com/gsq-project/gsq/palworld"
	"github.com/gsq-project/gsq/palworld/palworldtest"
)

// BenchmarkPlayers is GET players over loopback HTTP to the fake, two
// players decoded.
func BenchmarkPlayers(b *testing.B) {
	s := palworldtest.NewServer("pw", palworldtest.NewSimHandler(palworld.Info{}, players, palworld.Metrics{}))
	defer s.Close()
	c := palworld.NewClient(s.Addr().String(), "pw", nil)
	defer c.Close()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Players(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
