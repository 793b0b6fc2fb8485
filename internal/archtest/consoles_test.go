package archtest

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/gsq-project/gsq/battleye"
	"github.com/gsq-project/gsq/battleye/betest"
	"github.com/gsq-project/gsq/console"
	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/palworld"
	"github.com/gsq-project/gsq/palworld/palworldtest"
	"github.com/gsq-project/gsq/rcon/rcontest"
	"github.com/gsq-project/gsq/sdtd"
	"github.com/gsq-project/gsq/sdtd/sdtdtest"
	"github.com/gsq-project/gsq/webrcon"
	"github.com/gsq-project/gsq/webrcon/webrcontest"
)

// The conventions every console package keeps, checked on all of them at
// once: a silent server is the package's timeout (a net.Error matching
// os.ErrDeadlineExceeded and console.ErrTimeout, naming the package and
// the server); a wrong password is console.ErrAuthFailed; a Debug hook
// never sees the password.

// consoleWait is the consoles' Timeout here: long enough that a loaded
// machine connects to a loopback listener within it (60 ms was not, in a
// CI run at load 30), short enough that the silent server's timeout comes
// soon.
const consoleWait = 250 * time.Millisecond

// dialer dials one console package with the given password and options.
type dialer struct {
	pkg     string
	timeout error
	dial    func(ctx context.Context, addr, password string, debug func(string, netip.AddrPort, []byte)) (console.Session, error)
}

var consoles = []dialer{
	{"battleye", battleye.ErrTimeout, func(ctx context.Context, addr, pw string, debug func(string, netip.AddrPort, []byte)) (console.Session, error) {
		return battleye.Dial(ctx, addr, pw, &battleye.Options{Timeout: consoleWait, Debug: debug})
	}},
	{"webrcon", webrcon.ErrTimeout, func(ctx context.Context, addr, pw string, debug func(string, netip.AddrPort, []byte)) (console.Session, error) {
		return webrcon.Dial(ctx, addr, pw, &webrcon.Options{Timeout: consoleWait, Debug: debug})
	}},
	{"sdtd", sdtd.ErrTimeout, func(ctx context.Context, addr, pw string, debug func(string, netip.AddrPort, []byte)) (console.Session, error) {
		return sdtd.Dial(ctx, addr, pw, &sdtd.Options{Timeout: consoleWait, Debug: debug})
	}},
	{"palworld", palworld.ErrTimeout, func(ctx context.Context, addr, pw string, debug func(string, netip.AddrPort, []byte)) (console.Session, error) {
		return palworld.Dial(ctx, addr, pw, &palworld.Options{Timeout: consoleWait, Debug: debug})
	}},
}

func TestConsoleTimeoutsAreNetErrors(t *testing.T) {
	t.Parallel()
	udp := addrOf(silentUDP(t)).String()
	tcp := silentTCP(t)
	for _, d := range consoles {
		t.Run(d.pkg, func(t *testing.T) {
			t.Parallel()
			addr := tcp
			if d.pkg == "battleye" {
				addr = udp
			}
			_, err := d.dial(testutil.Context(t), addr, "pw", nil)
			checkTimeout(t, d.pkg, err, d.timeout, addr)
			if !errors.Is(err, console.ErrTimeout) {
				t.Errorf("%s: %v does not match console.ErrTimeout", d.pkg, err)
			}
		})
	}
}

// fakeConsoles starts each package's fake with the password "Pa55-w0rd!".
func fakeConsoles(t *testing.T) map[string]string {
	t.Helper()
	const pw = "Pa55-w0rd!"
	be := betest.NewServer(betest.DayZ, pw, nil)
	wr := webrcontest.NewServer(webrcontest.Rust, pw, nil)
	sd := sdtdtest.NewServer(pw, nil)
	pal := palworldtest.NewServer(pw, nil)
	t.Cleanup(func() { be.Close(); wr.Close(); sd.Close(); pal.Close() })
	return map[string]string{"battleye": be.Addr().String(), "webrcon": wr.Addr().String(), "sdtd": sd.Addr().String(), "palworld": pal.Addr().String()}
}

