package cli

import (
	"context"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/gsq-project/gsq/master"
	"github.com/gsq-project/gsq/monitor"
	"github.com/gsq-project/gsq/monitor/poller"
	"github.com/gsq-project/gsq/serverlist"
	"github.com/gsq-project/gsq/steamapi"
)

// monitorDiscovery runs the discover: sources of gsq monitor's config:
// each lists its servers at once and then every Every, and its Roster
// adds the new ones and retires those missing from RetireAfter listings
// in a row. The monitor's servers are the config's and, after them, the
// rosters' (merge); changed says when a roster changed.
type monitorDiscovery struct {
	sources []*monitor.Discovery
	steam   []*steamapi.Client // per source; nil for a master
	masters *master.Client
	log     *logger

	mu      sync.Mutex // guards rosters
	rosters []*monitor.Roster
	changed chan struct{}
}

// newMonitorDiscovery prepares the sources of cfg; nil when there is
// none. A Web API source without a key is a usage error.
func newMonitorDiscovery(env *Env, cfg *monitor.Config, log *logger) (*monitorDiscovery, error) {
	if len(cfg.Discover) == 0 {
		return nil, nil
	}
	md := &monitorDiscovery{log: log, changed: make(chan struct{}, 1), masters: &master.Client{}}
	clients := map[string]*steamapi.Client{}
	for i := range cfg.Discover {
		src := &cfg.Discover[i]
		md.sources = append(md.sources, src)
		md.rosters = append(md.rosters, monitor.NewRoster(src))
		if !src.Steam() {
			md.steam = append(md.steam, nil)
			continue
		}
		key := string(src.Key)
		if key == "" {
			key = strings.TrimSpace(env.Getenv(src.KeyEnv))
		}
		if key == "" {
			var err error
			if key, err = steamKeyFromConfig(env, rconConfigPath(env)); err != nil {
				return nil, err
			}
		}
		if key == "" {
			return nil, usageError("monitor: discover %s (%s): no Steam Web API key: set %s, or give key_file or key_env (gsq ships no key: https://steamcommunity.com/dev/apikey)", src.Name, src.Origin, src.KeyEnv)
		}
		// One client per key and API: its pacing is the key's, whatever
		// the sources that use it.
		id := key + "\x00" + src.APIURL
		c, ok := clients[id]
		if !ok {
			c = &steamapi.Client{Key: key, BaseURL: src.APIURL, Logf: func(format string, args ...any) { log.Printf("monitor: discover: "+format, args...) }}
			clients[id] = c
		}
		md.steam = append(md.steam, c)
	}
	return md, nil
}

// run lists every source at once and then every Every, until ctx ends.
func (md *monitorDiscovery) run(ctx context.Context) {
	defer md.masters.Close()
	var wg sync.WaitGroup
	for i := range md.sources {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(md.sources[i].Every)
			defer t.Stop()
			for {
				md.listOnce(ctx, i)
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
			}
		}()
	}
	wg.Wait()
}

