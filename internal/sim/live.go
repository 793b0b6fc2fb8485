package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/gsq-project/gsq/a2s"
)

// LiveConfig describes a small fleet of simulated A2S servers whose
// players come and go, for `gsq monitor --demo` and the monitor's tests.
// Unlike [Fleet], whose replies never change, each server's content moves
// every Tick, and a server can be stopped and started again on its port.
type LiveConfig struct {
	N    int    // number of servers
	Host string // address to listen on (default 127.0.0.1); ports are free ones
	// Tick is how often the players change (default 5s).
	Tick time.Duration
	// Seed seeds the players' comings and goings.
	Seed uint64
	// Names, when set, gives server i the announced name Names[i] (when
	// i < len(Names)) instead of a made-up one.
	Names []string
}

// LiveFleet is a running [LiveConfig] fleet.
type LiveFleet struct {
	cfg  LiveConfig
	stop chan struct{}
	wg   sync.WaitGroup

	mu      sync.Mutex
	servers []*liveServer
}

// liveServer is one server of a LiveFleet: its content and handler, which
// outlive the socket when the server is stopped.
type liveServer struct {
	addr    netip.AddrPort
	content Content
	handler *a2s.StaticHandler
	srv     *Server // nil while stopped
	rng     *rand.Rand
	next    int // the number of the next player to join
}

// demoMaps are the maps the servers of a live fleet cycle through.
var demoMaps = [...]string{"de_dust2", "cs_office", "de_inferno", "de_nuke", "de_mirage", "de_overpass"}

// StartLiveFleet starts cfg's servers on free ports.
func StartLiveFleet(cfg LiveConfig) (*LiveFleet, error) {
	if cfg.N <= 0 || cfg.N > 1000 {
		return nil, fmt.Errorf("sim: live fleet of %d servers (1 to 1000)", cfg.N)
	}
	if cfg.Host == "" {
		cfg.Host = "127.0.0.1"
	}
	if cfg.Tick <= 0 {
		cfg.Tick = 5 * time.Second
	}
	ip, err := netip.ParseAddr(cfg.Host)
	if err != nil {
		return nil, fmt.Errorf("sim: live fleet host: %w", err)
	}
	f := &LiveFleet{cfg: cfg, stop: make(chan struct{})}
	for i := range cfg.N {
		ls := &liveServer{handler: new(a2s.StaticHandler), rng: rand.New(rand.NewPCG(cfg.Seed, uint64(i)))}
		ls.content = Content{
			Name:       fmt.Sprintf("gsq demo server #%d", i+1),
			Map:        demoMaps[i%len(demoMaps)],
			Folder:     "cstrike",
			Game:       "Counter-Strike: Source",
			AppID:      240,
			MaxPlayers: 16 + 8*(i%3),
			Version:    "1.0.0.0",
			Keywords:   "gsq,demo",
		}
		if i < len(cfg.Names) {
			ls.content.Name = cfg.Names[i]
		}
		for range ls.rng.IntN(ls.content.MaxPlayers/2 + 1) {
			ls.join()
		}
		f.servers = append(f.servers, ls)
		err := ls.publish()
		if err == nil {
			err = ls.listen(netip.AddrPortFrom(ip, 0))
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("sim: live fleet server %d: %w", i, err)
		}
	}
	f.wg.Add(1)
	go f.run()
	return f, nil
}

// join adds a player.
func (ls *liveServer) join() {
	ls.next++
	ls.content.Players = append(ls.content.Players, Player{
		Name:  fmt.Sprintf("%s%d", demoNames[ls.rng.IntN(len(demoNames))], ls.next),
		Score: int32(ls.rng.IntN(20)),
	})
}

var demoNames = [...]string{"Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi", "Ivan", "Judy"}

// step moves the content on: players leave and join (the count drifts
// between empty and full), scores and times grow, and now and then the
// map changes.
func (ls *liveServer) step(tick time.Duration) {
	c := &ls.content
	for i := 0; i < len(c.Players); i++ {
		if ls.rng.IntN(8) == 0 {
			c.Players = append(c.Players[:i], c.Players[i+1:]...)
			i--
			continue
		}
		c.Players[i].Score += int32(ls.rng.IntN(3))
		c.Players[i].Duration += tick
	}
	for range ls.rng.IntN(3) {
		if len(c.Players) < c.MaxPlayers {
			ls.join()
		}
	}
	if ls.rng.IntN(40) == 0 {
		c.Map = demoMaps[ls.rng.IntN(len(demoMaps))]
	}
}

// publish hands the content to the handler.
func (ls *liveServer) publish() error {
	if err := ls.content.Validate(); err != nil {
		return err
	}
	info, players, rules := ls.content.A2S(ls.addr.Port())
	return ls.handler.Set(info, players, rules)
}

// listen binds addr (port 0: a free one) and serves.
func (ls *liveServer) listen(addr netip.AddrPort) error {
	s, err := Listen(net.UDPAddrFromAddrPort(addr), false)
	if err != nil {
		return err
	}
	s.Mux.A2S = &a2s.Server{Handler: ls.handler, RateLimit: -1}
	first := !ls.addr.IsValid()
	ls.addr, ls.srv = s.Addr(), s
	if first { // the info's game port is the one just bound
		if err := ls.publish(); err != nil {
			s.Shutdown(context.Background())
			return err
		}
	}
	s.Start()
	return nil
}

func (f *LiveFleet) run() {
	defer f.wg.Done()
	t := time.NewTicker(f.cfg.Tick)
	defer t.Stop()
	for {
		select {
		case <-f.stop:
			return
		case <-t.C:
		}
		f.mu.Lock()
		for _, ls := range f.servers {
			ls.step(f.cfg.Tick)
			_ = ls.publish() // the content stays valid: names and counts are bounded
		}
		f.mu.Unlock()
	}
}

// Len is the number of servers.
func (f *LiveFleet) Len() int { return len(f.servers) }

// Addr is the address of server i.
func (f *LiveFleet) Addr(i int) netip.AddrPort {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.servers[i].addr
}

// Name is the name server i announces.
func (f *LiveFleet) Name(i int) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.servers[i].content.Name
}

// Update changes server i's content with fn, at once: a test sets the
// map or the players it wants the next query to see. The fleet's own
// ticks go on changing it too; a test that updates sets a long Tick.
func (f *LiveFleet) Update(i int, fn func(*Content)) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	ls := f.servers[i]
	fn(&ls.content)
	return ls.publish()
}

// Stop closes server i's socket: it no longer answers, and the kernel
// reports its port closed. Stopping a stopped server does nothing.
func (f *LiveFleet) Stop(i int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ls := f.servers[i]
	if ls.srv != nil {
		ls.srv.Shutdown(context.Background())
		ls.srv = nil
	}
}

// Start serves server i again on its port, after Stop.
func (f *LiveFleet) Start(i int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	ls := f.servers[i]
	if ls.srv != nil {
		return nil
	}
	return ls.listen(ls.addr)
}

// Close stops every server.
func (f *LiveFleet) Close() {
	select {
	case <-f.stop:
	default:
		close(f.stop)
	}
	f.wg.Wait()
	for i := range f.servers {
		f.Stop(i)
	}
}
