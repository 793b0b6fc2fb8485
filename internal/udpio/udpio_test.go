package udpio

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"syscall"
	"testing"
	"time"
)

func listen(t *testing.T, network, addr string) *net.UDPConn {
	t.Helper()
	ua, err := net.ResolveUDPAddr(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.ListenUDP(network, ua)
	if err != nil {
		t.Skipf("%s %s: %v", network, addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func addrOf(c *net.UDPConn) netip.AddrPort {
	return unmap(c.LocalAddr().(*net.UDPAddr).AddrPort())
}

// closedPort returns a loopback port nobody listens on.
func closedPort(t *testing.T, host string) netip.AddrPort {
	t.Helper()
	c := listen(t, "udp", net.JoinHostPort(host, "0"))
	a := addrOf(c)
	c.Close()
	return a
}

// readUntil reads r until want datagrams and reports arrived, or fails
// after a bounded number of reads (a read deadline bounds each).
func readUntil(t *testing.T, conn *net.UDPConn, r *Reader, datagrams, reports int) (map[netip.AddrPort]string, []Report) {
	t.Helper()
	got := map[netip.AddrPort]string{}
	var reps []Report
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	for n := 0; len(got) < datagrams || len(reps) < reports; n++ {
		k, err := r.Read()
		if err != nil {
			t.Fatalf("after %d datagrams and %d reports: %v", len(got), len(reps), err)
		}
		for i := range k {
			from, b := r.Datagram(i)
			got[from] += string(b)
		}
		reps = append(reps, r.Reports()...)
	}
	return got, reps
}

func TestReadBatch(t *testing.T) {
	t.Parallel()
	conn := listen(t, "udp4", "127.0.0.1:0")
	r := NewReader(conn, 65536, 8)
	defer r.Close()
	var senders []*net.UDPConn
	for i := range 5 {
		s := listen(t, "udp4", "127.0.0.1:0")
		senders = append(senders, s)
		if _, err := s.WriteToUDPAddrPort([]byte(fmt.Sprint("hello ", i)), addrOf(conn)); err != nil {
			t.Fatal(err)
		}
	}
	big := make([]byte, 60000)
	big[len(big)-1] = 'x'
	if _, err := senders[0].WriteToUDPAddrPort(big, addrOf(conn)); err != nil {
		t.Fatal(err)
	}
	got, _ := readUntil(t, conn, r, 5, 0)
	for i, s := range senders {
		want := fmt.Sprint("hello ", i)
		if i == 0 {
			for len(got[addrOf(s)]) < len(want)+len(big) {
				more, _ := readUntil(t, conn, r, 1, 0)
				got[addrOf(s)] += more[addrOf(s)]
			}
			want += string(big)
		}
		if got[addrOf(s)] != want {
			t.Errorf("from %s: %d bytes, want %d", addrOf(s), len(got[addrOf(s)]), len(want))
		}
	}
}

func TestWriterBatch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ network, local, dest string }{
		{"udp4", "127.0.0.1:0", "127.0.0.1:0"},
		{"udp", ":0", "127.0.0.1:0"}, // dual-stack socket, IPv4 destinations
		{"udp6", "[::1]:0", "[::1]:0"},
	} {
		t.Run(tc.network, func(t *testing.T) {
			conn := listen(t, tc.network, tc.local)
			w := NewWriter(conn, 4, 64)
			if w == nil && runtime.GOOS == "linux" {
				t.Fatal("no batch writer on Linux")
			}
			var failed []netip.AddrPort
			if w != nil {
				w.Failed = func(to netip.AddrPort, err error) { failed = append(failed, to) }
			}
			var dests []*net.UDPConn
			for range 6 { // more than a batch: Add flushes
				d := listen(t, "udp", tc.dest)
				dests = append(dests, d)
				b := []byte("to " + addrOf(d).String())
				if !w.Add(b, addrOf(d)) {
					if err := WriteTo(conn, b, addrOf(d)); err != nil {
						t.Fatal(err)
					}
				}
			}
			bad := netip.AddrPortFrom(addrOf(dests[0]).Addr(), 0) // port 0: the kernel refuses it
			if w.Add([]byte("refused"), bad) {
				w.Flush()
				if len(failed) != 1 || failed[0] != bad {
					t.Errorf("failed %v, want %v", failed, bad)
				}
			}
			if w.Add(make([]byte, 65), addrOf(dests[0])) {
				t.Error("a datagram longer than the slots was queued")
			}
			for _, d := range dests {
				buf := make([]byte, 100)
				d.SetReadDeadline(time.Now().Add(5 * time.Second))
				n, _, err := d.ReadFromUDPAddrPort(buf)
				if err != nil || string(buf[:n]) != "to "+addrOf(d).String() {
					t.Errorf("%s got %q, %v", addrOf(d), buf[:n], err)
				}
			}
		})
	}
}

func TestReportsClosedPort(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("ICMP errors are reported on Linux only")
	}
	for _, tc := range []struct{ network, local, host string }{
		{"udp4", "127.0.0.1:0", "127.0.0.1"},
		{"udp", ":0", "127.0.0.1"}, // dual-stack socket
		{"udp6", "[::1]:0", "::1"},
	} {
		t.Run(tc.network, func(t *testing.T) {
			conn := listen(t, tc.network, tc.local)
			r := NewReader(conn, 2048, 4)
			defer r.Close()
			if !r.EnableReports() {
				t.Fatal("EnableReports failed")
			}
			closed := closedPort(t, tc.host)
			open := listen(t, "udp", net.JoinHostPort(tc.host, "0"))
			self := netip.AddrPortFrom(netip.MustParseAddr(tc.host), addrOf(conn).Port())
			// The kernel limits the ICMP errors it sends per second,
			// host-wide: the probe goes again until one comes back.
			var reps []Report
			got := map[netip.AddrPort]string{}
			for try := 0; len(reps) == 0; try++ {
				if try == 20 {
					t.Fatal("no ICMP error for a closed port after 20 probes")
				}
				if err := WriteTo(conn, []byte("anyone?"), closed); err != nil {
					t.Fatal(err)
				}
				// The socket's pending error may go to this send; it is
				// sent anyway, and the error still reaches the reader.
				if err := WriteTo(conn, []byte("ping"), addrOf(open)); err != nil {
					t.Fatalf("a send after an ICMP error: %v", err)
				}
				if _, err := open.WriteToUDPAddrPort([]byte("pong"), self); err != nil {
					t.Fatal(err)
				}
				conn.SetReadDeadline(time.Now().Add(250 * time.Millisecond))
				for {
					n, err := r.Read()
					if err != nil {
						break // the deadline: probe again
					}
					for i := range n {
						from, b := r.Datagram(i)
						got[from] = string(b)
					}
					if reps = append(reps, r.Reports()...); len(reps) > 0 && got[addrOf(open)] == "pong" {
						break
					}
				}
			}
			if got[addrOf(open)] != "pong" {
				t.Errorf("datagrams %q", got)
			}
			if reps[0].Addr != closed || !errors.Is(reps[0].Err, syscall.ECONNREFUSED) {
				t.Errorf("report %+v, want %s refused", reps[0], closed)
			}
			buf := make([]byte, 10)
			open.SetReadDeadline(time.Now().Add(5 * time.Second))
			if n, _, err := open.ReadFromUDPAddrPort(buf); err != nil || string(buf[:n]) != "ping" {
				t.Errorf("open port got %q, %v", buf[:n], err)
			}
		})
	}
}

func TestReaderClosed(t *testing.T) {
	t.Parallel()
	conn := listen(t, "udp4", "127.0.0.1:0")
	r := NewReader(conn, 2048, 4)
	defer r.Close()
	done := make(chan error, 1)
	go func() {
		_, err := r.Read()
		done <- err
	}()
	conn.Close()
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("Read after Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Read did not return after Close")
	}
}

// genericConn is a net.PacketConn that is not a *net.UDPConn.
type genericConn struct{ net.PacketConn }

func TestGenericPacketConn(t *testing.T) {
	t.Parallel()
	conn := listen(t, "udp4", "127.0.0.1:0")
	g := genericConn{conn}
	if w := NewWriter(g, 4, 64); w != nil {
		t.Error("a batch writer for a generic PacketConn")
	}
	r := NewReader(g, 2048, 4)
	defer r.Close()
	s := listen(t, "udp4", "127.0.0.1:0")
	if err := WriteTo(genericConn{s}, []byte("via WriteTo"), addrOf(conn)); err != nil {
		t.Fatal(err)
	}
	got, _ := readUntil(t, conn, r, 1, 0)
	if got[addrOf(s)] != "via WriteTo" {
		t.Errorf("got %q", got)
	}
}
