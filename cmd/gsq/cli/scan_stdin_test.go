package cli

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/testutil"
)

// TestScanReadsStdinAsItComes feeds gsq scan its list one server at a
// time down a pipe, as `gsq discover | gsq scan` does, and checks that
// each server's result is written before the next line is even sent: the
// list is read as it comes, and each result is written without waiting
// for another.
func TestScanReadsStdinAsItComes(t *testing.T) {
	t.Parallel()
	f := startScanFleet(t, 3)
	pr, pw := io.Pipe()
	out := newWatchedBuffer("")
	env := testEnv(pr, nil)
	env.Stdout = out
	done := make(chan int, 1)
	go func() { done <- env.Run(testutil.Context(t), []string{"scan", "--info"}) }()
	for i := range f.Len() {
		if _, err := fmt.Fprintln(pw, f.Addr(i)); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf(`"address":"%s"`, f.Addr(i))
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(out.String(), want) {
			if time.Now().After(deadline) {
				t.Fatalf("server %d's result was not written while the list was still open; stdout:\n%s", i, out.String())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	pw.Close()
	select {
	case code := <-done:
		if code != ExitOK {
			t.Errorf("exit %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("gsq scan did not end once its list was closed")
	}
	if n := strings.Count(out.String(), "\n"); n != 3 {
		t.Errorf("%d lines, want 3:\n%s", n, out.String())
	}
}
