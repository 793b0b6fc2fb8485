// Package mctest runs fake Minecraft servers on loopback for tests, in the
// manner of net/http/httptest: Server List Ping and the legacy pings over
// TCP and Query over UDP on one port, as a Java server with enable-query
// does, and RakNet pings on a port of their own, as a Bedrock server.
// Each [Profile] plays a kind of real server with its behaviour, as the
// field notes and the decompiled vanilla server describe it: vanilla
// (status once per connection, pong then close), status off and
// starting (closed right after the handshake), a Velocity proxy (closed
// after the status), a 1.6 server (legacy pings only), Forge 1.12 and
// 1.20 (compressed forgeData), NeoForge, the Better Compatibility Checker
// trailer, replies one byte per write, a 100 KB status, Geyser's Query key
// order, PocketMine's negative tokens and a Bedrock pong with an empty
// version.
//
// The servers are the packages' own: slp.Server, mcquery.Server and
// bedrock.Server, with handlers and connection wrappers that add the
// quirks.
package mctest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gsq-project/gsq/minecraft/bedrock"
	"github.com/gsq-project/gsq/minecraft/mcquery"
	"github.com/gsq-project/gsq/minecraft/slp"
)

// Server is a fake Minecraft server on 127.0.0.1.
type Server struct {
	// Profile is the profile the server plays.
	Profile Profile

	slp     *slp.Server
	query   *mcquery.Server
	bedrock *bedrock.Server
	tcp     net.Listener
	udp     *net.UDPConn // Query, on the Java port
	bed     *net.UDPConn // RakNet (and PocketMine's Query)
	addr    netip.AddrPort
	bedAddr netip.AddrPort

	received atomic.Int64
	wg       sync.WaitGroup
	close    sync.Once
}

// NewServer starts a server playing p on 127.0.0.1 with random ports. It
// panics if it cannot listen, as httptest does. Close it when done.
func NewServer(p Profile) *Server {
	s := &Server{Profile: p}
	if !p.NoJava {
		s.listenJava()
		s.slp = &slp.Server{Handler: p.SLPHandler(), MaxConnsPerSource: -1, MaxConns: -1}
		l := &quirkListener{Listener: s.tcp, p: p, received: &s.received}
		s.wg.Add(1)
		go func() { defer s.wg.Done(); _ = s.slp.Serve(l) }()
	}
	if p.Query {
		s.query = &mcquery.Server{Handler: p.QueryHandler(), SignedTokens: p.SignedTokens, RateLimit: -1}
	}
	if p.Query && !p.NoJava {
		s.serveUDP(s.udp, s.query.HandlePacket)
	}
	if p.Bedrock {
		bed, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			panic(fmt.Sprintf("mctest: listen: %v", err))
		}
		s.bed, s.bedAddr = bed, bed.LocalAddr().(*net.UDPAddr).AddrPort()
		s.bedrock = &bedrock.Server{Handler: bedrock.NewStaticHandler(p.BedrockPongStatus()), ServerGUID: -305653527360353208, RateLimit: -1, GlobalLimit: -1}
		query := s.query
		s.serveUDP(bed, func(w mcquery.PacketWriter, from netip.AddrPort, b []byte) {
			if query != nil && len(b) > 0 && b[0] == 0xFE {
				query.HandlePacket(w, from, b)
				return
			}
			s.bedrock.HandlePacket(w, from, b)
		})
	}
	return s
}

// Start starts a server playing the built-in profile called name, for a
// test: it ends the test if there is no such profile, and closes the
// server when the test ends.
func Start(tb testing.TB, name string) *Server {
	tb.Helper()
	p, err := LookupProfile(name)
	if err != nil {
		tb.Fatal(err)
	}
	s := NewServer(p)
	tb.Cleanup(s.Close)
	return s
}

// listenJava opens the TCP listener and, for Query, a UDP socket on the
// same port, retrying with new ports when the UDP one is taken.
func (s *Server) listenJava() {
	for range 20 {
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			panic(fmt.Sprintf("mctest: listen: %v", err))
		}
		addr := l.Addr().(*net.TCPAddr).AddrPort()
		if !s.Profile.Query {
			s.tcp, s.addr = l, addr
			return
		}
		u, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(addr))
		if err != nil {
			l.Close()
			continue
		}
		s.tcp, s.udp, s.addr = l, u, addr
		return
	}
	panic("mctest: no port free for both TCP and UDP")
}

