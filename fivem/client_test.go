package fivem_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gsq-project/gsq/fivem"
	"github.com/gsq-project/gsq/fivem/fivemtest"
	"github.com/gsq-project/gsq/internal/testutil"
)

func fake(t *testing.T, name string) *fivemtest.Server {
	t.Helper()
	p, err := fivemtest.LookupProfile(name)
	if err != nil {
		t.Fatal(err)
	}
	s := fivemtest.NewServer(p)
	t.Cleanup(s.Close)
	return s
}

// The client reads FXServer's and RedM's three endpoints, and numbers
// written as strings.
func TestClientReads(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		profile string
		game    string
		players int
	}{{"fxserver", "gta5", 3}, {"redm", "rdr3", 0}, {"strings", "gta5", 2}} {
		srv := fake(t, tc.profile)
		c := &fivem.Client{}
		r := c.Query(testutil.Context(t), srv.Addr(), true, true, true)
		if r.InfoErr != nil || r.PlayersErr != nil || r.DynamicErr != nil || !r.Answered() || r.RTT <= 0 {
			t.Fatalf("%s: %+v", tc.profile, r)
		}
		if r.Info.Game() != tc.game || r.Info.MaxClients() != 48 || r.Info.Version != 1234567 || len(r.Players) != tc.players ||
			r.Dynamic.Clients != tc.players || r.Dynamic.Hostname != fivemtest.Hostname || r.Info.ProjectName() != fivemtest.Hostname {
			t.Errorf("%s: info %+v, %d players, dynamic %+v", tc.profile, r.Info, len(r.Players), r.Dynamic)
		}
		if tc.players > 0 && (r.Players[0].Name != "player 1" || r.Players[0].Ping != 20 || len(r.Players[0].Identifiers) != 1) {
			t.Errorf("%s: player %+v", tc.profile, r.Players[0])
		}
	}
}

// A server that disabled /players.json answers the rest: players fail
// with ErrNotAvailable, which is no broken server.
func TestPlayersDisabled(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"players-disabled", "players-forbidden"} {
		srv := fake(t, name)
		c := &fivem.Client{}
		r := c.Query(testutil.Context(t), srv.Addr(), true, true, true)
		var se *fivem.StatusError
		if r.InfoErr != nil || r.DynamicErr != nil || !errors.Is(r.PlayersErr, fivem.ErrNotAvailable) || !errors.As(r.PlayersErr, &se) || r.Players != nil {
			t.Errorf("%s: %+v", name, r)
		}
		if !strings.Contains(r.PlayersErr.Error(), "disabled") {
			t.Errorf("%s: %q does not say the server disabled it", name, r.PlayersErr)
		}
	}
}

// The hostile servers: an endless body is cut at MaxBodySize; a trickle
// and a silent server end at Timeout with ErrTimeout; JSON of the wrong
// shape and an HTML page are not FiveM; a closed port is an error at
// once; a canceled context ends the call.
func TestHostile(t *testing.T) {
	t.Parallel()
	endless := fake(t, "endless")
	c := &fivem.Client{MaxBodySize: 256 << 10}
	if _, err := c.Info(testutil.Context(t), endless.Addr()); !errors.Is(err, fivem.ErrResponseTooLarge) {
		t.Errorf("endless: %v", err)
	}
	if endless.Written() > 64<<20 {
		t.Errorf("the endless fake wrote %d bytes before the client hung up", endless.Written())
	}
	for _, name := range []string{"trickle", "hang"} {
		srv := fake(t, name)
		c := &fivem.Client{Timeout: 150 * time.Millisecond}
		_, err := c.Info(testutil.Context(t), srv.Addr())
		var ne net.Error
		if !errors.Is(err, fivem.ErrTimeout) || !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, name := range []string{"wrong-shape", "html"} {
		srv := fake(t, name)
		_, err := (&fivem.Client{}).Info(testutil.Context(t), srv.Addr())
		var pe *fivem.ParseError
		if !errors.Is(err, fivem.ErrNotFiveM) || !errors.As(err, &pe) {
			t.Errorf("%s: %v", name, err)
		}
		var oe *fivem.OpError
		if !errors.As(err, &oe) || oe.Op != "info" || oe.Addr != srv.Addr().String() {
			t.Errorf("%s: not an *OpError naming the endpoint and the server: %#v", name, err)
		}
	}
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := l.Addr().(*net.TCPAddr).AddrPort()
	l.Close()
	if _, err := (&fivem.Client{}).Dynamic(testutil.Context(t), closed); err == nil || errors.Is(err, fivem.ErrTimeout) {
		t.Errorf("closed port: %v", err)
	}
	ctx, cancel := context.WithCancel(testutil.Context(t))
	cancel()
	if _, err := (&fivem.Client{}).Players(ctx, fake(t, "fxserver").Addr()); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}
	// Not FiveM at all: a 404 at /info.json; a 500 is the server's
	// error.
	for code, want := range map[int]error{404: fivem.ErrNotFiveM, 500: fivem.ErrServer, 302: fivem.ErrStatus} {
		web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if code == 302 {
				http.Redirect(w, r, "http://192.0.2.1/", code)
				return
			}
			http.Error(w, "no", code)
		}))
		addr := netip.MustParseAddrPort(strings.TrimPrefix(web.URL, "http://"))
		_, err := (&fivem.Client{}).Info(testutil.Context(t), addr)
		web.Close()
		var se *fivem.StatusError
		if !errors.Is(err, want) || !errors.As(err, &se) || se.Code != code {
			t.Errorf("HTTP %d: %v, want %v", code, err, want)
		}
	}
}

// Debug sees each request line and body.
func TestDebug(t *testing.T) {
	t.Parallel()
	srv := fake(t, "fxserver")
	var mu sync.Mutex
	var seen []string
	c := &fivem.Client{Debug: func(dir string, peer netip.AddrPort, b []byte) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, dir+" "+peer.String()+" "+string(b[:min(len(b), 20)]))
	}}
	if _, err := c.Dynamic(testutil.Context(t), srv.Addr()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || !strings.HasPrefix(seen[0], "send "+srv.Addr().String()+" GET /dynamic.json") || !strings.HasPrefix(seen[1], "recv ") {
		t.Errorf("Debug saw %q", seen)
	}
}
