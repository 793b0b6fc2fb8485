package protocol_test

import (
	"errors"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/a2s/a2stest"
	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/ogp"
	"github.com/gsq-project/gsq/ogp/ogptest"
	"github.com/gsq-project/gsq/protocol"
	"github.com/gsq-project/gsq/result"
)

// An unknown name is an error that lists every known one; a known name is
// found whatever its case.
func TestLookup(t *testing.T) {
	t.Parallel()
	_, err := protocol.Lookup("quake3")
	if err == nil {
		t.Fatal("quake3 found")
	}
	for _, name := range protocol.Names() {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("%q does not list %s", err, name)
		}
	}
	for _, p := range protocol.All() {
		got, err := protocol.Lookup(strings.ToUpper(p.Name))
		if err != nil || got != p {
			t.Errorf("Lookup(%q) = %v, %v", strings.ToUpper(p.Name), got, err)
		}
	}
	if !slices.IsSorted(protocol.Names()) || protocol.Default == nil || !slices.Contains(protocol.All(), protocol.Default) {
		t.Errorf("names %v, default %v", protocol.Names(), protocol.Default)
	}
}

// Every entry of the registry holds together: a unique lower-case name, a
// title, its defaults among its sections, options whose values prepare,
// the Query kind its transport says, and results that name it.
func TestEveryEntryConsistent(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, p := range protocol.All() {
		t.Run(p.Name, func(t *testing.T) {
			if p.Name == "" || p.Name != strings.ToLower(p.Name) || seen[p.Name] {
				t.Errorf("name %q: empty, not lower case, or twice", p.Name)
			}
			seen[p.Name] = true
			if p.Title == "" || p.PortHint == "" || p.Transport < protocol.UDP || p.Transport > protocol.HTTP || len(p.Sections) == 0 {
				t.Errorf("entry %+v", p)
			}
			for _, s := range p.DefaultSections {
				if !slices.Contains(p.Sections, s) {
					t.Errorf("default section %q is not among %v", s, p.Sections)
				}
			}
			q, err := p.Prepare(protocol.Settings{})
			if err != nil {
				t.Fatalf("default settings: %v", err)
			}
			if q.Protocol() != p {
				t.Errorf("the query's protocol is %v", q.Protocol().Name)
			}
			for _, s := range q.Sections() {
				if !slices.Contains(p.Sections, s) {
					t.Errorf("the query asks %q, not among %v", s, p.Sections)
				}
			}
			switch _, udp := q.(protocol.UDPQuery); {
			case p.Transport == protocol.UDP && !udp:
				t.Error("a UDP protocol whose query is no UDPQuery")
			case p.Transport != protocol.UDP:
				if _, ok := q.(protocol.StreamQuery); !ok {
					t.Error("a stream protocol whose query is no StreamQuery")
				}
			}
			r := q.NewResult("x", a2stest.NewServer(a2stest.Profile{}).Addr())
			if r.Protocol != p.Name || r.Detail == nil || r.Target != "x" {
				t.Errorf("NewResult: %+v", r)
			}
			for _, o := range p.Options {
				if o.Name == "" || o.Usage == "" {
					t.Errorf("option %+v", o)
				}
				for _, v := range o.Values {
					if _, err := p.Prepare(protocol.Settings{Options: map[string]string{o.Name: v}}); err != nil {
						t.Errorf("option %s=%s: %v", o.Name, v, err)
					}
				}
				if o.Values != nil {
					if _, err := p.Prepare(protocol.Settings{Options: map[string]string{o.Name: "not-a-value"}}); err == nil {
						t.Errorf("option %s takes any value", o.Name)
					}
				}
			}
			for _, s := range p.Sections {
				if _, err := p.Prepare(protocol.Settings{Sections: []result.Section{s}}); err != nil {
					t.Errorf("section %s alone: %v", s, err)
				}
			}
			if _, err := p.Prepare(protocol.Settings{Sections: []result.Section{"bogus"}}); err == nil || !strings.Contains(err.Error(), string(p.Sections[0])) {
				t.Errorf("an unknown section: %v", err)
			}
			if _, err := p.Prepare(protocol.Settings{Options: map[string]string{"bogus": "1"}}); err == nil {
				t.Error("an unknown option prepares")
			}
		})
	}
}