// serveUDP reads c and hands each datagram to handle.
func (s *Server) serveUDP(c *net.UDPConn, handle func(w mcquery.PacketWriter, from netip.AddrPort, b []byte)) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		buf := make([]byte, 2048)
		for {
			n, from, err := c.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			s.received.Add(1)
			handle(c, from, buf[:n])
		}
	}()
}

// Addr is the Java address: SLP over TCP and Query over UDP. It is the
// zero value for a Bedrock-only profile.
func (s *Server) Addr() netip.AddrPort { return s.addr }

// BedrockAddr is the Bedrock address (RakNet pings), the zero value when
// the profile has none.
func (s *Server) BedrockAddr() netip.AddrPort { return s.bedAddr }

// Received counts the TCP connections accepted and the datagrams read.
func (s *Server) Received() int64 { return s.received.Load() }

// Close stops the server and waits for its goroutines.
func (s *Server) Close() {
	s.close.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if s.slp != nil {
			_ = s.slp.Shutdown(ctx)
		}
		for _, c := range []*net.UDPConn{s.udp, s.bed} {
			if c != nil {
				c.Close()
			}
		}
		s.wg.Wait()
	})
}

// SLPHandler is the profile's Server List Ping handler: its status, its
// legacy reply, its quirks (status off, no pong, the client's protocol
// echoed, the trailer).
func (p Profile) SLPHandler() slp.Handler {
	if p.NoStatus {
		return slp.HandlerFunc(func(*slp.Request) *slp.Reply { return nil })
	}
	reply := &slp.Reply{JSON: p.statusJSON(), Trailer: p.Trailer, Legacy: p.LegacyStatus(), NoPong: p.NoPong}
	if p.LegacyOnly {
		reply.JSON = nil
	}
	if !p.EchoProtocol {
		return slp.HandlerFunc(func(*slp.Request) *slp.Reply { return reply })
	}
	return slp.HandlerFunc(func(r *slp.Request) *slp.Reply {
		echoed := *reply
		echoed.JSON = echoProtocol(reply.JSON, r.Handshake.Protocol)
		return &echoed
	})
}

// echoProtocol sets version.protocol of the status JSON b to proto.
func echoProtocol(b []byte, proto int32) []byte {
	var m map[string]json.RawMessage
	var v map[string]any
	if json.Unmarshal(b, &m) != nil || json.Unmarshal(m["version"], &v) != nil {
		return b
	}
	v["protocol"] = proto
	m["version"], _ = json.Marshal(v)
	out, err := json.Marshal(m)
	if err != nil {
		return b
	}
	return out
}

// QueryHandler is the profile's Query handler.
func (p Profile) QueryHandler() mcquery.Handler {
	h, err := mcquery.NewStaticHandler(p.QueryStat())
	if err != nil {
		panic(fmt.Sprintf("mctest: profile %q: %v", p.Name, err))
	}
	return h
}

// WrapListener adds p's connection quirks (LegacyOnly, ByteWrites) to the
// connections l accepts, for a server of one's own playing p with
// SLPHandler (gsq serve --minecraft-profile).
func (p Profile) WrapListener(l net.Listener) net.Listener {
	return &quirkListener{Listener: l, p: p}
}

// quirkListener adds a profile's connection quirks: legacy only, one byte
// per write.
type quirkListener struct {
	net.Listener
	p        Profile
	received *atomic.Int64 // nil: not counted
}

func (l *quirkListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if l.received != nil {
		l.received.Add(1)
	}
	return &quirkConn{Conn: c, byteWrites: l.p.ByteWrites, legacyOnly: l.p.LegacyOnly}, nil
}

// quirkConn drops a connection that does not start with a legacy ping,
// for a server up to 1.6, and writes one byte at a time.
type quirkConn struct {
	net.Conn
	legacyOnly, checked bool
	byteWrites          bool
}

func (c *quirkConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if c.legacyOnly && !c.checked && n > 0 {
		c.checked = true
		if b[0] != 0xFE {
			// A server up to 1.6 reads a modern handshake's first byte as
			// a packet id it does not know, and drops the connection.
			c.Conn.Close()
			return 0, io.EOF
		}
	}
	return n, err
}

func (c *quirkConn) Write(b []byte) (int, error) {
	if !c.byteWrites {
		return c.Conn.Write(b)
	}
	for i := range b {
		if _, err := c.Conn.Write(b[i : i+1]); err != nil {
			return i, err
		}
	}
	return len(b), nil
}
