package fdlimit

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestOpenFilesMatchesProc compares the limit with what Linux shows in
// /proc/self/limits, a second reading of the same number.
func TestOpenFilesMatchesProc(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("/proc/self/limits is Linux's")
	}
	b, err := os.ReadFile("/proc/self/limits")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		rest, ok := strings.CutPrefix(line, "Max open files")
		if !ok {
			continue
		}
		soft := strings.Fields(rest)[0]
		want := ^uint64(0)
		if soft != "unlimited" {
			if want, err = strconv.ParseUint(soft, 10, 64); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
		}
		if got := OpenFiles(); got != want {
			t.Fatalf("OpenFiles() = %d, /proc/self/limits says %d", got, want)
		}
		return
	}
	t.Fatalf("no open-files line in /proc/self/limits:\n%s", b)
}
