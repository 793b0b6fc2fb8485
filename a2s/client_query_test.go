package a2s_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/a2s/a2stest"
	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/internal/udpio/udptest"
)

// sendLog records the requests a client sends, through its Debug hook, as
// "T-", "U1234"...
type sendLog struct {
	mu   sync.Mutex
	reqs []string
}

func (l *sendLog) hook(t *testing.T) func(string, netip.AddrPort, []byte) {
	return func(dir string, _ netip.AddrPort, b []byte) {
		if dir != "send" {
			return
		}
		r, err := a2s.ParseRequest(b)
		if err != nil {
			t.Errorf("sent %x: %v", b, err)
			return
		}
		s := string(r.Type)
		if r.HasChallenge {
			s += "+"
		} else {
			s += "-"
		}
		l.mu.Lock()
		l.reqs = append(l.reqs, s)
		l.mu.Unlock()
	}
}

func (l *sendLog) take() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := strings.Join(l.reqs, " ")
	l.reqs = nil
	return s
}

func TestClientQueryOneConversation(t *testing.T) {
	t.Parallel()
	srv, info, players, rules := newModernServer(t)
	var log sendLog
	c := &a2s.Client{Debug: log.hook(t)}
	defer c.Close()
	for i, want := range []string{"T- T+ U+ V+", "T+ U+ V+"} {
		res, err := c.Query(testutil.Context(t), srv.Addr(), a2s.AllSections)
		if err != nil {
			t.Fatal(err)
		}
		checkInfo(t, res.Info, info)
		checkPlayers(t, res.Players, players)
		checkRules(t, res.Rules, rules)
		if res.RTT <= 0 {
			t.Errorf("RTT %v", res.RTT)
		}
		// The second query has the challenge the first one learned.
		if got := log.take(); got != want {
			t.Errorf("query %d sent %q, want %q", i, got, want)
		}
	}
}

func TestClientClosedPortIsUnreachable(t *testing.T) {
	t.Parallel()
	closed := udptest.ClosedPort(t)
	var log sendLog
	// Only the ICMP error can end these queries: no timeout would before
	// the test's context. (The kernel limits the ICMP errors it sends per
	// second, host-wide; a request whose error was not sent is resent.)
	c := &a2s.Client{Timeout: 300 * time.Millisecond, Retries: 1000, Deadline: -1, Debug: log.hook(t)}
	defer c.Close()
	res, err := c.Query(testutil.Context(t), closed, a2s.AllSections)
	if !errors.Is(err, a2s.ErrUnreachable) || !errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, a2s.ErrTimeout) {
		t.Fatalf("err = %v, want unreachable", err)
	}
	if !errors.Is(res.PlayersErr, a2s.ErrUnreachable) || !errors.Is(res.RulesErr, a2s.ErrUnreachable) {
		t.Errorf("players %v, rules %v", res.PlayersErr, res.RulesErr)
	}
	if got := log.take(); strings.Trim(strings.ReplaceAll(got, "T-", ""), " ") != "" {
		t.Errorf("sent %q to a closed port, want INFO only", got)
	} else if got != "T-" {
		t.Logf("sent %q: an ICMP error was not sent", got)
	}
	if _, err := c.Info(testutil.Context(t), closed); !errors.Is(err, a2s.ErrUnreachable) {
		t.Errorf("Info: %v", err)
	}
}

func TestClientGarbageIsNotSilence(t *testing.T) {
	t.Parallel()
	addr := newFakePeer(t, func(conn *net.UDPConn, from netip.AddrPort, _ []byte) {
		conn.WriteToUDPAddrPort([]byte("HTTP/1.0 400 Bad Request\r\n\r\n"), from)
	})
	c := &a2s.Client{Timeout: 20 * time.Millisecond, Retries: 1}
	defer c.Close()
	_, err := c.Info(testutil.Context(t), addr)
	var pe *a2s.ParseError
	if !errors.Is(err, a2s.ErrNotA2S) || errors.Is(err, a2s.ErrTimeout) || !errors.As(err, &pe) {
		t.Fatalf("err = %v, want ErrNotA2S", err)
	}
}

