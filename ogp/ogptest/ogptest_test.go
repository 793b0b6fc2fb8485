package ogptest

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/ogp"
)

func TestLookupProfile(t *testing.T) {
	t.Parallel()
	names := ProfileNames()
	if len(names) != len(Profiles()) {
		t.Fatalf("ProfileNames has %d names for %d profiles", len(names), len(Profiles()))
	}
	for _, name := range names {
		p, err := LookupProfile(name)
		if err != nil || p.Name != name {
			t.Errorf("LookupProfile(%q) = %q, %v", name, p.Name, err)
		}
	}
	_, err := LookupProfile("nope")
	if err == nil || !strings.Contains(err.Error(), `"nope"`) || !strings.Contains(err.Error(), strings.Join(names, ", ")) {
		t.Errorf("unknown profile: %v", err)
	}
}

// TestLossyCounters: the lossy profile drops every second datagram, the
// counters say so, and a client gets through by resending.
func TestLossyCounters(t *testing.T) {
	t.Parallel()
	p, _ := LookupProfile("lossy")
	s := NewServer(p)
	defer s.Close()
	c := &ogp.Client{Timeout: 100 * time.Millisecond, Retries: 5}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	q := ogp.Query{Request: ogp.RequestRules}
	resp, err := c.Query(ctx, s.Addr(), &q)
	if err != nil {
		t.Fatal(err)
	}
	// The first query gets error 3, the second (with the challenge) is
	// dropped, so the client resent at least once.
	if resp.Stats.Resent == 0 || s.Dropped() == 0 || s.Received() < 3 {
		t.Errorf("stats %+v, server received %d, dropped %d", resp.Stats, s.Received(), s.Dropped())
	}
}

// TestError3Forms: the two variant forms of error 3 carry the challenge
// where they say.
func TestError3Forms(t *testing.T) {
	t.Parallel()
	s := &ogp.Server{RateLimit: -1}
	var c collector
	req, _ := (&ogp.Header{Type: ogp.TypeDefault, Flags: ogp.FlagChallenge}).AppendBinary(nil)
	req = append(req, 0)
	s.HandlePacket(&c, netip.MustParseAddrPort("192.0.2.1:5000"), req)
	if len(c.pkts) != 1 {
		t.Fatalf("%d answers", len(c.pkts))
	}
	for _, tc := range []struct {
		form           Error3Form
		header, inCopy bool
	}{{Error3Spec, true, true}, {Error3HeaderOnly, true, false}, {Error3CopyOnly, false, true}} {
		h, body, err := ogp.ParseHeader(reshapeError3(c.pkts[0], tc.form))
		if err != nil {
			t.Fatal(err)
		}
		e, err := ogp.ParseErrorAnswer(body)
		_, inCopy := e.Challenge()
		if err != nil || e.Code != ogp.ErrorInvalidChallenge || (h.Flags&ogp.FlagChallenge != 0) != tc.header || inCopy != tc.inCopy {
			t.Errorf("form %d: header %+v, copy %v, %v", tc.form, h, inCopy, err)
		}
	}
	ping, _ := (&ogp.Header{Type: ogp.TypePing}).AppendBinary(nil)
	if got := reshapeError3(ping, Error3HeaderOnly); string(got) != string(ping) {
		t.Errorf("a non-error datagram changed")
	}
}
