package rcon_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/gsq-project/gsq/rcon"
	"github.com/gsq-project/gsq/rcon/rcontest"
)

const testPassword = "s3cret-pw"

// sim is the handler of most server tests.
var sim = &rcontest.SimHandler{
	Hostname:   "test server",
	Map:        "cp_badlands",
	MaxPlayers: 8,
	Players:    []rcontest.SimPlayer{{Name: "Zoë", Score: 3, Duration: time.Minute}},
}

// serve starts s on a loopback port and returns its address.
func serve(t testing.TB, s *rcon.Server) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveOn(t, s, l)
	return l.Addr().String()
}

// serveOn serves l with s, giving s the test password and handler unless
// it has its own, and stops it when the test ends.
func serveOn(t testing.TB, s *rcon.Server, l net.Listener) {
	t.Helper()
	if s.Password == "" {
		s.Password = testPassword
	}
	if s.Handler == nil {
		s.Handler = sim
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(l) }()
	t.Cleanup(func() {
		s.Close()
		if err := <-served; !errors.Is(err, rcon.ErrServerClosed) {
			t.Errorf("Serve returned %v, want ErrServerClosed", err)
		}
	})
}

func dialRaw(t testing.TB, addr string) *rcontest.RawConn {
	t.Helper()
	c, err := rcontest.DialRaw(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func dialClient(t testing.TB, addr string, opts *rcon.Options) *rcon.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := rcon.Dial(ctx, addr, testPassword, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func exec(t testing.TB, c *rcon.Client, cmd string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := c.Exec(ctx, cmd)
	if err != nil {
		t.Fatalf("Exec(%.20q): %v", cmd, err)
	}
	return out
}

// readUntil reads packets until one has the given id and type, returning
// all of them.
func readAll(t testing.TB, c *rcontest.RawConn, n int) []rcon.Packet {
	t.Helper()
	var ps []rcon.Packet
	for range n {
		p, err := c.ReadPacket()
		if err != nil {
			t.Fatalf("after %d packets: %v", len(ps), err)
		}
		ps = append(ps, p)
	}
	return ps
}

func pkt(id int32, typ rcon.PacketType, body string) rcon.Packet {
	return rcon.Packet{ID: id, Type: typ, Body: []byte(body)}
}

func samePackets(t testing.TB, got, want []rcon.Packet) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d packets %v, want %d %v", len(got), got, len(want), want)
	}
	for i := range got {
		if got[i].ID != want[i].ID || got[i].Type != want[i].Type || string(got[i].Body) != string(want[i].Body) {
			t.Errorf("packet %d = {%d %v %q}, want {%d %v %q}", i,
				got[i].ID, got[i].Type, got[i].Body, want[i].ID, want[i].Type, want[i].Body)
		}
	}
}

// expectClosed checks that the server closes c without sending more.
func expectClosed(t testing.TB, c *rcontest.RawConn) {
	t.Helper()
	p, err := c.ReadPacket()
	if err == nil {
		t.Fatalf("got packet %+v, want the connection closed", p)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("connection still open: %v", err)
	}
}

var srcdsTail = string([]byte{0, 0, 0, 1, 0, 0, 0})

func TestServerRawConversations(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		dialect rcon.Dialect
		send    []rcon.Packet
		want    []rcon.Packet
	}{
		{"source login", rcon.DialectSource,
			[]rcon.Packet{pkt(7, rcon.TypeAuth, testPassword)},
			[]rcon.Packet{pkt(7, rcon.TypeResponseValue, ""), pkt(7, rcon.TypeAuthResponse, "")}},
		{"source wrong password then retry", rcon.DialectSource,
			[]rcon.Packet{pkt(7, rcon.TypeAuth, "nope"), pkt(8, rcon.TypeAuth, testPassword)},
			[]rcon.Packet{pkt(7, rcon.TypeResponseValue, ""), pkt(-1, rcon.TypeAuthResponse, ""),
				pkt(8, rcon.TypeResponseValue, ""), pkt(8, rcon.TypeAuthResponse, "")}},
		{"source password with trailing NUL garbage", rcon.DialectSource,
			[]rcon.Packet{pkt(1, rcon.TypeAuth, testPassword+"\x00junk")},
			[]rcon.Packet{pkt(1, rcon.TypeResponseValue, ""), pkt(1, rcon.TypeAuthResponse, "")}},
		{"source password prefix is wrong", rcon.DialectSource,
			[]rcon.Packet{pkt(1, rcon.TypeAuth, testPassword[:3])},
			[]rcon.Packet{pkt(1, rcon.TypeResponseValue, ""), pkt(-1, rcon.TypeAuthResponse, "")}},
		{"source command before login", rcon.DialectSource,
			[]rcon.Packet{pkt(3, rcon.TypeExecCommand, "echo hi"), pkt(4, rcon.TypeAuth, testPassword)},
			[]rcon.Packet{pkt(3, rcon.TypeResponseValue, ""),
				pkt(4, rcon.TypeResponseValue, ""), pkt(4, rcon.TypeAuthResponse, "")}},
		{"source command and probe", rcon.DialectSource,
			[]rcon.Packet{pkt(1, rcon.TypeAuth, testPassword), pkt(2, rcon.TypeExecCommand, "echo grüße"), pkt(3, rcon.TypeResponseValue, "")},
			[]rcon.Packet{pkt(1, rcon.TypeResponseValue, ""), pkt(1, rcon.TypeAuthResponse, ""),
				pkt(2, rcon.TypeResponseValue, "grüße\n"),
				pkt(3, rcon.TypeResponseValue, ""), pkt(3, rcon.TypeResponseValue, srcdsTail)}},
		{"source empty output", rcon.DialectSource,
			[]rcon.Packet{pkt(1, rcon.TypeAuth, testPassword), pkt(2, rcon.TypeExecCommand, "")},
			[]rcon.Packet{pkt(1, rcon.TypeResponseValue, ""), pkt(1, rcon.TypeAuthResponse, ""),
				pkt(2, rcon.TypeResponseValue, "")}},
		{"source unknown command", rcon.DialectSource,
			[]rcon.Packet{pkt(1, rcon.TypeAuth, testPassword), pkt(2, rcon.TypeExecCommand, "frob x")},
			[]rcon.Packet{pkt(1, rcon.TypeResponseValue, ""), pkt(1, rcon.TypeAuthResponse, ""),
				pkt(2, rcon.TypeResponseValue, "Unknown command \"frob\"\n")}},
		{"cs2 login has no empty packet", rcon.DialectCS2,
			[]rcon.Packet{pkt(5, rcon.TypeAuth, testPassword), pkt(6, rcon.TypeExecCommand, "say hi")},
			[]rcon.Packet{pkt(5, rcon.TypeAuthResponse, ""), pkt(6, rcon.TypeResponseValue, "Console: hi\n")}},
		{"minecraft wrong password keeps the connection", rcon.DialectMinecraft,
			[]rcon.Packet{pkt(5, rcon.TypeAuth, "x"), pkt(6, rcon.TypeAuth, testPassword)},
			[]rcon.Packet{pkt(-1, rcon.TypeAuthResponse, ""), pkt(6, rcon.TypeAuthResponse, "")}},
		{"minecraft anything before login", rcon.DialectMinecraft,
			[]rcon.Packet{pkt(5, rcon.TypeExecCommand, "echo"), pkt(6, rcon.TypeResponseValue, "")},
			[]rcon.Packet{pkt(-1, rcon.TypeAuthResponse, ""), pkt(-1, rcon.TypeAuthResponse, "")}},
		{"minecraft unknown requests in hex", rcon.DialectMinecraft,
			[]rcon.Packet{pkt(1, rcon.TypeAuth, testPassword), pkt(2, rcon.TypeResponseValue, ""), pkt(3, 100, "lol"), pkt(4, rcon.TypeExecCommand, "echo ok")},
			[]rcon.Packet{pkt(1, rcon.TypeAuthResponse, ""), pkt(2, rcon.TypeResponseValue, "Unknown request 0"),
				pkt(3, rcon.TypeResponseValue, "Unknown request 64"), pkt(4, rcon.TypeResponseValue, "ok\n")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := serve(t, &rcon.Server{Dialect: tt.dialect})
			c := dialRaw(t, addr)
			if err := c.Send(tt.send...); err != nil {
				t.Fatal(err)
			}
			samePackets(t, readAll(t, c, len(tt.want)), tt.want)
		})
	}
}

