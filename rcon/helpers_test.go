package rcon

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// testCtx bounds a test's calls.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// bigOutput is deterministic text of about n bytes with multi-byte runes
// that straddle packet boundaries.
func bigOutput(n int) string {
	var sb strings.Builder
	for i := 0; sb.Len() < n; i++ {
		fmt.Fprintf(&sb, "%06d Жёлтый 玩家 🎮 §aname\n", i)
	}
	return sb.String()
}
