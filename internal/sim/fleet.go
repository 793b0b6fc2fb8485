package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/internal/lossy"
	"github.com/gsq-project/gsq/ogp"
)

// FleetConfig describes a fleet of simulated servers in one process, one
// UDP socket each, on consecutive ports. Each answers A2S through an
// a2s.Server and, on the same socket, OGP v0.91 through an ogp.Server of
// its own. The zero value, with N set, is N servers on 127.0.0.1:27015 and
// up, without faults or challenges.
type FleetConfig struct {
	N        int    // number of servers
	BasePort int    // port of server 0; server i listens on BasePort+i (default 27015)
	Host     string // address to listen on (default 127.0.0.1)
	// Loss, Reorder and Duplicate are the probabilities, between 0 and
	// 1, that a reply datagram is dropped, held back and sent after the
	// server's next datagram (or 2 ms later), or sent twice. The draws are
	// made per server from Seed, so a run with the same requests in the
	// same order makes the same faults.
	Loss, Reorder, Duplicate float64
	Seed                     uint64
	// Challenge makes every server answer queries without a valid
	// challenge with an S2C_CHALLENGE, as servers do since 2020: the
	// a2s.Server's challenge, per client address and valid for 30 to 60
	// seconds. The servers of one event loop (server i is on loop i modulo
	// the number of CPUs) share it, where real servers would differ.
	// Without Challenge, replies go out unchallenged, amplified as pre-2020
	// servers did.
	Challenge bool
	// SplitSize is the payload size of a rules fragment (default 1248).
	SplitSize int
	// Content gives server i's content; nil means FleetContent.
	Content func(i int) Content
}

// FleetContent is the default content of fleet server i: its own name,
// map, player count and rules, the rules reply large enough to need three
// 1248-byte fragments.
func FleetContent(i int) Content {
	maps := [...]string{"de_dust2", "cs_office", "de_inferno", "de_nuke", "cp_badlands", "ctf_2fort", "pl_upward", "koth_harvest"}
	c := Content{
		Name:       fmt.Sprintf("gsq fleet server #%d", i),
		Map:        maps[i%len(maps)],
		Folder:     "cstrike",
		Game:       "Counter-Strike: Source",
		AppID:      240,
		MaxPlayers: 32,
		Version:    "1.0.0.0",
		Keywords:   fmt.Sprintf("gsq,fleet,shard%d", i%16),
		VAC:        i%3 != 0,
	}
	for p := range i % 33 {
		c.Players = append(c.Players, Player{
			Name:     fmt.Sprintf("player%d_%d", i, p),
			Score:    int32((i*7+p*13)%61 - 10),
			Duration: time.Duration((i+p)%3600) * time.Second,
		})
	}
	// About 2.9 KB of rules: fragments of 1248, 1248 and ~400 bytes.
	for r := range 128 {
		c.Rules = append(c.Rules, Rule{Name: fmt.Sprintf("sv_fleet_var_%02d", r), Value: fmt.Sprintf("%d", (i*31+r*17)%100000)})
	}
	c.Rules = append(c.Rules, Rule{Name: "sv_fleet_index", Value: fmt.Sprint(i)})
	return c
}

// FleetStats counts a fleet's traffic.
type FleetStats struct {
	Requests   int64 // datagrams received
	Sent       int64 // datagrams sent, duplicates included
	Dropped    int64 // datagrams dropped by the Loss setting
	Challenges int64 // S2C_CHALLENGE replies sent
}

// Fleet is a running fleet of simulated servers.
type Fleet struct {
	servers   []*fleetServer
	wg        sync.WaitGroup
	closed    atomic.Bool
	loops     []*epollLoop // Linux: the event loops serving the sockets
	wake      [2]int       // Linux: a pipe whose closing stops the loops
	challenge bool         // FleetConfig.Challenge
}

// RunFleet serves a fleet until ctx is done. logf, if not nil, is told
// where the fleet listens once every socket is bound.
func RunFleet(ctx context.Context, cfg FleetConfig, logf func(string, ...any)) error {
	f, err := StartFleet(cfg)
	if err != nil {
		return err
	}
	if logf != nil {
		first, last := f.Addr(0), f.Addr(cfg.N-1)
		logf("fleet: %d simulated A2S and OGP servers on %s:%d-%d (loss %g, reorder %g, duplicate %g, challenge %v)",
			cfg.N, first.Addr(), first.Port(), last.Port(), cfg.Loss, cfg.Reorder, cfg.Duplicate, cfg.Challenge)
	}
	<-ctx.Done()
	f.Close()
	if logf != nil {
		s := f.Stats()
		logf("fleet: %d requests, %d datagrams sent, %d dropped", s.Requests, s.Sent, s.Dropped)
	}
	return nil
}

