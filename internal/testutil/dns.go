package testutil

import (
	"context"
	"encoding/binary"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
)

// DNS is a loopback DNS server over UDP that answers A and SRV questions
// from its tables, for tests of what follows SRV records: every other
// name or type gets an empty answer, a name in neither table "no such
// host". The tables may change while it runs. It closes when the test
// ends.
type DNS struct {
	conn *net.UDPConn
	mu   sync.Mutex
	a    map[string]netip.Addr // by name, lower case, no trailing dot
	srv  map[string][]*net.SRV // by the whole owner name: "_svc._tcp.host"
	asks map[string]int        // questions by "TYPE name"
}

// StartDNS starts a DNS server on 127.0.0.1.
func StartDNS(t testing.TB) *DNS {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	d := &DNS{conn: c, a: map[string]netip.Addr{}, srv: map[string][]*net.SRV{}, asks: map[string]int{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.serve()
	}()
	t.Cleanup(func() { c.Close(); <-done })
	return d
}

// SetA makes name (a host name) resolve to addr.
func (d *DNS) SetA(name string, addr netip.Addr) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.a[canonical(name)] = addr
}

// SetSRV sets the SRV records of owner ("_minecraft._tcp.play.test");
// none removes them.
func (d *DNS) SetSRV(owner string, recs ...*net.SRV) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(recs) == 0 {
		delete(d.srv, canonical(owner))
		return
	}
	d.srv[canonical(owner)] = recs
}

// Asked returns how many questions of type typ ("A", "SRV") about name
// the server has had.
func (d *DNS) Asked(typ, name string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.asks[typ+" "+canonical(name)]
}

// Resolver returns a resolver that asks only this server.
func (d *DNS) Resolver() *net.Resolver {
	addr := d.conn.LocalAddr().String()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var dl net.Dialer
		return dl.DialContext(ctx, "udp", addr)
	}}
}

func canonical(name string) string { return strings.ToLower(strings.TrimSuffix(name, ".")) }

const (
	dnsTypeA   = 1
	dnsTypeSRV = 33
)

func (d *DNS) serve() {
	buf := make([]byte, 1500)
	for {
		n, from, err := d.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		if reply := d.answer(buf[:n]); reply != nil {
			_, _ = d.conn.WriteToUDPAddrPort(reply, from)
		}
	}
}

// answer builds the reply to query q, or nil for what is not one
// question.
func (d *DNS) answer(q []byte) []byte {
	if len(q) < 12 || binary.BigEndian.Uint16(q[4:]) != 1 {
		return nil
	}
	var labels []string
	i := 12
	for i < len(q) && q[i] != 0 {
		l := int(q[i])
		if l > 63 || i+1+l > len(q) {
			return nil
		}
		labels = append(labels, string(q[i+1:i+1+l]))
		i += 1 + l
	}
	if i+5 > len(q) {
		return nil
	}
	question := q[12 : i+5]
	typ := binary.BigEndian.Uint16(q[i+1:])
	name := canonical(strings.Join(labels, "."))

	d.mu.Lock()
	a, hasA := d.a[name]
	recs, hasSRV := d.srv[name]
	d.asks[map[uint16]string{dnsTypeA: "A", dnsTypeSRV: "SRV"}[typ]+" "+name]++
	d.mu.Unlock()

	rcode := byte(0)
	if !hasA && !hasSRV {
		rcode = 3 // NXDOMAIN
	}
	var answers [][]byte
	switch {
	case typ == dnsTypeA && hasA && a.Is4():
		a4 := a.As4()
		answers = append(answers, a4[:])
	case typ == dnsTypeSRV:
		for _, r := range recs {
			rd := binary.BigEndian.AppendUint16(nil, r.Priority)
			rd = binary.BigEndian.AppendUint16(rd, r.Weight)
			rd = binary.BigEndian.AppendUint16(rd, r.Port)
			for l := range strings.SplitSeq(canonical(r.Target), ".") {
				rd = append(append(rd, byte(len(l))), l...)
			}
			answers = append(answers, append(rd, 0))
		}
	}
	out := append([]byte(nil), q[0], q[1], 0x84|q[2]&0x01, 0x80|rcode, 0, 1, 0, byte(len(answers)), 0, 0, 0, 0)
	out = append(out, question...)
	for _, rd := range answers {
		out = append(out, 0xC0, 12) // the question's name
		out = binary.BigEndian.AppendUint16(out, typ)
		out = append(out, 0, 1, 0, 0, 0, 0) // class IN, TTL 0
		out = binary.BigEndian.AppendUint16(out, uint16(len(rd)))
		out = append(out, rd...)
	}
	return out
}
