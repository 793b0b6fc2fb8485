package archtest

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
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
	"github.com/gsq-project/gsq/rcon"
	"github.com/gsq-project/gsq/rcon/rcontest"
	"github.com/gsq-project/gsq/result"
	"github.com/gsq-project/gsq/scan"
)

// The conventions of docs/conventions.md that hold across a2s, ogp, rcon
// and scan, each checked on all of them at once, so that one package
// drifting from the others fails here.

// short is the wait of one attempt against a silent server.
const short = 20 * time.Millisecond

// a2sInfo asks A2S servers for their info.
var a2sInfo = protocol.A2S.MustPrepare(protocol.Settings{Sections: []result.Section{result.SectionInfo}})

// silentUDP is a loopback UDP socket that never answers; it stays open
// until the test ends, so no ICMP port unreachable comes back.
func silentUDP(t *testing.T) *net.UDPConn {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func addrOf(c *net.UDPConn) netip.AddrPort { return c.LocalAddr().(*net.UDPAddr).AddrPort() }

// silentTCP is a loopback listener whose connections are accepted and
// never answered.
func silentTCP(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}

// scanOne scans one target with s and returns its result.
func scanOne(t *testing.T, s *scan.Scanner, addr netip.AddrPort) *scan.Outcome {
	t.Helper()
	var got []*scan.Outcome
	if _, err := s.Run(testutil.Context(t), slices.Values([]scan.Target{{Input: addr.String(), Addr: addr}}), func(r *scan.Outcome) {
		got = append(got, r)
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("scan emitted %d results, want 1", len(got))
	}
	return got[0]
}

// checkTimeout checks the timeout convention on err, which a call to the
// server at addr of package pkg returned.
func checkTimeout(t *testing.T, pkg string, err, sentinel error, addr string) {
	t.Helper()
	var ne net.Error
	switch {
	case err == nil:
		t.Errorf("%s: no error from a silent server", pkg)
	case !errors.As(err, &ne) || !ne.Timeout():
		t.Errorf("%s: %v (%T) is not a net.Error whose Timeout() is true", pkg, err, err)
	case !errors.Is(err, os.ErrDeadlineExceeded):
		t.Errorf("%s: %v does not match os.ErrDeadlineExceeded", pkg, err)
	case sentinel != nil && !errors.Is(err, sentinel):
		t.Errorf("%s: %v does not match %s.ErrTimeout", pkg, err, pkg)
	case !strings.HasPrefix(err.Error(), pkg+": ") || strings.Count(err.Error(), pkg+": ") != 1:
		t.Errorf("%s: message %q does not start with %q once", pkg, err, pkg+": ")
	case !strings.Contains(err.Error(), addr):
		t.Errorf("%s: message %q does not name the server %s", pkg, err, addr)
	}
}

// Every package's timeout is a net.Error with Timeout() true that matches
// os.ErrDeadlineExceeded and the package's ErrTimeout, and names the
// package and the server; when a context's deadline ended the wait, it
// matches context.DeadlineExceeded too.
func TestTimeoutIsNetError(t *testing.T) {
	t.Parallel()
	udp := addrOf(silentUDP(t))
	tcp := silentTCP(t)
	withDeadline := func() context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), 3*short)
		t.Cleanup(cancel)
		return ctx
	}
	t.Run("a2s", func(t *testing.T) {
		t.Parallel()
		c := &a2s.Client{Timeout: short, Retries: -1}
		defer c.Close()
		_, err := c.Info(testutil.Context(t), udp)
		checkTimeout(t, "a2s", err, a2s.ErrTimeout, udp.String())
		c2 := &a2s.Client{Timeout: time.Minute, Deadline: -1}
		defer c2.Close()
		_, err = c2.Info(withDeadline(), udp)
		checkTimeout(t, "a2s", err, a2s.ErrTimeout, udp.String())
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("a2s: %v, ended by a context's deadline, does not match context.DeadlineExceeded", err)
		}
	})
	t.Run("ogp", func(t *testing.T) {
		t.Parallel()
		c := &ogp.Client{Timeout: short, Retries: -1}
		defer c.Close()
		_, err := c.Ping(testutil.Context(t), udp)
		checkTimeout(t, "ogp", err, ogp.ErrTimeout, udp.String())
		c2 := &ogp.Client{Timeout: time.Minute}
		defer c2.Close()
		_, err = c2.Ping(withDeadline(), udp)
		checkTimeout(t, "ogp", err, ogp.ErrTimeout, udp.String())
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("ogp: %v, ended by a context's deadline, does not match context.DeadlineExceeded", err)
		}
	})
	t.Run("rcon", func(t *testing.T) {
		t.Parallel()
		_, err := rcon.Dial(testutil.Context(t), tcp, "pw", &rcon.Options{Timeout: short})
		checkTimeout(t, "rcon", err, rcon.ErrTimeout, tcp)
		// Options.Timeout bounds the login, though the context allows more.
		if err != nil && !strings.Contains(err.Error(), "within "+short.String()) {
			t.Errorf("rcon: %v: the login was not bounded by Options.Timeout (%v)", err, short)
		}
		_, err = rcon.Dial(withDeadline(), tcp, "pw", &rcon.Options{Timeout: time.Minute})
		checkTimeout(t, "rcon", err, rcon.ErrTimeout, tcp)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("rcon: %v, ended by a context's deadline, does not match context.DeadlineExceeded", err)
		}
	})
	t.Run("scan", func(t *testing.T) {
		t.Parallel()
		s := &scan.Scanner{Query: a2sInfo, Retries: -1, Timeout: short, MinTimeout: short, Deadline: -1}
		r := scanOne(t, s, udp)
		if r.Status != scan.StatusTimedOut || r.Result.Err == nil || r.Result.Err.Kind != result.KindTimeout {
			t.Fatalf("scan of a silent server: status %v, error %+v; want a timeout", r.Status, r.Result.Err)
		}
		// The scan's error is the a2s conversation's.
		checkTimeout(t, "a2s", r.Result.Err, a2s.ErrTimeout, udp.String())
	})
}

