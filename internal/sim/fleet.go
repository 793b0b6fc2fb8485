package sim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/ogp"
)

// FleetConfig describes a fleet of simulated servers in one process, one
// UDP socket each, on consecutive ports. Each answers A2S and, on the same
// socket, OGP v0.91. The zero value, with N set,
// is N servers on 127.0.0.1:27015 and up, without faults or challenges.
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
	Seed                     int64
	// Challenge makes every server answer queries without a valid
	// challenge with an S2C_CHALLENGE, as servers do since 2020. The
	// challenge is fixed per server and client address.
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
	servers []*fleetServer
	wg      sync.WaitGroup
	closed  atomic.Bool
	loops   []*epollLoop // Linux: the event loops serving the sockets
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
	switch {
	case cfg.N <= 0:
		return nil, fmt.Errorf("sim: fleet of %d servers", cfg.N)
	case cfg.Loss < 0 || cfg.Loss > 1 || cfg.Reorder < 0 || cfg.Reorder > 1 || cfg.Duplicate < 0 || cfg.Duplicate > 1:
		return nil, errors.New("sim: fleet fault probabilities must be between 0 and 1")
	}
	base := cfg.BasePort
	if base == 0 {
		base = 27015
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
	f := &Fleet{}
	for i := range cfg.N {
		port := uint16(base + i)
		c := content(i)
		srv, err := newFleetServer(cfg, i, port, &c)
		if err == nil {
			srv.addr = netip.AddrPortFrom(ip, port)
			srv.content = func() Content { return content(i) }
			err = srv.listen()
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("sim: fleet server %d: %w", i, err)
		}
		f.servers = append(f.servers, srv)
	}
	if err := f.start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("sim: fleet: %w", err)
	}
	return f, nil
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
		s.Sent += srv.sent.Load()
		s.Dropped += srv.dropped.Load()
		s.Challenges += srv.challenges.Load()
	}
	return s
}

// Close stops every server and waits for them.
func (f *Fleet) Close() {
	if f.closed.Swap(true) {
		return
	}
	f.halt()
}

func (f *Fleet) closeSockets() {
	for _, srv := range f.servers {
		srv.close()
	}
}

// fleetServer is one simulated server. Its A2S replies are serialized
// once; one goroutine at a time reads its socket and answers (on Linux, the
// epoll loop the socket belongs to; elsewhere, its own goroutine).
type fleetServer struct {
	addr      netip.AddrPort
	sock      fleetSocket
	challenge bool
	content   func() Content // the server's content, for OGP answers
	ogp       *ogp.Server    // made on the first OGP datagram
	secret    uint64
	info      []byte
	players   []byte
	rules     [][]byte // one datagram per fragment

	loss, reorder, duplicate float64
	rng                      uint64
	held                     []byte // a reordered datagram waiting for the next send
	heldTo                   netip.AddrPort
	scratch                  [16]byte

	requests, sent, dropped, challenges atomic.Int64
}

func newFleetServer(cfg FleetConfig, i int, port uint16, c *Content) (*fleetServer, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	seed := mix64(uint64(cfg.Seed) ^ uint64(i)<<32 ^ 0x9E3779B97F4A7C15)
	s := &fleetServer{
		challenge: cfg.Challenge,
		secret:    mix64(seed),
		loss:      cfg.Loss, reorder: cfg.Reorder, duplicate: cfg.Duplicate,
		rng: seed,
	}
	info, players, rules := c.A2S(port)
	var err error
	if s.info, err = info.AppendBinary(nil); err != nil {
		return nil, err
	}
	if s.players, err = players.AppendBinary(nil); err != nil {
		return nil, err
	}
	payload, err := rules.AppendBinary(nil)
	if err != nil {
		return nil, err
	}
	w := a2s.SplitWriter{Size: cfg.SplitSize}
	if s.rules, err = w.AppendFragments(nil, uint32(i)&0x7FFFFFFF|1, payload); err != nil {
		return nil, err
	}
	return s, nil
}

