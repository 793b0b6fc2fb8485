package testutil

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// Metric reads /metrics at url and returns the value of the series
// written exactly as series (a name, with its labels in braces as the
// exposition orders them), and whether it is there. A scrape that fails
// fails the test.
func Metric(t testing.TB, url, series string) (float64, bool) {
	t.Helper()
	status, _, body := Get(t, url, "")
	if status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, status, body)
	}
	for line := range strings.SplitSeq(body, "\n") {
		rest, ok := strings.CutPrefix(line, series+" ")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			t.Fatalf("GET %s: %q has no value", url, line)
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			t.Fatalf("GET %s: %q: %v", url, line, err)
		}
		return v, true
	}
	return 0, false
}