// listOnce lists source i once and updates its roster as the list
// comes: what it holds stays bounded by max_servers, whatever the list.
func (md *monitorDiscovery) listOnce(parent context.Context, i int) {
	src, r := md.sources[i], md.rosters[i]
	// A listing may take as long as the interval, and no longer.
	ctx, cancel := context.WithTimeout(parent, src.Every)
	defer cancel()
	listed, relays := 0, 0
	saw := func(a netip.AddrPort) {
		if serverlist.IsRelay(a) {
			relays++
			return
		}
		listed++
		md.mu.Lock()
		r.Saw(a)
		md.mu.Unlock()
	}
	md.mu.Lock()
	r.Begin()
	md.mu.Unlock()
	var err error
	if c := md.steam[i]; c != nil {
		_, err = c.List(ctx, src.Filter, func(s *serverlist.Server) bool {
			if src.Region == serverlist.RegionWorld || s.Region == src.Region {
				saw(s.Addr)
			}
			return true
		})
	} else {
		_, err = md.masters.List(ctx, src.Master, master.Query{Region: src.Region, Filter: src.Filter}, func(page []netip.AddrPort) bool {
			for _, a := range page {
				saw(a)
			}
			return true
		})
	}
	md.mu.Lock()
	added, retired := r.End(err == nil)
	members, full := r.Len(), r.Full
	md.mu.Unlock()

	if parent.Err() != nil {
		return // the monitor is stopping
	}
	if err != nil {
		md.log.Printf("monitor: discover %s: listing incomplete (%d servers), none retired this time: %v", src.Name, listed, err)
	}
	if len(added)+len(retired) > 0 {
		md.log.Printf("monitor: discover %s: %d servers listed, %d added, %d retired: %d in all", src.Name, listed, len(added), len(retired), members)
		select {
		case md.changed <- struct{}{}:
		default:
		}
	}
	if full > 0 {
		md.log.Printf("monitor: discover %s: %d servers left out: max_servers (%d) reached", src.Name, full, src.MaxServers)
	}
	if relays > 0 && len(added) > 0 {
		md.log.Printf("monitor: discover %s: %d relay addresses (169.254.x.x) skipped: no query reaches them", src.Name, relays)
	}
}

// merge returns cfg with the rosters' servers after its own: each with
// cfg's settings, none whose name or address is taken, monitor.MaxServers
// in all at most. cfg itself is not changed.
func (md *monitorDiscovery) merge(cfg *monitor.Config) *monitor.Config {
	if md == nil {
		return cfg
	}
	next := *cfg
	next.Servers = append([]monitor.Server(nil), cfg.Servers...)
	names := map[string]bool{}
	addrs := map[string]bool{}
	for _, s := range cfg.Servers {
		names[s.Name] = true
		addrs[s.Protocol+" "+s.Address] = true
	}
	md.mu.Lock()
	defer md.mu.Unlock()
	for i, r := range md.rosters {
		// The source as the config now has it (a reload may have
		// relabelled it); the roster stays the one of the first config.
		src := md.sources[i]
		for j := range next.Discover {
			if next.Discover[j].Name == src.Name {
				src = &next.Discover[j]
			}
		}
		for _, a := range r.Members() {
			if len(next.Servers) >= monitor.MaxServers {
				return &next
			}
			s := next.DiscoveredServer(src, a)
			key := s.Protocol + " " + s.Address
			if names[s.Name] || addrs[key] {
				continue
			}
			names[s.Name], addrs[key] = true, true
			next.Servers = append(next.Servers, s)
		}
	}
	return &next
}

// apply gives the poller the config's servers and the rosters' as they
// are now.
func (md *monitorDiscovery) apply(ctx context.Context, svc *poller.Poller, static *monitor.Config) {
	running := svc.Config()
	next := md.merge(static)
	ch := monitor.Diff(running, next)
	if ch.Empty() {
		return
	}
	if err := svc.Reload(ctx, next, ch); err != nil {
		md.log.Printf("monitor: discover: the new servers could not be applied: %v", err)
		return
	}
	md.log.Printf("monitor: %d servers (%d added, %d retired)", len(next.Servers), len(ch.Added), len(ch.Removed))
}

// sourcesChanged reports whether cfg's discover: sources differ from the
// running ones by name, list or filter (a reload does not restart them).
func (md *monitorDiscovery) sourcesChanged(cfg *monitor.Config) bool {
	var running []*monitor.Discovery
	if md != nil {
		running = md.sources
	}
	if len(cfg.Discover) != len(running) {
		return true
	}
	for i, s := range running {
		n := &cfg.Discover[i]
		if n.Name != s.Name || n.Master != s.Master || n.APIURL != s.APIURL || n.Filter != s.Filter || n.Region != s.Region ||
			n.Every != s.Every || n.RetireAfter != s.RetireAfter || n.MaxServers != s.MaxServers {
			return true
		}
	}
	return false
}
