package cli

import (
	"fmt"
	"net/netip"
	"strings"
	"syscall"
	"testing"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/internal/neterr"
	"github.com/gsq-project/gsq/ogp"
	"github.com/gsq-project/gsq/protocol"
	"github.com/gsq-project/gsq/result"
)

// A server whose split reply lost fragments answered: the hint says so,
// and does not send the user looking for another port.
func TestQueryHintIncompleteSplit(t *testing.T) {
	t.Parallel()
	addr := netip.MustParseAddrPort("127.0.0.1:27015")
	for _, tc := range []struct {
		p    *protocol.Protocol
		err  error
		want string
	}{
		{protocol.A2S, fmt.Errorf("a2s: rules: %w: %w", a2s.ErrTimeout, a2s.ErrIncomplete), "answered, but fragments of its split reply were lost"},
		{protocol.A2S, a2s.ErrTimeout, "the query port often differs"},
		{protocol.A2S, fmt.Errorf("a2s: info: %w", &neterr.Unreachable{Sentinel: a2s.ErrUnreachable, Err: syscall.ECONNREFUSED}), "nothing listens on 127.0.0.1:27015/udp: the query port"},
		{protocol.OGP, fmt.Errorf("ogp: query: %w: %w", ogp.ErrTimeout, ogp.ErrIncomplete), "answered, but fragments of its split reply were lost"},
		{protocol.OGP, ogp.ErrTimeout, "OGP servers answer on their query port"},
	} {
		e := result.NewError(tc.err)
		r := &result.Result{Addr: addr, Err: e, Errors: []result.SectionError{{Section: result.SectionInfo, Err: e}}}
		if got := queryHint(tc.p, r); !strings.Contains(got, tc.want) {
			t.Errorf("%v: hint %q, want %q", tc.err, got, tc.want)
		}
	}
}
