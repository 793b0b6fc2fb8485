package cli

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/result"
)

// A server whose split reply lost fragments answered: the hint says so,
// and does not send the user looking for another port.
func TestQueryHintIncompleteSplit(t *testing.T) {
	t.Parallel()
	addr := netip.MustParseAddrPort("127.0.0.1:27015")
	q := &a2sQuery{}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("a2s: rules: %w: %w", a2s.ErrTimeout, a2s.ErrIncomplete), "answered, but fragments of its split reply were lost"},
		{a2s.ErrTimeout, "the query port often differs"},
	} {
		e := result.NewError(tc.err)
		r := &result.Result{Addr: addr, Err: e, Errors: []result.SectionError{{Section: result.SectionRules, Err: e}}}
		if got := q.hint(r); !strings.Contains(got, tc.want) {
			t.Errorf("%v: hint %q, want %q", tc.err, got, tc.want)
		}
	}
}