// answer replies to one request; malformed requests are ignored, as
// real servers do.
func (s *fleetServer) answer(b []byte, from netip.AddrPort) {
	if ogp.Is(b) {
		s.answerOGP(b, from)
		return
	}
	req, err := a2s.ParseRequest(b)
	if err != nil {
		return
	}
	switch req.Type {
	case a2s.TypeInfoRequest, a2s.TypePlayerRequest, a2s.TypeRulesRequest:
	case a2s.TypeChallengeRequestLegacy:
		s.sendChallenge(from)
		return
	default:
		return
	}
	if s.challenge && (!req.HasChallenge || req.Challenge != s.challengeFor(from)) {
		s.sendChallenge(from)
		return
	}
	switch req.Type {
	case a2s.TypeInfoRequest:
		s.send(s.info, from)
	case a2s.TypePlayerRequest:
		s.send(s.players, from)
	case a2s.TypeRulesRequest:
		for _, frag := range s.rules {
			s.send(frag, from)
		}
	}
}

// answerOGP answers an OGP datagram through an ogp.Server of this
// server's own, with the fleet's challenge setting and fault injection.
// The answer is built afresh for each query: OGP scans of a fleet are
// rare, and keeping 10,000 answers would hold about 150 MB.
func (s *fleetServer) answerOGP(b []byte, from netip.AddrPort) {
	if s.ogp == nil {
		s.ogp = &ogp.Server{NoChallenge: !s.challenge, RateLimit: -1,
			Handler: ogp.HandlerFunc(func(netip.AddrPort, *ogp.Query) (*ogp.Answer, error) {
				c := s.content()
				return c.OGP(s.addr.Port()), nil
			})}
	}
	s.ogp.HandlePacket(faultWriter{s}, from, b)
}

// faultWriter sends the ogp.Server's datagrams through the fault injector.
type faultWriter struct{ s *fleetServer }

func (w faultWriter) WriteToUDPAddrPort(b []byte, to netip.AddrPort) (int, error) {
	w.s.send(b, to)
	return len(b), nil
}

// challengeFor is the challenge of a client address: a keyed hash, never
// -1 (which asks for a challenge).
func (s *fleetServer) challengeFor(addr netip.AddrPort) uint32 {
	a := addr.Addr().Unmap().As16()
	h := s.secret ^ uint64(addr.Port())
	for i := 0; i < 16; i += 8 {
		h = mix64(h ^ uint64(a[i])<<56 ^ uint64(a[i+1])<<48 ^ uint64(a[i+2])<<40 ^ uint64(a[i+3])<<32 ^
			uint64(a[i+4])<<24 ^ uint64(a[i+5])<<16 ^ uint64(a[i+6])<<8 ^ uint64(a[i+7]))
	}
	c := uint32(h)
	if c == a2s.AskChallenge {
		c = 0
	}
	return c
}

func (s *fleetServer) sendChallenge(to netip.AddrPort) {
	s.challenges.Add(1)
	s.send(a2s.AppendChallenge(s.scratch[:0], s.challengeFor(to)), to)
}

// send writes one reply datagram through the fault injector. b must stay
// valid: the replies are immutable, except the challenge scratch, which is
// copied when held back.
func (s *fleetServer) send(b []byte, to netip.AddrPort) {
	if s.loss > 0 && s.draw() < s.loss {
		s.dropped.Add(1)
		return
	}
	if s.reorder > 0 && s.held == nil && s.draw() < s.reorder {
		s.held, s.heldTo = append([]byte(nil), b...), to
		s.hold()
		return
	}
	s.write(b, to)
	if s.duplicate > 0 && s.draw() < s.duplicate {
		s.write(b, to)
	}
	s.flush()
}

// flush sends the held-back datagram, if any.
func (s *fleetServer) flush() {
	if s.held == nil {
		return
	}
	b, to := s.held, s.heldTo
	s.held = nil
	s.write(b, to)
}

// draw returns the server's next pseudo-random number in [0, 1).
func (s *fleetServer) draw() float64 {
	s.rng += 0x9E3779B97F4A7C15
	return float64(mix64(s.rng)>>11) / (1 << 53)
}

// mix64 is the splitmix64 finalizer.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xBF58476D1CE4E5B9
	x ^= x >> 27
	x *= 0x94D049BB133111EB
	return x ^ x>>31
}
