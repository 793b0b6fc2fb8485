package archtest

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/fivem"
	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/master"
	"github.com/gsq-project/gsq/satisfactory"
	"github.com/gsq-project/gsq/serverlist"
	"github.com/gsq-project/gsq/steamapi"
)

// The conventions of docs/conventions.md on the discovery packages and
// the protocols of the catalogue (master, steamapi, satisfactory,
// fivem), checked as the others' are: a silent server is a timeout that
// is a net.Error naming the package and the server, Retries means the
// same, and servers report their bound address.

// hangingHTTP is a loopback HTTP server whose handlers never answer
// until the test ends.
func hangingHTTP(t *testing.T) netip.AddrPort {
	t.Helper()
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	t.Cleanup(func() {
		close(stop)
		srv.Close()
	})
	return netip.MustParseAddrPort(strings.TrimPrefix(srv.URL, "http://"))
}

func TestDiscoveryTimeoutIsNetError(t *testing.T) {
	t.Parallel()
	udp := addrOf(silentUDP(t))
	web := hangingHTTP(t)
	t.Run("master", func(t *testing.T) {
		t.Parallel()
		c := &master.Client{Timeout: short, Retries: -1}
		defer c.Close()
		_, err := c.List(testutil.Context(t), udp, master.Query{}, nil)
		checkTimeout(t, "master", err, master.ErrTimeout, udp.String())
	})
	t.Run("satisfactory", func(t *testing.T) {
		t.Parallel()
		c := &satisfactory.Client{Timeout: short, Retries: -1}
		defer c.Close()
		_, err := c.State(testutil.Context(t), udp)
		checkTimeout(t, "satisfactory", err, satisfactory.ErrTimeout, udp.String())
		ctx, cancel := context.WithTimeout(testutil.Context(t), 3*short)
		defer cancel()
		_, err = (&satisfactory.Client{Timeout: time.Minute, Deadline: -1}).State(ctx, udp)
		checkTimeout(t, "satisfactory", err, satisfactory.ErrTimeout, udp.String())
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("satisfactory: %v, ended by a context's deadline, does not match context.DeadlineExceeded", err)
		}
	})
	t.Run("fivem", func(t *testing.T) {
		t.Parallel()
		_, err := (&fivem.Client{Timeout: short}).Info(testutil.Context(t), web)
		checkTimeout(t, "fivem", err, fivem.ErrTimeout, web.String())
	})
	t.Run("steamapi", func(t *testing.T) {
		t.Parallel()
		c := &steamapi.Client{Key: "k", BaseURL: "http://" + web.String(), Timeout: short, MinInterval: -1}
		_, err := c.GetServerList(testutil.Context(t), "", 0, func(*serverlist.Server) bool { return true })
		checkTimeout(t, "steamapi", err, steamapi.ErrTimeout, web.String())
	})
}

func TestDiscoveryRetriesAgree(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pkg      string
		def      int
		exchange func(ctx context.Context, retries int, addr netip.AddrPort)
	}{
		{"master", master.DefaultRetries, func(ctx context.Context, retries int, addr netip.AddrPort) {
			c := &master.Client{Timeout: short, Retries: retries}
			defer c.Close()
			_, _ = c.List(ctx, addr, master.Query{}, nil)
		}},
		{"satisfactory", satisfactory.DefaultRetries, func(ctx context.Context, retries int, addr netip.AddrPort) {
			c := &satisfactory.Client{Timeout: short, Retries: retries}
			defer c.Close()
			_, _ = c.State(ctx, addr)
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

// boundCase is a UDP server of the discovery packages, and a client's
// call to it.
type boundCase struct {
	name  string
	serve func(pc net.PacketConn) error
	addr  func() net.Addr
	stop  func(ctx context.Context) error
	ask   func(ctx context.Context, addr netip.AddrPort) error
	err   error // what Serve returns after stop
}

func TestDiscoveryServersReportBoundAddress(t *testing.T) {
	t.Parallel()
	ms := &master.Server{Handler: master.FleetHandler(serverlist.NewFleet(nil))}
	ss := &satisfactory.Server{Handler: satisfactory.HandlerFunc(func(netip.AddrPort) *satisfactory.ServerState { return &satisfactory.ServerState{} })}
	for _, tc := range []boundCase{
		{"master", ms.Serve, ms.LocalAddr, ms.Shutdown, func(ctx context.Context, addr netip.AddrPort) error {
			c := &master.Client{}
			defer c.Close()
			_, err := c.List(ctx, addr, master.Query{}, nil)
			return err
		}, master.ErrServerClosed},
		{"satisfactory", ss.Serve, ss.LocalAddr, ss.Shutdown, func(ctx context.Context, addr netip.AddrPort) error {
			c := &satisfactory.Client{}
			defer c.Close()
			_, err := c.State(ctx, addr)
			return err
		}, satisfactory.ErrServerClosed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pc := silentUDP(t)
			served := make(chan error, 1)
			go func() { served <- tc.serve(pc) }()
			if err := tc.ask(testutil.Context(t), addrOf(pc)); err != nil { // Serve has started once a request was read
				t.Fatal(err)
			}
			if got := tc.addr(); got == nil || got.String() != pc.LocalAddr().String() {
				t.Errorf("LocalAddr() = %v, want %v", got, pc.LocalAddr())
			}
			_ = tc.stop(testutil.Context(t))
			if err := <-served; !errors.Is(err, tc.err) {
				t.Errorf("Serve: %v, want %v", err, tc.err)
			}
		})
	}
}
