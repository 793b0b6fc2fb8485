package ogp

import (
	"testing"

	"github.com/gsq-project/gsq/internal/testutil"
)

func TestAllocBudgets(t *testing.T) {
	body := testutil.Unhex(t, answerVector)[19:]
	a, err := ParseAnswer(body, V091)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 0, 256)
	if n := testing.AllocsPerRun(100, func() { buf, _ = a.Append(buf[:0], V091) }); n > 3 {
		t.Errorf("Answer.Append: %v allocs, want <= 3", n)
	}
	// The Answer, the player slice (grown once per doubling) and the rule slice.
	if n := testing.AllocsPerRun(100, func() { ParseAnswer(body, V091) }); n > 5 {
		t.Errorf("ParseAnswer: %v allocs, want <= 5", n)
	}
	h := Header{Type: TypeDefault, Flags: FlagChallenge | FlagRequestID | FlagSplit}
	if n := testing.AllocsPerRun(100, func() { buf, _ = h.AppendBinary(buf[:0]) }); n != 0 {
		t.Errorf("Header.AppendBinary: %v allocs, want 0", n)
	}
	pkt, _ := h.AppendBinary(nil)
	if n := testing.AllocsPerRun(100, func() { ParseHeader(pkt) }); n != 0 {
		t.Errorf("ParseHeader: %v allocs, want 0", n)
	}
}