// StartFleetAnywhere starts cfg's fleet on a run of cfg.N free ports,
// ignoring cfg.BasePort. It tries random bases below 32768, where Linux
// does not hand out ephemeral ports, so the fleet does not collide with the
// sockets other programs open meanwhile.
func StartFleetAnywhere(cfg FleetConfig) (*Fleet, error) {
	const low, high = 10000, 32768
	if cfg.N <= 0 || cfg.N > high-low {
		return nil, fmt.Errorf("sim: no room for a fleet of %d servers below port %d", cfg.N, high)
	}
	var err error
	for range 20 {
		cfg.BasePort = low + rand.IntN(high-low-cfg.N+1)
		var f *Fleet
		if f, err = StartFleet(cfg); err == nil {
			return f, nil
		}
	}
	return nil, err
}

// StartFleet binds every server's socket and starts serving.
func StartFleet(cfg FleetConfig) (*Fleet, error) {
	if cfg.N <= 0 {
		return nil, fmt.Errorf("sim: fleet of %d servers", cfg.N)
	}
	if err := cfg.faults(0).Validate(); err != nil {
		return nil, fmt.Errorf("sim: fleet: %w", err)
	}
	base := cfg.BasePort
	if base == 0 {
		base = a2s.DefaultPort
	}
	if base < 1 || base+cfg.N-1 > 65535 {
		return nil, fmt.Errorf("sim: fleet ports %d-%d out of range", base, base+cfg.N-1)
	}
	host := cfg.Host
	if host == "" {
		host = "127.0.0.1"
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return nil, fmt.Errorf("sim: fleet host: %w", err)
	}
	content := cfg.Content
	if content == nil {
		content = FleetContent
	}
	f := &Fleet{wake: [2]int{-1, -1}, challenge: cfg.Challenge}
	for i := range cfg.N {
		addr := netip.AddrPortFrom(ip, uint16(base+i))
		srv, err := newFleetServer(cfg, addr, func() Content { return content(i) })
		if err == nil {
			f.servers = append(f.servers, srv)
			if err = srv.listen(); err == nil && cfg.faults(i).Enabled() {
				srv.faults = lossy.New(&srv.sock, cfg.faults(i))
				srv.out = srv.faults
			}
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("sim: fleet server %d: UDP %s: %w", i, addr, err)
		}
	}
	if err := f.start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("sim: fleet: %w", err)
	}
	return f, nil
}

// faults is the fault injection of server i: each server draws its own
// faults from Seed.
func (cfg *FleetConfig) faults(i int) lossy.Config {
	return lossy.Config{Loss: cfg.Loss, Duplicate: cfg.Duplicate, Reorder: cfg.Reorder,
		Seed: cfg.Seed ^ uint64(i)*0x9E3779B97F4A7C15, Delay: 2 * time.Millisecond}
}

// Addr is the address of server i.
func (f *Fleet) Addr(i int) netip.AddrPort { return f.servers[i].addr }

// Len is the number of servers.
func (f *Fleet) Len() int { return len(f.servers) }

// Stats sums the servers' counters.
func (f *Fleet) Stats() FleetStats {
	var s FleetStats
	for _, srv := range f.servers {
		s.Requests += srv.requests.Load()
		s.Sent += srv.sock.sent.Load()
		s.Challenges += srv.challenges.Load()
		if srv.faults != nil {
			s.Dropped += srv.faults.Dropped()
		}
	}
	return s
}

// Close stops every server and waits for them.
func (f *Fleet) Close() {
	if f.closed.Swap(true) {
		return
	}
	f.halt()
	for _, srv := range f.servers {
		if srv.faults != nil {
			srv.faults.Stop() // no late datagram on a closed descriptor
		}
		srv.sock.close()
	}
}

