package web

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/testutil"
)

func TestConnCapFor(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		want  int
		limit uint64
		cap   int
	}{
		{1024, 0, 1024},          // unknown limit
		{1024, 1 << 20, 1024},    // plenty
		{1024, ^uint64(0), 1024}, // unlimited
		{1024, 1024, 768},        // 256 left to the rest
		{1024, 100, 50},          // half left to the rest
		{10, 1, 1},               // never 0
		{5000, 4096 + 256, 4096}, // a raised cap within the limit
		{5000, 4096 + 255, 4095}, // and just beyond it
		{DefaultMaxConns, 20000, DefaultMaxConns},
	} {
		if got := connCapFor(c.want, c.limit); got != c.cap {
			t.Errorf("connCapFor(%d, %d) = %d, want %d", c.want, c.limit, got, c.cap)
		}
	}
}

// limitedServer serves a handler with opts on a real loopback listener
// through NewServer, as gsq monitor does.
func limitedServer(t *testing.T, opts Options) (string, *Handler) {
	t.Helper()
	st, live, _ := apiFixture(t)
	h := New(st, live, opts)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := NewServer("", h)
	go hs.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		hs.Shutdown(ctx)
		hs.Close()
	})
	return ln.Addr().String(), h
}

// dialFrom connects to addr from the loopback address ip.
func dialFrom(t *testing.T, ip, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: testutil.Bound}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Skipf("cannot connect from %s (only Linux routes all of 127/8 to loopback): %v", ip, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// clientFrom is an HTTP client whose connections come from ip.
func clientFrom(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{Timeout: testutil.Bound, Transport: &http.Transport{DialContext: d.DialContext}}
}

// idleKeepAlive opens a connection from ip, sends one keep-alive request
// and reads its answer, leaving the connection open and idle, as the
// attacker did. It reports whether the request was answered 200; a
// connection closed to make room for a later one may not be.
func idleKeepAlive(t *testing.T, ip, addr string) (net.Conn, bool) {
	c := dialFrom(t, ip, addr)
	c.SetDeadline(time.Now().Add(testutil.Bound))
	fmt.Fprintf(c, "GET /api/v1/servers HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return c, false
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return c, resp.StatusCode == 200
}

// stillOpen counts the connections the server has not closed: a read
// returns at once what the server closed (its FIN is queued on
// loopback), and times out on an open connection.
func stillOpen(conns []net.Conn) int {
	n := 0
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		if _, err := c.Read(make([]byte, 1)); errors.Is(err, os.ErrDeadlineExceeded) {
			n++
		}
	}
	return n
}

// adminCanWork fetches the page, the API and /metrics from ip, and
// returns the metrics.
func adminCanWork(t *testing.T, ip, addr string) string {
	t.Helper()
	admin := clientFrom(ip)
	defer admin.CloseIdleConnections()
	var metrics string
	for _, path := range []string{"/", "/api/v1/servers", "/metrics"} {
		resp, err := admin.Get("http://" + addr + path)
		if err != nil {
			t.Fatalf("the admin's GET %s: %v", path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("the admin's GET %s: %d %s", path, resp.StatusCode, body)
		}
		metrics = string(body)
	}
	return metrics
}

// TestIdleKeepAliveConnectionsFromTwoAddresses re-runs the attack of
// issue 19 (attacker row 1) at a small scale: many keep-alive
// connections from two addresses, each sending one request and then
// holding the connection open. Each source keeps at most its cap, the
// oldest idle connections making room, and an admin from a third
// address gets the page, the API and /metrics.
func TestIdleKeepAliveConnectionsFromTwoAddresses(t *testing.T) {
	t.Parallel()
	const perSource, attempts = 8, 150
	addr, h := limitedServer(t, Options{MaxConns: 64, MaxConnsPerSource: perSource})
	answered := 0
	var conns []net.Conn
	for range attempts {
		for _, ip := range []string{"127.0.0.1", "127.0.0.2"} {
			c, ok := idleKeepAlive(t, ip, addr)
			if ok {
				answered++
			}
			conns = append(conns, c)
		}
	}
	if n := h.conns.open(); n > 2*perSource {
		t.Fatalf("%d connections counted open, over 2 sources × %d", n, perSource)
	}
	if n := stillOpen(conns); n > 2*perSource {
		t.Fatalf("the server holds %d connections, over 2 sources × %d", n, perSource)
	}
	if answered < attempts {
		t.Errorf("only %d of %d attacking requests answered: a new connection should close an idle one, not be refused", answered, 2*attempts)
	}
	fams := parseExposition(t, adminCanWork(t, "127.0.0.3", addr))
	evicted, _ := sample(fams, "gsq_http_connections_evicted_total", nil)
	refused, _ := sample(fams, "gsq_http_connections_refused_total", map[string]string{"reason": "source"})
	// Every connection beyond a source's first perSource either closed an
	// idle one of that source or was refused.
	if evicted == 0 || evicted+refused != 2*(attempts-perSource) {
		t.Errorf("evicted %v + refused %v, want %d in all, most evicted", evicted, refused, 2*(attempts-perSource))
	}
	mustSample(t, fams, "gsq_http_connections_limit", map[string]string{"scope": "source"}, perSource)
	mustSample(t, fams, "gsq_http_connections_limit", map[string]string{"scope": "total"}, 64)
	mustSample(t, fams, "gsq_http_connections_refused_total", map[string]string{"reason": "total"}, 0)
}

// TestIdleKeepAliveConnectionsFromManyAddresses fills the overall cap
// with idle connections from several sources: an admin's two
// connections, opened first and so the longest idle, stay open, since
// room is made at the source holding the most (six sources share the 22
// other places, so the most is at least 4); and the admin's new
// connections make room for themselves.
func TestIdleKeepAliveConnectionsFromManyAddresses(t *testing.T) {
	t.Parallel()
	const total = 24
	addr, h := limitedServer(t, Options{MaxConns: total, MaxConnsPerSource: 8})
	var admin []net.Conn
	for range 2 {
		c, ok := idleKeepAlive(t, "127.0.0.3", addr)
		if !ok {
			t.Fatal("the admin's first requests failed")
		}
		admin = append(admin, c)
	}
	var conns []net.Conn
	for i := range 3 * total {
		c, _ := idleKeepAlive(t, fmt.Sprintf("127.0.1.%d", 1+i/12), addr)
		conns = append(conns, c)
	}
	if n := h.conns.open(); n > total {
		t.Fatalf("%d connections counted open, over the cap of %d", n, total)
	}
	if n := stillOpen(conns); n > total-len(admin) {
		t.Fatalf("the server holds %d of the attack's connections, over the cap of %d less the admin's %d", n, total, len(admin))
	}
	if n := stillOpen(admin); n != len(admin) {
		t.Errorf("%d of the admin's %d idle connections were closed to make room for the attack's", len(admin)-n, len(admin))
	}
	fams := parseExposition(t, adminCanWork(t, "127.0.0.3", addr))
	if v, _ := sample(fams, "gsq_http_connections", nil); v > total {
		t.Errorf("gsq_http_connections %v, over the cap of %d", v, total)
	}
	if v, _ := sample(fams, "gsq_http_connections_evicted_total", nil); v < 2*total {
		t.Errorf("gsq_http_connections_evicted_total %v, want at least %d", v, 2*total)
	}
}

// TestConnectionsBusyWithStreamsRefuseMore holds a source's every
// connection busy with a live stream: a further connection from it gets
// a 503 and is counted, while another source is served.
func TestConnectionsBusyWithStreamsRefuseMore(t *testing.T) {
	t.Parallel()
	const perSource = 4
	addr, _ := limitedServer(t, Options{MaxConnsPerSource: perSource})
	for range perSource {
		c := dialFrom(t, "127.0.0.4", addr)
		c.SetDeadline(time.Now().Add(testutil.Bound))
		fmt.Fprintf(c, "GET /api/v1/events HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("stream: %v %v", resp, err)
		}
	}
	c := dialFrom(t, "127.0.0.4", addr)
	c.SetDeadline(time.Now().Add(testutil.Bound))
	b, _ := io.ReadAll(c)
	if !strings.HasPrefix(string(b), "HTTP/1.1 503 ") {
		t.Fatalf("a connection over the cap read %q, want a 503", b)
	}
	resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(string(b))), nil)
	if err != nil {
		t.Fatalf("the refusal is no HTTP response: %v", err)
	}
	if body, _ := io.ReadAll(resp.Body); string(body) != "too many connections: try again soon\n" {
		t.Errorf("refusal body %q", body)
	}
	fams := parseExposition(t, adminCanWork(t, "127.0.0.5", addr))
	mustSample(t, fams, "gsq_http_connections_refused_total", map[string]string{"reason": "source"}, 1)
	mustSample(t, fams, "gsq_http_connections_evicted_total", nil, 0)
}

// benchConn is a connection that only has an address: what the limiter
// reads of one.
type benchConn struct {
	net.Conn
	addr *net.TCPAddr
}

func (c *benchConn) RemoteAddr() net.Addr { return c.addr }
func (c *benchConn) Close() error         { return nil }

// BenchmarkConnLimiterAtCap is the cost of a new connection from a source
// at its cap: each closes the source's longest idle one, as under the
// idle-connection attack.
func BenchmarkConnLimiterAtCap(b *testing.B) {
	l := newConnLimiter(DefaultMaxConns, DefaultMaxConnsPerSource, nil)
	conns := make([]*benchConn, 4*DefaultMaxConnsPerSource)
	for i := range conns {
		conns[i] = &benchConn{addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1024 + i}}
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		c := conns[i%len(conns)]
		l.track(c, http.StateClosed) // in case it is still counted
		l.track(c, http.StateNew)
		l.track(c, http.StateActive)
		l.track(c, http.StateIdle)
	}
	if n := l.open(); n != DefaultMaxConnsPerSource {
		b.Fatalf("%d connections counted, want the cap %d", n, DefaultMaxConnsPerSource)
	}
}