func TestClientDeadline(t *testing.T) {
	t.Parallel()
	// The server answers INFO, never PLAYER or RULES. Only the Deadline
	// can end the query: the per-send timeout is an hour.
	reply, err := a2stest.DefaultInfo().AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	addr := newFakePeer(t, func(conn *net.UDPConn, from netip.AddrPort, b []byte) {
		if len(b) > 4 && b[4] == a2s.TypeInfoRequest {
			conn.WriteToUDPAddrPort(reply, from)
		}
	})
	c := &a2s.Client{Timeout: time.Hour, Deadline: 200 * time.Millisecond}
	defer c.Close()
	res, err := c.Query(testutil.Context(t), addr, a2s.AllSections)
	if res == nil || res.Info == nil || !errors.Is(err, a2s.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("result %+v, err %v", res, err)
	}
	if !errors.Is(res.PlayersErr, a2s.ErrTimeout) || !errors.Is(res.RulesErr, os.ErrDeadlineExceeded) {
		t.Errorf("players %v, rules %v", res.PlayersErr, res.RulesErr)
	}
}

func TestClientQueryFuncReportsEachSection(t *testing.T) {
	t.Parallel()
	// The server answers INFO, never PLAYER or RULES: INFO is reported
	// while the others still wait, and they are reported when they fail.
	reply, err := a2stest.DefaultInfo().AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	addr := newFakePeer(t, func(conn *net.UDPConn, from netip.AddrPort, b []byte) {
		if len(b) > 4 && b[4] == a2s.TypeInfoRequest {
			conn.WriteToUDPAddrPort(reply, from)
		}
	})
	c := &a2s.Client{Timeout: time.Hour, Deadline: 200 * time.Millisecond}
	defer c.Close()
	var calls []a2s.Sections
	res, err := c.QueryFunc(testutil.Context(t), addr, a2s.AllSections, func(ended a2s.Sections, r *a2s.Result) {
		calls = append(calls, ended)
		if ended&a2s.SectionInfo != 0 && r.Info == nil {
			t.Errorf("INFO reported without its answer")
		}
		if ended == a2s.SectionInfo && (r.PlayersErr != nil || r.RulesErr != nil) {
			t.Errorf("INFO reported after the others ended: %v, %v", r.PlayersErr, r.RulesErr)
		}
	})
	if res == nil || res.Info == nil || !errors.Is(err, a2s.ErrTimeout) {
		t.Fatalf("result %+v, err %v", res, err)
	}
	if len(calls) != 2 || calls[0] != a2s.SectionInfo || calls[1] != a2s.SectionPlayers|a2s.SectionRules {
		t.Errorf("reported %v, want INFO, then PLAYER and RULES", calls)
	}
}

func TestClientContextDeadlineGarbage(t *testing.T) {
	t.Parallel()
	// The context's deadline ends the query, not the client's: a server
	// that sent only garbage still fails with ErrNotA2S, not a timeout.
	addr := newFakePeer(t, func(conn *net.UDPConn, from netip.AddrPort, _ []byte) {
		conn.WriteToUDPAddrPort([]byte("HTTP/1.0 400 Bad Request\r\n\r\n"), from)
	})
	c := &a2s.Client{Timeout: time.Hour, Deadline: -1}
	defer c.Close()
	ctx, cancel := context.WithTimeout(testutil.Context(t), 100*time.Millisecond)
	defer cancel()
	res, err := c.Query(ctx, addr, a2s.AllSections)
	if !errors.Is(err, a2s.ErrNotA2S) || errors.Is(err, a2s.ErrTimeout) || !errors.Is(res.RulesErr, a2s.ErrNotA2S) {
		t.Fatalf("err = %v, rules %v; want ErrNotA2S", err, res.RulesErr)
	}
	// Without garbage it is a timeout that says the context ended it.
	silent := newFakePeer(t, nil)
	ctx, cancel = context.WithTimeout(testutil.Context(t), 50*time.Millisecond)
	defer cancel()
	if _, err := c.Query(ctx, silent, a2s.SectionInfo); !errors.Is(err, a2s.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("silent: %v", err)
	}
}