func TestServerClientPerDialect(t *testing.T) {
	t.Parallel()
	for _, d := range []rcon.Dialect{rcon.DialectSource, rcon.DialectCS2, rcon.DialectMinecraft} {
		t.Run(d.String(), func(t *testing.T) {
			addr := serve(t, &rcon.Server{Dialect: d})
			c := dialClient(t, addr, &rcon.Options{Dialect: d})
			for cmd, want := range map[string]string{
				"echo hello":      "hello\n",
				"say Grüße, 世界 😀": "Console: Grüße, 世界 😀\n",
				"players":         "Players (1/8):\nZoë 3 1m0s\n",
				"big 0":           "",
				"big 4086":        rcontest.BigOutput(4086),
				"big 4087":        rcontest.BigOutput(4087),
				"big 100000":      rcontest.BigOutput(100000),
				"big 1048576":     rcontest.BigOutput(1 << 20),
			} {
				if got := exec(t, c, cmd); got != want {
					t.Errorf("Exec(%q) = %d bytes %.40q..., want %d bytes %.40q...", cmd, len(got), got, len(want), want)
				}
			}
			if got := exec(t, c, "status"); !strings.Contains(got, "hostname: test server\n") || !strings.Contains(got, "map     : cp_badlands\n") {
				t.Errorf("status = %q", got)
			}
		})
	}
}

