package rconbench

import (
	"testing"
)

func BenchmarkGsqOnly(b *testing.B) {
	addr := startServer(b, 0)
	g := gsqContender(b, "gsq", addr, nil)
	l := leanContender(b, "lean", addr, true)
	for range 10 {
		g.exec()
	}
	b.Run("gsq", func(b *testing.B) {
		for b.Loop() {
			g.exec()
		}
	})
	b.Run("leanprobe", func(b *testing.B) {
		for b.Loop() {
			l.exec()
		}
	})
}
