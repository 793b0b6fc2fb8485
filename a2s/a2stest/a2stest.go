// Package a2stest runs fake A2S game servers on loopback for tests, in the
// manner of net/http/httptest. It also ships inside the gsq binary: `gsq
// serve --profile NAME` serves its profiles, so its code runs outside
// tests too and is held to the same care as the server it wraps. Each [Profile] plays a kind of real server,
// quirks included, as the Valve Developer Community's "Server queries"
// page and the servers in the field describe them: a modern Source server
// with challenges, a legacy one without, GoldSource double replies,
// out-of-order and bzip2-compressed splits, oversized unsplit datagrams,
// Rust's player counts, The Ship, DayZ, a ban, and a lossy network.
//
// [NewServer] starts a profile's server on 127.0.0.1 with a random port.
// The pieces also work without its socket and with content of your own
// (gsq serve --profile NAME does this):
//
//   - [Profile.NewResponder] returns the profile's server as a datagram
//     handler: an [a2s.Server] set up for the profile (challenges, split
//     size and format, rate limit) around any [a2s.Handler], with the
//     quirks that reframe its replies (split order, compression, no split
//     at all, the GoldSource 'm' reply before 'I') or refuse the client;
//   - [Profile.WrapWriter] wraps the socket writer to drop, duplicate and
//     reorder datagrams (the lossy knobs), deterministically from Seed.
package a2stest

import (
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/internal/lossy"
)

// Server is a fake A2S server listening on 127.0.0.1.
type Server struct {
	// Profile is the profile the server plays.
	Profile Profile

	r        *Responder
	content  *a2s.StaticHandler
	conn     *net.UDPConn
	lossy    *lossy.Writer // nil without lossy knobs
	addr     netip.AddrPort
	done     chan struct{}
	received atomic.Int64
	close    sync.Once
}

// NewServer starts a server playing p on 127.0.0.1 with a random port. It
// panics if it cannot listen or p's content does not encode, as httptest
// does. Close it when done.
func NewServer(p Profile) *Server {
	content, err := p.handler()
	if err != nil {
		panic(fmt.Sprintf("a2stest: profile %q: %v", p.Name, err))
	}
	conn, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:0")))
	if err != nil {
		panic(fmt.Sprintf("a2stest: listen: %v", err))
	}
	s := &Server{
		Profile: p,
		r:       p.NewResponder(content),
		content: content,
		conn:    conn,
		addr:    conn.LocalAddr().(*net.UDPAddr).AddrPort(),
		done:    make(chan struct{}),
	}
	var w a2s.PacketWriter = conn
	if c := p.lossy(); c.Enabled() {
		s.lossy = lossy.New(conn, c)
		w = s.lossy
	}
	go s.serve(w)
	return s
}

func (s *Server) serve(w a2s.PacketWriter) {
	defer close(s.done)
	buf := make([]byte, 4096)
	for {
		n, from, err := s.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			return // closed
		}
		s.received.Add(1)
		s.r.HandlePacket(w, from, buf[:n])
	}
}

// Addr is the address the server listens on.
func (s *Server) Addr() netip.AddrPort { return s.addr }

// Received counts the datagrams the server has read.
func (s *Server) Received() int64 { return s.received.Load() }

// Dropped counts the reply datagrams the profile's Loss knob dropped.
func (s *Server) Dropped() int64 {
	if s.lossy == nil {
		return 0
	}
	return s.lossy.Dropped()
}

// Set replaces the content the server answers with (nil sections are not
// answered).
func (s *Server) Set(info *a2s.Info, players *a2s.Players, rules *a2s.Rules) error {
	return s.content.Set(info, players, rules)
}

// Close stops the server and waits for its loop to end. A datagram the
// lossy knobs held back is not sent.
func (s *Server) Close() {
	s.close.Do(func() {
		if s.lossy != nil {
			s.lossy.Stop()
		}
		s.conn.Close()
		<-s.done
	})
}