// bodies reads the answer to command id on a Source connection that sent
// a probe with id probe after it.
func bodies(t *testing.T, c *rcontest.RawConn, id, probe int32) [][]byte {
	t.Helper()
	var out [][]byte
	for {
		p, err := c.ReadPacket()
		if err != nil {
			t.Fatalf("after %d bodies: %v", len(out), err)
		}
		switch p.ID {
		case id:
			out = append(out, p.Body)
		case probe:
			tail, err := c.ReadPacket()
			if err != nil || string(tail.Body) != srcdsTail {
				t.Fatalf("probe tail = %+v, %v", tail, err)
			}
			return out
		default:
			t.Fatalf("unexpected packet id %d", p.ID)
		}
	}
}

func TestServerSplitsSourceOnUTF8Boundaries(t *testing.T) {
	t.Parallel()
	for _, split := range []int{0, 100, 4} {
		t.Run(fmt.Sprint("split", split), func(t *testing.T) {
			addr := serve(t, &rcon.Server{ResponseSplitSize: split})
			limit := split
			if limit == 0 {
				limit = rcon.DefaultSourceSplitSize
			}
			c := dialRaw(t, addr)
			if err := c.Login(1, testPassword); err != nil {
				t.Fatal(err)
			}
			for _, n := range []int{100_000, 1 << 20} {
				if split == 4 && n > 100_000 {
					continue // 250k packets: slow under -race
				}
				if err := c.Send(pkt(2, rcon.TypeExecCommand, fmt.Sprint("big ", n)), pkt(3, rcon.TypeResponseValue, "")); err != nil {
					t.Fatal(err)
				}
				var all []byte
				bs := bodies(t, c, 2, 3)
				for i, b := range bs {
					if len(b) > limit {
						t.Fatalf("body %d has %d bytes, limit %d", i, len(b), limit)
					}
					if !utf8.Valid(b) {
						t.Fatalf("body %d is cut inside a rune: ...%q", i, b[max(0, len(b)-4):])
					}
					if i < len(bs)-1 && len(b) < limit-utf8.UTFMax+1 {
						t.Fatalf("body %d has %d bytes, less than a full fragment", i, len(b))
					}
					all = append(all, b...)
				}
				if string(all) != rcontest.BigOutput(n) {
					t.Fatalf("reassembled %d bytes differ from BigOutput(%d)", len(all), n)
				}
			}
		})
	}
}

