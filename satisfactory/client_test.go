package satisfactory_test

import (
	"errors"
	"net"
	"net/netip"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/satisfactory"
	"github.com/gsq-project/gsq/satisfactory/satisfactorytest"
)

// The client reads every profile of the fake: the state, the name as it
// was sent, and the errors a dead or foreign server earns.
func TestClientProfiles(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		profile string
		state   satisfactory.State
		name    string
		err     error
	}{
		{"playing", satisfactory.StatePlaying, "gsq Satisfactory server", nil},
		{"idle", satisfactory.StateIdle, "gsq Satisfactory server", nil},
		{"loading", satisfactory.StateLoading, "gsq Satisfactory server", nil},
		{"no-terminator", satisfactory.StatePlaying, "gsq Satisfactory server", nil},
		{"latin1", satisfactory.StatePlaying, "Fabrik Müller", nil},
		{"stray", satisfactory.StatePlaying, "gsq Satisfactory server", nil},
		{"lossy", satisfactory.StatePlaying, "gsq Satisfactory server", nil},
		{"version2", 0, "", satisfactory.ErrVersion},
		{"silent", 0, "", satisfactory.ErrTimeout},
	} {
		t.Run(tc.profile, func(t *testing.T) {
			t.Parallel()
			p, err := satisfactorytest.LookupProfile(tc.profile)
			if err != nil {
				t.Fatal(err)
			}
			srv := satisfactorytest.NewServer(p)
			defer srv.Close()
			c := &satisfactory.Client{Timeout: 300 * time.Millisecond, Retries: 1}
			defer c.Close()
			r, err := c.State(testutil.Context(t), srv.Addr())
			if tc.err != nil {
				if !errors.Is(err, tc.err) || r.State != nil {
					t.Fatalf("%v, want %v", err, tc.err)
				}
				return
			}
			if err != nil || r.State.State != tc.state || r.State.Name.UTF8() != tc.name || len(r.State.SubStates) != 4 || r.State.NetCL != 416835 {
				t.Fatalf("%v, %+v", err, r.State)
			}
			if tc.profile == "no-terminator" && !r.State.NoTerminator {
				t.Error("NoTerminator not set")
			}
		})
	}
	// A dead server is not polled for long: 1 + Retries polls.
	p, _ := satisfactorytest.LookupProfile("silent")
	srv := satisfactorytest.NewServer(p)
	defer srv.Close()
	var polls atomic.Int64
	c := &satisfactory.Client{Timeout: 50 * time.Millisecond, Debug: func(dir string, _ netip.AddrPort, _ []byte) {
		if dir == "send" {
			polls.Add(1)
		}
	}}
	defer c.Close()
	if _, err := c.State(testutil.Context(t), srv.Addr()); !errors.Is(err, satisfactory.ErrTimeout) {
		t.Fatal(err)
	}
	if got := polls.Load(); got != 1+satisfactory.DefaultRetries {
		t.Errorf("%d polls to a dead server, want %d", got, 1+satisfactory.DefaultRetries)
	}
}

// A closed port fails at once; a closed client fails its polls.
func TestClientErrors(t *testing.T) {
	t.Parallel()
	l, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.LocalAddr().(*net.UDPAddr).AddrPort()
	l.Close()
	c := &satisfactory.Client{Timeout: 5 * time.Second}
	if _, err := c.State(testutil.Context(t), addr); !errors.Is(err, satisfactory.ErrUnreachable) || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("closed port: %v", err)
	}
	c.Close()
	var oe *satisfactory.OpError
	if _, err := c.State(testutil.Context(t), addr); !errors.Is(err, satisfactory.ErrClientClosed) || !errors.As(err, &oe) || oe.Op != "state" {
		t.Errorf("closed client: %v", err)
	}
}