func TestConsoleWrongPasswordAndDebug(t *testing.T) {
	t.Parallel()
	addrs := fakeConsoles(t)
	for _, d := range consoles {
		t.Run(d.pkg, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			seen := 0
			debug := func(dir string, _ netip.AddrPort, b []byte) {
				mu.Lock()
				defer mu.Unlock()
				seen++
				for _, secret := range []string{"Pa55-w0rd!", "wrong-pw"} {
					if bytes.Contains(b, []byte(secret)) {
						t.Errorf("%s: Debug(%s) saw %q in %q", d.pkg, dir, secret, b)
					}
				}
			}
			s, err := d.dial(testutil.Context(t), addrs[d.pkg], "Pa55-w0rd!", debug)
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			_, err = d.dial(testutil.Context(t), addrs[d.pkg], "wrong-pw", debug)
			if !errors.Is(err, console.ErrAuthFailed) {
				t.Errorf("%s: wrong password: %v, want console.ErrAuthFailed", d.pkg, err)
			}
			mu.Lock()
			defer mu.Unlock()
			if seen < 2 {
				t.Errorf("%s: Debug saw %d messages", d.pkg, seen)
			}
		})
	}
}

// Each console can be told from what its port does, without a password
// (so without counting toward a lockout): WebRCON answers an HTTP GET
// with HTTP (or Rust's close frame), Palworld's REST API answers
// /v1/api/info with 401 or its JSON, 7DTD's console speaks first with its
// prompt; a BattlEye port answers a BattlEye login in its framing. A
// Source RCON server does none of those: this is how `gsq rcon` can say
// which protocol to use.
func TestConsolesTellThemselvesApart(t *testing.T) {
	t.Parallel()
	addrs := fakeConsoles(t)
	src := rcontest.NewServer(rcontest.SRCDS, "pw", &rcontest.SimHandler{})
	defer src.Close()
	probes := map[string]func(addr string) error{
		"webrcon": func(addr string) error {
			return webrcon.Probe(testutil.Context(t), addr, &webrcon.Options{Timeout: time.Second})
		},
		"sdtd": func(addr string) error {
			return sdtd.Probe(testutil.Context(t), addr, &sdtd.Options{Timeout: time.Second})
		},
		"palworld": func(addr string) error {
			return palworld.Probe(testutil.Context(t), addr, &palworld.Options{Timeout: time.Second})
		},
	}
	for pkg, probe := range probes {
		if err := probe(addrs[pkg]); err != nil {
			t.Errorf("%s.Probe of its own fake: %v", pkg, err)
		}
		if err := probe(src.Addr().String()); err == nil {
			t.Errorf("%s.Probe took a Source RCON server for its own", pkg)
		}
	}
	// Palworld's REST API is HTTP too: WebRCON's probe says "a web server
	// here"; palworld.Probe, which asks for /v1/api/info, tells them apart.
	if err := palworld.Probe(testutil.Context(t), addrs["webrcon"], nil); err == nil {
		t.Error("palworld.Probe took the WebRCON fake for Palworld")
	}
	if err := sdtd.Probe(testutil.Context(t), addrs["webrcon"], &sdtd.Options{Timeout: time.Second}); err == nil {
		t.Error("sdtd.Probe took the WebRCON fake for a telnet console")
	}
	uc, err := net.Dial("udp", addrs["battleye"])
	if err != nil {
		t.Fatal(err)
	}
	defer uc.Close()
	login, _ := battleye.Packet{Type: battleye.TypeLogin, Data: []byte("pw")}.AppendBinary(nil)
	uc.Write(login)
	uc.SetReadDeadline(time.Now().Add(2 * time.Second))
	b := make([]byte, 64)
	n, err := uc.Read(b)
	if err != nil || !battleye.Is(b[:n]) {
		t.Errorf("BattlEye port answered %q, %v", b[:n], err)
	}
}