func TestServerSplitsMinecraftByUTF16Units(t *testing.T) {
	t.Parallel()
	addr := serve(t, &rcon.Server{Dialect: rcon.DialectMinecraft})
	c := dialRaw(t, addr)
	if err := c.Login(1, testPassword); err != nil {
		t.Fatal(err)
	}
	for id, n := range []int{100_000, 1 << 20} {
		if err := c.Send(pkt(int32(id+10), rcon.TypeExecCommand, fmt.Sprint("big ", n))); err != nil {
			t.Fatal(err)
		}
		var all []byte
		sawLarge := false
		for {
			p, err := c.ReadPacket()
			if err != nil {
				t.Fatal(err)
			}
			units := len(utf16.Encode([]rune(string(p.Body))))
			all = append(all, p.Body...)
			sawLarge = sawLarge || len(p.Body) > 4096
			if !utf8.Valid(p.Body) {
				t.Fatal("fragment cut inside a rune")
			}
			if units < rcon.MinecraftFragmentUnits {
				break // the short fragment ends the answer, as clients assume
			}
			if units > rcon.MinecraftFragmentUnits+1 {
				t.Fatalf("fragment of %d units", units)
			}
		}
		if string(all) != rcontest.BigOutput(n) {
			t.Fatalf("reassembled %d bytes differ from BigOutput(%d)", len(all), n)
		}
		if !sawLarge {
			t.Error("no fragment above 4096 bytes, but BigOutput has multi-byte runes")
		}
	}
}

func TestServerHostileSegmentation(t *testing.T) {
	t.Parallel()
	addr := serve(t, &rcon.Server{})
	c := dialRaw(t, addr)
	reqs := []rcon.Packet{
		pkt(1, rcon.TypeAuth, testPassword),
		pkt(2, rcon.TypeExecCommand, "echo one"),
		pkt(3, rcon.TypeExecCommand, "echo two"),
		pkt(4, rcon.TypeResponseValue, ""),
	}
	want := []rcon.Packet{
		pkt(1, rcon.TypeResponseValue, ""), pkt(1, rcon.TypeAuthResponse, ""),
		pkt(2, rcon.TypeResponseValue, "one\n"), pkt(3, rcon.TypeResponseValue, "two\n"),
		pkt(4, rcon.TypeResponseValue, ""), pkt(4, rcon.TypeResponseValue, srcdsTail),
	}
	for _, sizes := range [][]int{{1}, {2}, {3, 17}, {15, 1, 40}} {
		if err := c.SendPieces(sizes, reqs...); err != nil {
			t.Fatal(err)
		}
		samePackets(t, readAll(t, c, len(want)), want)
	}
	// All coalesced in one write.
	if err := c.Send(reqs...); err != nil {
		t.Fatal(err)
	}
	samePackets(t, readAll(t, c, len(want)), want)
}

func TestServerNoLockoutWhenDisabled(t *testing.T) {
	t.Parallel()
	addr := serve(t, &rcon.Server{MaxFailedLogins: -1})
	c := dialRaw(t, addr)
	for i := range 20 {
		if err := c.Login(int32(i), "bad"); !errors.Is(err, rcon.ErrAuthFailed) {
			t.Fatalf("attempt %d: %v", i, err)
		}
	}
	if err := c.Login(99, testPassword); err != nil {
		t.Fatal(err)
	}
}

func TestServerEmptyPasswordRefusesAll(t *testing.T) {
	t.Parallel()
	s := &rcon.Server{Handler: sim}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(l)
	defer s.Close()
	c := dialRaw(t, l.Addr().String())
	if err := c.Login(1, ""); !errors.Is(err, rcon.ErrAuthFailed) {
		t.Fatalf("empty password: %v", err)
	}
}

