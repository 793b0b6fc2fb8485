package a2stest_test

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/a2s/a2stest"
	"github.com/gsq-project/gsq/internal/lossy"
)

func TestProfiles(t *testing.T) {
	t.Parallel()
	want := []string{"modern", "legacy", "goldsource-dual", "split-out-of-order", "bzip2-nosize", "oversized", "rust", "ship", "dayz", "banned", "lossy"}
	if got := a2stest.ProfileNames(); !slices.Equal(got, want) {
		t.Errorf("ProfileNames() = %q, want %q", got, want)
	}
	for _, name := range want {
		p, err := a2stest.LookupProfile(name)
		if err != nil || p.Name != name || p.Description == "" {
			t.Errorf("LookupProfile(%q) = %+v, %v", name, p, err)
		}
	}
	_, err := a2stest.LookupProfile("nope")
	if err == nil || !strings.Contains(err.Error(), `"nope"`) || !strings.Contains(err.Error(), strings.Join(want, ", ")) {
		t.Errorf("LookupProfile(nope): %v, want an error naming it and listing the profiles", err)
	}
}

// dial returns a UDP socket connected to addr, closed after the test.
func dial(t *testing.T, addr netip.AddrPort) *net.UDPConn {
	t.Helper()
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// read returns the next datagram on c; the deadline only keeps a broken
// server from hanging the test.
func read(t *testing.T, c *net.UDPConn) []byte {
	t.Helper()
	buf := make([]byte, 65536)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err := c.Read(buf)
	if err != nil {
		t.Fatalf("no reply: %v", err)
	}
	return buf[:n]
}

func TestServerSet(t *testing.T) {
	t.Parallel()
	s := a2stest.NewServer(a2stest.Profile{})
	defer s.Close()
	info := a2stest.DefaultInfo()
	info.Map = a2s.Text("cs_office")
	if err := s.Set(info, nil, nil); err != nil {
		t.Fatal(err)
	}
	c := &a2s.Client{Timeout: 5 * time.Second}
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
	if s.Received() != 2 { // the query, then again with the challenge
		t.Errorf("Received() = %d, want 2", s.Received())
	}
	s.Close()
	s.Close() // idempotent
}

// TestServerDropped: the lossy knobs drop exactly the replies the fault
// injector decides from the seed, and Dropped counts them.
func TestServerDropped(t *testing.T) {
	t.Parallel()
	p := a2stest.Profile{NoChallenge: true, RateLimit: -1, Loss: 0.4, Seed: 7}
	s := a2stest.NewServer(p)
	defer s.Close()
	fates := lossy.Foretell(lossy.Config{Loss: p.Loss, Seed: p.Seed}, 60)
	for len(fates) > 20 && fates[len(fates)-1] == 0 {
		fates = fates[:len(fates)-1] // end on a reply, which comes after every drop
	}
	c := dial(t, s.Addr())
	req, _ := a2s.Request{Type: a2s.TypeInfoRequest}.AppendBinary(nil)
	var dropped int64
	for _, n := range fates {
		if _, err := c.Write(req); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			dropped++
			continue // nothing will come back
		}
		if _, err := a2s.ParseInfo(read(t, c)); err != nil {
			t.Fatal(err)
		}
	}
	sent := len(fates)
	// The last reply came after every earlier request was handled.
	if s.Received() != int64(sent) || s.Dropped() != dropped || dropped == 0 {
		t.Errorf("received %d, dropped %d; want %d and %d (> 0)", s.Received(), s.Dropped(), sent, dropped)
	}
}

// TestBannedNoAmplification: the ban is answered at once, without a
// challenge, and never more than three times the request or 32 bytes more.
func TestBannedNoAmplification(t *testing.T) {
	t.Parallel()
	p, err := a2stest.LookupProfile("banned")
	if err != nil {
		t.Fatal(err)
	}
	s := a2stest.NewServer(p)
	defer s.Close()
	c := dial(t, s.Addr())
	info, _ := a2s.Request{Type: a2s.TypeInfoRequest}.AppendBinary(nil)
	players, _ := a2s.Request{Type: a2s.TypePlayerRequest}.AppendBinary(nil)
	padded, _ := a2s.Request{Type: a2s.TypeRulesRequest}.PadTo(200).AppendBinary(nil)
	for _, req := range [][]byte{info, players, players[:5], padded} {
		if _, err := c.Write(req); err != nil {
			t.Fatal(err)
		}
		reply := read(t, c)
		text, err := a2s.ParseBanned(reply)
		if err != nil {
			t.Fatalf("%d-byte request: %v", len(req), err)
		}
		if limit := min(3*len(req), len(req)+32); len(reply) > limit {
			t.Errorf("%d-byte request answered with %d bytes, more than %d", len(req), len(reply), limit)
		}
		if !strings.HasPrefix(string(p.Banned), string(text)) || len(text) == 0 {
			t.Errorf("%d-byte request: ban text %q", len(req), text)
		}
		if len(req) >= 25 && string(text) != string(p.Banned) {
			t.Errorf("%d-byte request: ban text cut to %q, though it fits", len(req), text)
		}
	}
}

// TestCompressedSplit: the bzip2-nosize profile's rules come in a
// compressed split that the a2s reassembler opens.
func TestCompressedSplit(t *testing.T) {
	t.Parallel()
	p, _ := a2stest.LookupProfile("bzip2-nosize")
	p.NoChallenge = true
	r := p.NewResponder(nil)
	var rec recorder
	req, _ := a2s.Request{Type: a2s.TypeRulesRequest}.AppendBinary(nil)
	for range 2 { // the second reply comes from the kept compression
		rec.sent = nil
		r.HandlePacket(&rec, netip.MustParseAddrPort("127.0.0.1:9"), req)
		if len(rec.sent) != 1 {
			t.Errorf("%d fragments, want the one the profile describes", len(rec.sent))
		}
		var ra a2s.Reassembler
		var payload []byte
		for _, b := range rec.sent {
			f, err := a2s.ParseFragment(b)
			if err != nil {
				t.Fatal(err)
			}
			if !f.Compressed || f.Format != a2s.SplitSourceNoSize {
				t.Fatalf("fragment %+v, want a compressed one without Size", f)
			}
			if p, done, err := ra.Add(f); err != nil {
				t.Fatal(err)
			} else if done {
				payload = p
			}
		}
		rules, err := a2s.ParseRules(payload)
		if err != nil || len(rules.List) != len(a2stest.DefaultRules().List) {
			t.Fatalf("rules %v, %d of them", err, len(rules.List))
		}
	}
}

// recorder is an in-memory a2s.PacketWriter that keeps copies.
type recorder struct{ sent [][]byte }

func (r *recorder) WriteToUDPAddrPort(b []byte, _ netip.AddrPort) (int, error) {
	r.sent = append(r.sent, slices.Clone(b))
	return len(b), nil
}

func TestWrapWriterWithoutKnobs(t *testing.T) {
	t.Parallel()
	var rec recorder
	if w := (a2stest.Profile{Seed: 3}).WrapWriter(&rec); w != &rec {
		t.Error("a profile without lossy knobs wrapped the writer")
	}
	if w := (a2stest.Profile{Reorder: 0.1}).WrapWriter(&rec); w == &rec {
		t.Error("a profile with lossy knobs did not wrap the writer")
	}
}