// fleetServer is one simulated server: its socket, its replies, and the
// ogp.Server that answers OGP on it; A2S requests go through the a2s.Server
// of its answerer. One goroutine at a time reads its socket and answers
// (on Linux, the epoll loop the socket belongs to; elsewhere, its own
// goroutine).
type fleetServer struct {
	addr     netip.AddrPort
	sock     fleetSocket
	replies  *fleetHandler
	ogp      *ogp.Server
	answerer *answerer
	out      a2s.PacketWriter // the socket, or the fault injector in front of it
	faults   *lossy.Writer    // nil without faults

	requests, challenges atomic.Int64
}

// answerer is the a2s.Server that answers for the servers of one event
// loop, with the replies of the server whose datagram it is handling. One
// a2s.Server for thousands of sockets keeps its state in the cache, where
// one each would not; the price is that the servers of a loop give a
// client the same challenge, where real ones would differ.
type answerer struct {
	a2s     *a2s.Server
	current *fleetServer // the server whose datagram is being answered
}

func newAnswerer(challenge bool) *answerer {
	a := &answerer{}
	a.a2s = &a2s.Server{NoChallenge: !challenge, RateLimit: -1,
		Handler: a2s.HandlerFunc(func(w a2s.ResponseWriter, r *a2s.Request) { a.current.replies.ServeA2S(w, r) })}
	return a
}

func newFleetServer(cfg FleetConfig, addr netip.AddrPort, content func() Content) (*fleetServer, error) {
	c := content()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	h, err := newFleetHandler(&c, addr.Port(), cfg.SplitSize)
	if err != nil {
		return nil, err
	}
	s := &fleetServer{addr: addr, replies: h}
	s.out = &s.sock
	// The OGP answer is built afresh for each query: OGP scans of a fleet
	// are rare, and keeping 10,000 answers would hold about 150 MB.
	s.ogp = &ogp.Server{NoChallenge: !cfg.Challenge, RateLimit: -1,
		Handler: ogp.HandlerFunc(func(netip.AddrPort, *ogp.Query) (*ogp.Answer, error) {
			c := content()
			return c.OGP(addr.Port()), nil
		})}
	return s, nil
}

// fleetHandler answers a fleet server's accepted requests with replies
// encoded and split once, at start: a fleet of 10,000 would otherwise copy
// 30 MB of rules into fragments per scan. The split ID is fixed per
// server, as the replies never change.
type fleetHandler struct {
	info, players []byte
	rules         [][]byte // one datagram per fragment
}

func newFleetHandler(c *Content, port uint16, splitSize int) (*fleetHandler, error) {
	info, players, rules := c.A2S(port)
	h := &fleetHandler{}
	var err error
	if h.info, err = info.AppendBinary(nil); err != nil {
		return nil, err
	}
	if h.players, err = players.AppendBinary(nil); err != nil {
		return nil, err
	}
	payload, err := rules.AppendBinary(nil)
	if err != nil {
		return nil, err
	}
	h.rules, err = a2s.SplitWriter{Size: splitSize}.AppendFragments(nil, uint32(port)|1, payload)
	return h, err
}

func (h *fleetHandler) ServeA2S(w a2s.ResponseWriter, r *a2s.Request) {
	switch r.Type {
	case a2s.TypeInfoRequest:
		_ = w.WriteDatagram(h.info)
	case a2s.TypePlayerRequest:
		_ = w.WriteDatagram(h.players)
	case a2s.TypeRulesRequest:
		for _, f := range h.rules {
			_ = w.WriteDatagram(f)
		}
	}
}

// answer replies to one datagram.
func (s *fleetServer) answer(b []byte, from netip.AddrPort) {
	s.requests.Add(1)
	s.answerer.current = s
	mux := Mux{A2S: s.answerer.a2s, OGP: s.ogp}
	mux.HandlePacket(s, from, b)
}

// WriteToUDPAddrPort counts the challenges the servers send and passes
// every datagram on, through the fault injector if there is one.
func (s *fleetServer) WriteToUDPAddrPort(b []byte, to netip.AddrPort) (int, error) {
	// Only a 9-byte datagram can be a challenge: the test keeps the
	// fragments, cold in memory, out of the cache.
	if len(b) == challengeReplyLen {
		if _, typ, err := a2s.ParseHeader(b); err == nil && typ == a2s.TypeChallengeReply {
			s.challenges.Add(1)
		}
	}
	return s.out.WriteToUDPAddrPort(b, to)
}

// challengeReplyLen is the size of an S2C_CHALLENGE reply.
var challengeReplyLen = len(a2s.AppendChallenge(nil, 0))
