// Package a2stest runs fake A2S game servers on loopback for tests, in the
// manner of net/http/httptest. Each [Profile] plays a kind of real server,
// quirks included (the protocol is specs/valve-server-queries.txt, the
// quirks notes/a2s-field-notes.md): a modern Source server with
// challenges, a legacy one without, GoldSource dual replies, out-of-order
// and bzip2-compressed splits, oversized unsplit datagrams, Rust's player
// counts, The Ship, and a lossy network.
//
// A Profile is applied in three pieces, so that it also works with content
// of your own (gsq serve --profile NAME does this):
//
//   - [Profile.Wrap] wraps any [a2s.Handler]: it reframes the replies the
//     handler writes (split order, compression, no split at all) and adds
//     the GoldSource 'm' reply before 'I';
//   - [Profile.NewA2SServer] returns an [a2s.Server] set up for the profile
//     (challenges, split size and format, rate limit) around Wrap(h), with
//     the profile's own content when h is nil;
//   - [Profile.WrapWriter] wraps the socket writer to drop, duplicate and
//     reorder datagrams (the lossy knobs), deterministically from Seed.
//
// [NewServer] puts the three together on 127.0.0.1 with a random port.
package a2stest

import (
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/gsq-project/gsq/a2s"
)

// Server is a fake A2S server listening on 127.0.0.1.
type Server struct {
	// Profile is the profile the server plays.
	Profile Profile

	srv      *a2s.Server
	content  *a2s.StaticHandler
	conn     *net.UDPConn
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
		srv:     p.NewA2SServer(content),
		content: content,
		conn:    conn,
		addr:    conn.LocalAddr().(*net.UDPAddr).AddrPort(),
		done:    make(chan struct{}),
	}
	go s.serve(p.WrapWriter(conn))
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
		s.srv.HandlePacket(w, from, buf[:n])
	}
}

// Addr is the address the server listens on.
func (s *Server) Addr() netip.AddrPort { return s.addr }

// Received counts the datagrams the server has read.
func (s *Server) Received() int64 { return s.received.Load() }

// Set replaces the content the server answers with (nil sections are not
// answered).
func (s *Server) Set(info *a2s.Info, players *a2s.Players, rules *a2s.Rules) error {
	return s.content.Set(info, players, rules)
}

// Close stops the server and waits for its loop to end.
func (s *Server) Close() {
	s.close.Do(func() {
		s.conn.Close()
		<-s.done
	})
}