// One Client asks A2S and OGP servers at once, a socket per protocol, each
// protocol's challenges kept apart; a server of both (gsq serve's) is
// asked both ways in turn.
func TestClientAsksEveryProtocol(t *testing.T) {
	t.Parallel()
	a := a2stest.NewServer(a2stest.Profile{})
	defer a.Close()
	op, err := ogptest.LookupProfile("v1")
	if err != nil {
		t.Fatal(err)
	}
	o := ogptest.NewServer(op)
	defer o.Close()
	qa := protocol.A2S.MustPrepare(protocol.Settings{})
	qo := protocol.OGP.MustPrepare(protocol.Settings{Options: map[string]string{"dialect": "v1"}})
	var c protocol.Client
	defer c.Close()
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			var steps [][]result.Section
			r := c.Ask(testutil.Context(t), qa, "a", a.Addr(), protocol.Waits{}, func(ended []result.Section, snap *result.Result) {
				steps = append(steps, ended)
				for _, s := range ended {
					if snap.SectionErr(s) == nil && !snap.Detail.Answered() {
						t.Errorf("step %v: nothing recorded", ended)
					}
				}
			})
			d, _ := r.Detail.(*result.A2S)
			if r.Err != nil || d == nil || d.Info == nil || d.Players == nil || d.Rules == nil || r.Protocol != "a2s" {
				t.Errorf("a2s: %+v, %v", r, r.Err)
			}
			// Each section is reported once, as it ends.
			var all []result.Section
			for _, s := range steps {
				all = append(all, s...)
			}
			slices.Sort(all)
			if !slices.Equal(all, []result.Section{result.SectionInfo, result.SectionPlayers, result.SectionRules}) {
				t.Errorf("a2s steps %v", steps)
			}
		})
		wg.Go(func() {
			r := c.Ask(testutil.Context(t), qo, "o", o.Addr(), protocol.Waits{}, nil)
			d, _ := r.Detail.(*result.OGP)
			if r.Err != nil || d == nil || d.Answer == nil || d.Dialect != ogp.V1 || len(r.PlayerList()) == 0 {
				t.Errorf("ogp: %+v, %v", r, r.Err)
			}
		})
	}
	wg.Wait()
	c.Close()
	r := c.Ask(testutil.Context(t), qa, "a", a.Addr(), protocol.Waits{}, nil)
	if !errors.Is(r.Err, protocol.ErrClientClosed) {
		t.Errorf("after Close: %v", r.Err)
	}
}

// Waits reach the conversation: a silent server gets 1 + Retries
// requests, and every section asked fails with a timeout.
func TestClientWaits(t *testing.T) {
	t.Parallel()
	silent, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:0")))
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	var c protocol.Client
	defer c.Close()
	q := protocol.A2S.MustPrepare(protocol.Settings{Sections: []result.Section{result.SectionInfo, result.SectionRules}})
	addr := silent.LocalAddr().(*net.UDPAddr).AddrPort()
	r := c.Ask(testutil.Context(t), q, "x", addr, protocol.Waits{Timeout: 20 * time.Millisecond, Retries: 1}, nil)
	if r.Err == nil || r.Err.Kind != result.KindTimeout || !errors.Is(r.Err, a2s.ErrTimeout) || len(r.Errors) != 2 {
		t.Errorf("silent server: %v, %v", r.Err, r.Errors)
	}
	got := 0
	buf := make([]byte, 2048)
	for {
		// The requests are on the socket already; the wait only ends the loop.
		silent.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		if _, _, err := silent.ReadFromUDPAddrPort(buf); err != nil {
			break
		}
		got++
	}
	if got != 2 {
		t.Errorf("the silent server got %d requests, want 2", got)
	}
}