func TestClientSilentServerIsAskedInfoOnly(t *testing.T) {
	t.Parallel()
	// After INFO times out, PLAYER and RULES are not asked: a server that
	// does not answer one does not answer the others.
	addr := newFakePeer(t, nil)
	var log sendLog
	c := &a2s.Client{Timeout: 20 * time.Millisecond, Retries: 1, Debug: log.hook(t)}
	defer c.Close()
	res, err := c.Query(testutil.Context(t), addr, a2s.AllSections)
	if !errors.Is(err, a2s.ErrTimeout) || !errors.Is(res.RulesErr, a2s.ErrTimeout) {
		t.Fatalf("err %v, rules %v", err, res.RulesErr)
	}
	if got := log.take(); got != "T- T-" {
		t.Errorf("sent %q, want INFO and its retry", got)
	}
}

// bombDatagram is a bzip2-compressed split reply, one fragment, whose 56
// bytes inflate to 8 MiB; it announces 1 MiB, the reassembler's limit.
func bombDatagram(t *testing.T) []byte {
	t.Helper()
	bz, err := os.ReadFile("testdata/bomb.bin.bz2")
	if err != nil {
		t.Fatal(err)
	}
	f := a2s.Fragment{ID: 0x1234, Total: 1, Compressed: true, DecompressedSize: a2s.DefaultMaxDecompressed,
		Payload: bz, Format: a2s.SplitSourceNoSize}
	b, err := f.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestClientBombNeighbour(t *testing.T) {
	t.Parallel()
	// A hostile server answers every request with a flood of
	// decompression bombs, on the client a healthy server's queries share.
	// The bombs cost the hostile query's goroutine, which fails with the
	// decompression error at once; the healthy queries all succeed.
	bomb := bombDatagram(t)
	hostile := newFakePeer(t, func(conn *net.UDPConn, from netip.AddrPort, _ []byte) {
		for range 300 {
			conn.WriteToUDPAddrPort(bomb, from)
		}
	})
	srv, info, _, _ := newModernServer(t)
	c := &a2s.Client{Timeout: 2 * time.Second}
	defer c.Close()
	ctx := testutil.Context(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 3 {
			res, err := c.Query(ctx, hostile, a2s.AllSections)
			if !errors.Is(err, a2s.ErrDecompressedTooLarge) || errors.Is(err, a2s.ErrTimeout) {
				t.Errorf("hostile query: %v", err)
				return
			}
			if !errors.Is(res.RulesErr, a2s.ErrDecompressedTooLarge) {
				t.Errorf("hostile rules: %v", res.RulesErr)
			}
		}
	}()
	for i := 0; ; i++ {
		res, err := c.Info(ctx, srv.Addr())
		if err != nil {
			t.Fatalf("healthy query %d: %v", i, err)
		}
		checkInfo(t, res.Info, info)
		select {
		case <-done:
			if i == 0 {
				t.Log("the hostile queries ended before the first healthy one")
			}
			return
		default:
		}
	}
}

func TestClientLocalAddr(t *testing.T) {
	t.Parallel()
	// The client binds LocalAddr: the server sees its requests come from
	// there.
	seen := make(chan netip.AddrPort, 4)
	reply, err := a2stest.DefaultInfo().AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	addr := newFakePeer(t, func(conn *net.UDPConn, from netip.AddrPort, _ []byte) {
		seen <- from
		conn.WriteToUDPAddrPort(reply, from)
	})
	pc, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	local := pc.LocalAddr().(*net.UDPAddr).AddrPort()
	pc.Close() // a free port, for the client to bind
	c := &a2s.Client{LocalAddr: local, ReadBuffer: 1 << 16}
	defer c.Close()
	if _, err := c.Info(testutil.Context(t), addr); err != nil {
		t.Fatal(err)
	}
	if from := <-seen; from != local {
		t.Errorf("request from %v, want %v", from, local)
	}
}

func TestTextUTF8Latin1(t *testing.T) {
	t.Parallel()
	// Old GoldSource servers send Latin-1: 0xE9 is "é", as ogp and rcon
	// read it; valid UTF-8 stays as it is.
	for in, want := range map[string]string{"caf\xe9": "café", "café": "café", "\x01\xffx": "\x01ÿx"} {
		if got := a2s.Text(in).UTF8(); got != want {
			t.Errorf("Text(%q).UTF8() = %q, want %q", in, got, want)
		}
	}
}
