package a2stest_test

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/a2s/a2stest"
)

func TestProfiles(t *testing.T) {
	want := []string{"modern", "legacy", "goldsource-dual", "split-out-of-order", "bzip2-nosize", "oversized", "rust", "ship", "dayz", "banned", "lossy"}
	if got := a2stest.ProfileNames(); !slices.Equal(got, want) {
		t.Errorf("ProfileNames() = %q, want %q", got, want)
	}
	for _, name := range want {
		p, ok := a2stest.ProfileByName(name)
		if !ok || p.Name != name || p.Description == "" {
			t.Errorf("ProfileByName(%q) = %+v, %v", name, p, ok)
		}
	}
	if _, ok := a2stest.ProfileByName("nope"); ok {
		t.Error("ProfileByName found an unknown profile")
	}
}

// recorder is an in-memory a2s.PacketWriter.
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

func (r *recorder) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.sent)
}

// TestWrapWriterSeed: the same seed drops and duplicates the same
// datagrams; another seed does not.
func TestWrapWriterSeed(t *testing.T) {
	run := func(seed uint64) []string {
		var rec recorder
		w := a2stest.Profile{Loss: 0.3, Duplicate: 0.3, Seed: seed}.WrapWriter(&rec)
		for i := range 200 {
			w.WriteToUDPAddrPort([]byte(fmt.Sprint(i)), netip.AddrPort{})
		}
		return rec.sent
	}
	a, b, c := run(1), run(1), run(2)
	if !slices.Equal(a, b) {
		t.Error("same seed, different datagrams")
	}
	if slices.Equal(a, c) {
		t.Error("different seeds, same datagrams")
	}
	dropped, dup := 0, 0
	seen := map[string]int{}
	for _, s := range a {
		seen[s]++
	}
	for i := range 200 {
		switch seen[fmt.Sprint(i)] {
		case 0:
			dropped++
		case 2:
			dup++
		}
	}
	if dropped == 0 || dup == 0 {
		t.Errorf("%d dropped, %d duplicated of 200", dropped, dup)
	}
}

// TestWrapWriterReorder: a held datagram is still sent, after the next
// one or after a delay.
func TestWrapWriterReorder(t *testing.T) {
	var rec recorder
	w := a2stest.Profile{Reorder: 1, Seed: 3}.WrapWriter(&rec)
	for i := range 10 {
		w.WriteToUDPAddrPort([]byte(fmt.Sprint(i)), netip.AddrPort{})
	}
	for deadline := time.Now().Add(10 * time.Second); rec.len() < 10 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	got := slices.Clone(rec.sent)
	slices.Sort(got)
	if !slices.Equal(got, []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}) {
		t.Errorf("sent %q", rec.sent)
	}
}

func TestWrapUnchanged(t *testing.T) {
	h, err := a2s.NewStaticHandler(a2stest.DefaultInfo(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := (a2stest.Profile{}).Wrap(h); got != a2s.Handler(h) {
		t.Error("the default profile wrapped the handler")
	}
	if got := (a2stest.Profile{Framing: a2stest.FramingUnsplit}).Wrap(h); got == a2s.Handler(h) {
		t.Error("the unsplit framing did not wrap the handler")
	}
	var rec recorder
	if w := (a2stest.Profile{}).WrapWriter(&rec); w != &rec {
		t.Error("a profile without lossy knobs wrapped the writer")
	}
}

func TestServerSet(t *testing.T) {
	s := a2stest.NewServer(a2stest.Profile{})
	defer s.Close()
	info := a2stest.DefaultInfo()
	info.Map = a2s.Text("cs_office")
	if err := s.Set(info, nil, nil); err != nil {
		t.Fatal(err)
	}
	c := &a2s.Client{Timeout: time.Second}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := c.Info(ctx, s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Info.Map) != "cs_office" {
		t.Errorf("map %q after Set", res.Info.Map)
	}
	if s.Received() != 2 {
		t.Errorf("Received() = %d, want 2", s.Received())
	}
	s.Close()
	s.Close() // idempotent
}

func ExampleNewServer() {
	srv := a2stest.NewServer(a2stest.Profile{}) // the modern profile
	defer srv.Close()

	c := &a2s.Client{}
	defer c.Close()
	res, err := c.Info(context.Background(), srv.Addr())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Info.Name, res.Info.Map)
	// Output: gsq test server de_dust2
}
