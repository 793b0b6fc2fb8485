package ogp_test

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/udpio/udptest"
	"github.com/gsq-project/gsq/ogp"
)

// A query to a closed port ends with the network's report, not after the
// timeouts: the client's socket sees ICMP port unreachable, as a2s's does.
func TestClientClosedPortIsUnreachable(t *testing.T) {
	t.Parallel()
	closed := udptest.ClosedPort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// Only the ICMP error can end the call before the context: the kernel
	// limits the ICMP errors it sends per second, host-wide, so a request
	// whose error was not sent is sent again.
	c := &ogp.Client{Timeout: 300 * time.Millisecond, Retries: 1000}
	defer c.Close()
	_, err := c.Ping(ctx, closed)
	if !errors.Is(err, ogp.ErrUnreachable) || !errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, ogp.ErrTimeout) {
		t.Fatalf("err = %v, want unreachable", err)
	}
	var ce *ogp.CallError
	if !errors.As(err, &ce) || ce.Stats.Sent > 2 {
		t.Errorf("err = %v (%+v): want an answer after the first send or so", err, ce)
	}
	t.Logf("%v after %d sends", err, ce.Stats.Sent)
	// The next call to that server learns the same.
	if _, err := c.Query(ctx, closed, &ogp.Query{Request: ogp.RequestServerInfo}); !errors.Is(err, ogp.ErrUnreachable) {
		t.Errorf("second call: %v", err)
	}
}