func TestServerPacketTooLarge(t *testing.T) {
	t.Parallel()
	var logged sync.Map
	addr := serve(t, &rcon.Server{
		MaxPacketSize: 100,
		Logf:          func(format string, args ...any) { logged.Store(fmt.Sprintf(format, args...), true) },
	})
	c := dialRaw(t, addr)
	if err := c.Login(1, testPassword); err != nil {
		t.Fatal(err)
	}
	// Declares 1 GiB; the server must close without reading it.
	if _, err := c.NetConn().Write([]byte{0, 0, 0, 0x40, 1, 0, 0, 0}); err != nil {
		t.Fatal(err)
	}
	expectClosed(t, c)
	c2 := dialRaw(t, addr)
	if err := c2.Login(1, testPassword); err != nil {
		t.Fatal(err)
	}
	if err := c2.Send(pkt(2, rcon.TypeExecCommand, strings.Repeat("x", 91))); err != nil {
		t.Fatal(err)
	}
	expectClosed(t, c2)
	found := false
	logged.Range(func(k, _ any) bool {
		found = found || strings.Contains(k.(string), "above limit")
		return true
	})
	if !found {
		t.Error("oversized packet not logged")
	}
}

func TestServerHandlerPanic(t *testing.T) {
	t.Parallel()
	addr := serve(t, &rcon.Server{Handler: rcon.HandlerFunc(func(_ context.Context, w rcon.ResponseWriter, cmd string) {
		if cmd == "panic" {
			panic("boom")
		}
		io.WriteString(w, "fine")
	})})
	c := dialRaw(t, addr)
	if err := c.Login(1, testPassword); err != nil {
		t.Fatal(err)
	}
	if err := c.Send(pkt(2, rcon.TypeExecCommand, "panic")); err != nil {
		t.Fatal(err)
	}
	expectClosed(t, c)
	cl := dialClient(t, addr, nil)
	if got := exec(t, cl, "ok"); got != "fine" {
		t.Fatalf("after a panic: %q", got)
	}
}

func TestServerShutdownWaitsForRunningCommand(t *testing.T) {
	t.Parallel()
	started, release := make(chan struct{}), make(chan struct{})
	s := &rcon.Server{Handler: rcon.HandlerFunc(func(_ context.Context, w rcon.ResponseWriter, cmd string) {
		if cmd == "slow" {
			close(started)
			<-release
		}
		io.WriteString(w, "done "+cmd)
	})}
	addr := serve(t, s)
	idle, busy := dialRaw(t, addr), dialRaw(t, addr)
	for _, c := range []*rcontest.RawConn{idle, busy} {
		if err := c.Login(1, testPassword); err != nil {
			t.Fatal(err)
		}
	}
	if err := busy.Send(pkt(2, rcon.TypeExecCommand, "slow")); err != nil {
		t.Fatal(err)
	}
	<-started
	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		shut <- s.Shutdown(ctx)
	}()
	expectClosed(t, idle) // idle connections go at once
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v while a command was running", err)
	default:
	}
	close(release)
	p, err := busy.ReadPacket()
	if err != nil || string(p.Body) != "done slow" {
		t.Fatalf("running command's answer: %+v, %v", p, err)
	}
	expectClosed(t, busy)
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if _, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		t.Error("listener still accepting after Shutdown")
	}
}

func TestServerPipelinedClient(t *testing.T) {
	t.Parallel()
	addr := serve(t, &rcon.Server{})
	c := dialClient(t, addr, &rcon.Options{Pipeline: true})
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				want := fmt.Sprintf("g%d-i%d", g, i)
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				got, err := c.Exec(ctx, "echo "+want)
				cancel()
				if err != nil || got != want+"\n" {
					errs <- fmt.Errorf("Exec(echo %s) = %q, %v", want, got, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestServerClientWrongPassword(t *testing.T) {
	t.Parallel()
	for _, d := range []rcon.Dialect{rcon.DialectSource, rcon.DialectMinecraft} {
		t.Run(d.String(), func(t *testing.T) {
			addr := serve(t, &rcon.Server{Dialect: d})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, err := rcon.Dial(ctx, addr, "not-it", &rcon.Options{Dialect: d})
			if !errors.Is(err, rcon.ErrAuthFailed) {
				t.Fatalf("Dial with a wrong password: %v, want ErrAuthFailed", err)
			}
		})
	}
}

func TestServerListenAndServeAfterClose(t *testing.T) {
	t.Parallel()
	s := &rcon.Server{Addr: "127.0.0.1:0"}
	s.Close()
	if err := s.ListenAndServe(); !errors.Is(err, rcon.ErrServerClosed) {
		t.Fatalf("ListenAndServe after Close = %v", err)
	}
}
