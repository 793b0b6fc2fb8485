package lossy_test

import (
	"fmt"
	"math"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gsq-project/gsq/internal/lossy"
)

// recorder is an in-memory PacketWriter.
type recorder struct {
	mu   sync.Mutex
	sent []string
}

func (r *recorder) WriteToUDPAddrPort(b []byte, _ netip.AddrPort) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = append(r.sent, string(b))
	return len(b), nil
}

func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.sent)
}

// send writes the datagrams "0" to "n-1" through w.
func send(w *lossy.Writer, n int) {
	for i := range n {
		w.WriteToUDPAddrPort([]byte(fmt.Sprint(i)), netip.AddrPort{})
	}
}

func TestSeedDecides(t *testing.T) {
	t.Parallel()
	run := func(seed uint64) ([]string, int64) {
		var rec recorder
		w := lossy.New(&rec, lossy.Config{Loss: 0.3, Duplicate: 0.3, Seed: seed})
		send(w, 200)
		return rec.got(), w.Dropped()
	}
	a, dropped := run(1)
	b, _ := run(1)
	c, _ := run(2)
	if !slices.Equal(a, b) {
		t.Error("same seed, different datagrams")
	}
	if slices.Equal(a, c) {
		t.Error("different seeds, same datagrams")
	}
	seen := map[string]int{}
	for _, s := range a {
		seen[s]++
	}
	var missing, doubled int64
	for i := range 200 {
		switch seen[fmt.Sprint(i)] {
		case 0:
			missing++
		case 2:
			doubled++
		}
	}
	if missing == 0 || doubled == 0 {
		t.Errorf("%d dropped, %d duplicated of 200", missing, doubled)
	}
	if dropped != missing {
		t.Errorf("Dropped() = %d, but %d datagrams are missing", dropped, missing)
	}
}

func TestReorder(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		w := lossy.New(&rec, lossy.Config{Reorder: 1, Delay: 5 * time.Millisecond})
		send(w, 3)
		// 0 is held and goes out after 1; 2 is held with nothing after it.
		if got := rec.got(); !slices.Equal(got, []string{"1", "0"}) {
			t.Fatalf("sent %q before the delay, want [1 0]", got)
		}
		time.Sleep(4 * time.Millisecond)
		synctest.Wait()
		if got := rec.got(); len(got) != 2 {
			t.Fatalf("sent %q before the delay ran out", got)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if got := rec.got(); !slices.Equal(got, []string{"1", "0", "2"}) {
			t.Errorf("sent %q after the delay, want [1 0 2]", got)
		}
	})
}

func TestStop(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		w := lossy.New(&rec, lossy.Config{Reorder: 1})
		send(w, 1) // held
		w.Stop()
		send(w, 2)
		time.Sleep(2 * lossy.DefaultDelay)
		synctest.Wait()
		if got := rec.got(); len(got) != 0 {
			t.Errorf("sent %q after Stop", got)
		}
	})
}

func TestValidate(t *testing.T) {
	t.Parallel()
	for _, c := range []lossy.Config{{Loss: -0.1}, {Duplicate: 1.5}, {Reorder: math.NaN()}} {
		if c.Validate() == nil {
			t.Errorf("Validate(%+v) accepted", c)
		}
	}
	if err := (lossy.Config{Loss: 1, Duplicate: 0, Reorder: 0.5}).Validate(); err != nil {
		t.Error(err)
	}
	if (lossy.Config{Seed: 9}).Enabled() || !(lossy.Config{Reorder: 0.1}).Enabled() {
		t.Error("Enabled is wrong")
	}
}

func TestForetell(t *testing.T) {
	t.Parallel()
	c := lossy.Config{Loss: 0.3, Duplicate: 0.3, Seed: 5}
	var rec recorder
	send(lossy.New(&rec, c), 100)
	seen := map[string]int{}
	for _, s := range rec.got() {
		seen[s]++
	}
	for i, n := range lossy.Foretell(c, 100) {
		if seen[fmt.Sprint(i)] != n {
			t.Fatalf("datagram %d: foretold %d copies, sent %d", i, n, seen[fmt.Sprint(i)])
		}
	}
}
