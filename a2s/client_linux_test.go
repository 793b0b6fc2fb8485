package a2s

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"
)

// TestClientSendFailsWhileHeld: a request queued while the read loop holds
// the batch writer, and that the kernel then refuses (port 0), fails its
// query at once with the send error rather than a timeout.
func TestClientSendFailsWhileHeld(t *testing.T) {
	c := &Client{Timeout: time.Minute}
	defer c.Close()
	if err := c.init(); err != nil {
		t.Fatal(err)
	}
	if c.batch == nil {
		t.Skip("no sendmmsg on this platform")
	}
	if !c.batch.tryHold() {
		t.Fatal("the writer of an idle client is busy")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := c.Info(ctx, netip.MustParseAddrPort("127.0.0.1:0"))
		done <- err
	}()
	for queued := false; !queued; {
		select {
		case err := <-done:
			t.Fatalf("Info returned before the writer was flushed: %v", err)
		case <-ctx.Done():
			t.Fatal("the request was never queued")
		case <-time.After(time.Millisecond):
		}
		c.batch.mu.Lock()
		queued = len(c.batch.queue) > 0
		c.batch.mu.Unlock()
	}
	if err := c.batch.flush(); err == nil {
		t.Error("flush of a datagram to port 0: no error")
	}
	err := <-done
	if err == nil || errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want the send error", err)
	}
}