// received counts the datagrams waiting on c, the sends of a call that
// has returned.
func received(t *testing.T, c *net.UDPConn) int {
	t.Helper()
	n := 0
	buf := make([]byte, 2048)
	for {
		// The sends are on the socket already; the wait only ends the loop.
		if err := c.SetReadDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.ReadFromUDPAddrPort(buf); err != nil {
			return n
		}
		n++
	}
}

// Retries means the same in every package: how many times an unanswered
// request is sent again, zero the package's default, negative none.
func TestRetriesAgree(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pkg      string
		def      int
		exchange func(ctx context.Context, retries int, addr netip.AddrPort)
	}{
		{"a2s", a2s.DefaultRetries, func(ctx context.Context, retries int, addr netip.AddrPort) {
			c := &a2s.Client{Timeout: short, Retries: retries}
			defer c.Close()
			_, _ = c.Info(ctx, addr)
		}},
		{"ogp", ogp.DefaultRetries, func(ctx context.Context, retries int, addr netip.AddrPort) {
			c := &ogp.Client{Timeout: short, Retries: retries}
			defer c.Close()
			_, _ = c.Ping(ctx, addr)
		}},
		{"scan", scan.DefaultRetries, func(ctx context.Context, retries int, addr netip.AddrPort) {
			s := &scan.Scanner{Query: a2sInfo, Retries: retries, Timeout: short, MinTimeout: short, Deadline: -1}
			_, _ = s.Run(ctx, slices.Values([]scan.Target{{Addr: addr}}), func(*scan.Outcome) {})
		}},
	} {
		t.Run(tc.pkg, func(t *testing.T) {
			t.Parallel()
			for _, retries := range []int{-1, 1, 0} {
				srv := silentUDP(t)
				tc.exchange(testutil.Context(t), retries, addrOf(srv))
				want := 1 + retries
				switch {
				case retries == 0:
					want = 1 + tc.def
				case retries < 0:
					want = 1
				}
				if got := received(t, srv); got != want {
					t.Errorf("Retries %d: %d datagrams sent, want %d", retries, got, want)
				}
			}
		})
	}
}

