// Package satisfactorytest runs fake Satisfactory servers on loopback for
// tests, in the manner of net/http/httptest: each answers the
// Lightweight Query as a [Profile] says (a live session, an idle or
// loading server, a reply without its terminator, a stray reply to
// another poll before the right one, a protocol version this package
// does not know, loss, silence).
package satisfactorytest

import (
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/gsq-project/gsq/internal/fakeprofile"
	"github.com/gsq-project/gsq/satisfactory"
)

// Profile describes a fake server.
type Profile struct {
	// Name is the profile's name (for LookupProfile); Description says
	// what it plays.
	Name, Description string
	// State is the reply the fake sends (its Cookie set to the poll's).
	State satisfactory.ServerState
	// StrayFirst sends, before each reply, a reply to another poll (the
	// cookie changed).
	StrayFirst bool
	// WireVersion, when not zero, is the protocol version the replies
	// carry.
	WireVersion byte
	// DropFirst drops the first DropFirst polls unanswered.
	DropFirst int
	// Silent never answers.
	Silent bool
}

// DefaultState is the state of a server playing a session: build 416835
// (Satisfactory 1.0), the four sub-states a 1.0 server lists.
func DefaultState() satisfactory.ServerState {
	return satisfactory.ServerState{
		State: satisfactory.StatePlaying, NetCL: 416835,
		SubStates: []satisfactory.SubState{{ID: 0, Version: 12}, {ID: 1, Version: 3}, {ID: 2, Version: 1}, {ID: 3, Version: 7}},
		Name:      satisfactory.Text("gsq Satisfactory server"),
	}
}

// Profiles returns the built-in profiles, in a stable order.
func Profiles() []Profile {
	idle := DefaultState()
	idle.State = satisfactory.StateIdle
	loading := DefaultState()
	loading.State = satisfactory.StateLoading
	bare := DefaultState()
	bare.NoTerminator = true
	latin1 := DefaultState()
	latin1.Name = satisfactory.Text("Fabrik M\xfcller") // Latin-1, not UTF-8
	return []Profile{
		{Name: "playing", Description: "a dedicated server playing a session", State: DefaultState()},
		{Name: "idle", Description: "a dedicated server with no session loaded", State: idle},
		{Name: "loading", Description: "a dedicated server preparing its world", State: loading},
		{Name: "no-terminator", Description: "replies end after the name, without the terminator 01", State: bare},
		{Name: "latin1", Description: "a name in Latin-1 bytes, not UTF-8", State: latin1},
		{Name: "stray", Description: "a reply to another poll (another cookie) before each reply", State: DefaultState(), StrayFirst: true},
		{Name: "version2", Description: "replies in a protocol version this package does not know (2)", State: DefaultState(), WireVersion: 2},
		{Name: "lossy", Description: "the first poll goes unanswered", State: DefaultState(), DropFirst: 1},
		{Name: "silent", Description: "a dead server: polls go unanswered", Silent: true},
	}
}

// LookupProfile returns the built-in profile called name. The error
// lists the known names.
func LookupProfile(name string) (Profile, error) {
	return fakeprofile.Lookup("satisfactorytest", Profiles(), Profile.name, name)
}

// ProfileNames lists the built-in profiles' names.
func ProfileNames() []string { return fakeprofile.Names(Profiles(), Profile.name) }

func (p Profile) name() string { return p.Name }

// Server is a fake Satisfactory server listening on 127.0.0.1.
type Server struct {
	// Profile is what the server plays.
	Profile Profile

	conn     *net.UDPConn
	addr     netip.AddrPort
	done     chan struct{}
	close    sync.Once
	received atomic.Int64
	dropped  atomic.Int64
}

// NewServer starts a fake playing p on 127.0.0.1 with a random port. It
// panics if it cannot listen, as httptest does. Close it when done.
func NewServer(p Profile) *Server {
	conn, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:0")))
	if err != nil {
		panic(fmt.Sprintf("satisfactorytest: listen: %v", err))
	}
	s := &Server{Profile: p, conn: conn, addr: conn.LocalAddr().(*net.UDPAddr).AddrPort(), done: make(chan struct{})}
	go s.serve()
	return s
}

// Addr returns the address the server listens on.
func (s *Server) Addr() netip.AddrPort { return s.addr }

// Received returns the datagrams received; Dropped those not answered
// (every one of a silent server's, the first DropFirst polls).
func (s *Server) Received() int64 { return s.received.Load() }

// Dropped returns the polls the profile left unanswered.
func (s *Server) Dropped() int64 { return s.dropped.Load() }

// Close stops the server and waits for its loop.
func (s *Server) Close() {
	s.close.Do(func() {
		s.conn.Close()
		<-s.done
	})
}

func (s *Server) serve() {
	defer close(s.done)
	buf := make([]byte, 2048)
	for {
		n, from, err := s.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		nth := s.received.Add(1)
		poll, err := satisfactory.ParsePoll(buf[:n])
		p := s.Profile
		if err != nil || p.Silent || nth <= int64(p.DropFirst) {
			s.dropped.Add(1)
			continue
		}
		st := p.State
		if p.StrayFirst {
			st.Cookie = poll.Cookie ^ 0xFFFF
			if b, err := st.AppendBinary(nil); err == nil {
				_, _ = s.conn.WriteToUDPAddrPort(b, from)
			}
		}
		st.Cookie = poll.Cookie
		b, err := st.AppendBinary(nil)
		if err != nil {
			continue
		}
		if p.WireVersion != 0 {
			b[3] = p.WireVersion
		}
		_, _ = s.conn.WriteToUDPAddrPort(b, from)
	}
}