// No Debug hook ever sees the RCON password: on every game profile, a
// login with the right password and one with a wrong one show the login
// packet with the password masked.
func TestDebugNeverSeesPassword(t *testing.T) {
	t.Parallel()
	const password = "Pa55-w0rd!"
	known := rcon.ProfileNames()
	for _, p := range rcontest.Profiles() {
		t.Run(p.String(), func(t *testing.T) {
			t.Parallel()
			srv := rcontest.NewServer(p, password, &rcontest.SimHandler{})
			defer srv.Close()
			var mu sync.Mutex
			seen := 0
			opts := &rcon.Options{Debug: func(dir string, _ netip.AddrPort, b []byte) {
				mu.Lock()
				defer mu.Unlock()
				seen++
				for _, secret := range []string{password, "Pa55", "wrong-pw"} {
					if bytes.Contains(b, []byte(secret)) {
						t.Errorf("Debug(%s) saw %q in %q", dir, secret, b)
					}
				}
			}}
			if slices.Contains(known, p.String()) {
				opts.Profile = p.String()
			}
			c, err := rcon.Dial(testutil.Context(t), srv.Addr().String(), password, opts)
			if err != nil {
				t.Fatal(err)
			}
			c.Close()
			// ARK never answers a wrong password: the login's Timeout ends it.
			wrong := *opts
			wrong.Timeout = 300 * time.Millisecond
			_, _ = rcon.Dial(testutil.Context(t), srv.Addr().String(), "wrong-pw", &wrong)
			mu.Lock()
			defer mu.Unlock()
			if seen < 2 {
				t.Fatalf("Debug saw %d packets; the logins went unseen", seen)
			}
		})
	}
}

// Every server reports the address it is bound to, once it serves, and
// the fake servers their port.
func TestServersReportBoundAddress(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, got, want net.Addr) {
		t.Helper()
		if got == nil || got.String() != want.String() {
			t.Errorf("LocalAddr() = %v, want %v", got, want)
		}
	}
	t.Run("a2s", func(t *testing.T) {
		t.Parallel()
		pc := silentUDP(t)
		s := &a2s.Server{Handler: a2s.HandlerFunc(func(w a2s.ResponseWriter, r *a2s.Request) {}), NoChallenge: true}
		served := make(chan error, 1)
		go func() { served <- s.Serve(pc) }()
		c := &a2s.Client{}
		defer c.Close()
		_, _ = c.Ping(testutil.Context(t), addrOf(pc)) // Serve has started once a request was read
		check(t, s.LocalAddr(), pc.LocalAddr())
		_ = s.Shutdown(testutil.Context(t))
		<-served
	})
	t.Run("ogp", func(t *testing.T) {
		t.Parallel()
		pc := silentUDP(t)
		s := &ogp.Server{Handler: ogp.HandlerFunc(func(netip.AddrPort, *ogp.Query) (*ogp.Answer, error) { return &ogp.Answer{}, nil })}
		served := make(chan error, 1)
		go func() { served <- s.Serve(pc) }()
		c := &ogp.Client{}
		defer c.Close()
		if _, err := c.Ping(testutil.Context(t), addrOf(pc)); err != nil {
			t.Fatal(err)
		}
		check(t, s.LocalAddr(), pc.LocalAddr())
		_ = s.Shutdown(testutil.Context(t))
		<-served
	})
	t.Run("rcon", func(t *testing.T) {
		t.Parallel()
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		s := &rcon.Server{Password: "pw", Handler: &rcontest.SimHandler{}}
		served := make(chan error, 1)
		go func() { served <- s.Serve(l) }()
		c, err := rcon.Dial(testutil.Context(t), l.Addr().String(), "pw", nil)
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
		check(t, s.LocalAddr(), l.Addr())
		_ = s.Shutdown(testutil.Context(t))
		<-served
	})
	t.Run("fakes", func(t *testing.T) {
		t.Parallel()
		a := a2stest.NewServer(a2stest.Profile{})
		defer a.Close()
		o := ogptest.NewServer(ogptest.Profiles()[0])
		defer o.Close()
		r := rcontest.NewServer(rcontest.SRCDS, "pw", &rcontest.SimHandler{})
		defer r.Close()
		for name, addr := range map[string]netip.AddrPort{"a2stest": a.Addr(), "ogptest": o.Addr(), "rcontest": r.Addr()} {
			if !addr.Addr().IsLoopback() || addr.Port() == 0 {
				t.Errorf("%s: Addr() = %v, want a loopback address with its port", name, addr)
			}
		}
	})
}
