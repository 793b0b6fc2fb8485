package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"syscall"

	"github.com/gsq-project/gsq/internal/sim"
	"github.com/gsq-project/gsq/master"
	"github.com/gsq-project/gsq/serverlist"
)

// runFleet serves o.fleet simulated A2S and OGP servers until ctx ends,
// and with --master a master server that lists them.
func runFleet(ctx context.Context, stderr io.Writer, o *serveOptions) error {
	if o.basePort+o.fleet-1 > 65535 {
		return usageError("--fleet %d from --base-port %d does not fit in ports 1-65535", o.fleet, o.basePort)
	}
	ip, err := netip.ParseAddr(cmp.Or(o.fleetHost, "127.0.0.1"))
	if err != nil {
		return usageError("--fleet-host: %q is not an IP address", o.fleetHost)
	}
	cfg := sim.FleetConfig{
		N:         o.fleet,
		BasePort:  o.basePort,
		Host:      ip.String(),
		Loss:      o.loss,
		Reorder:   o.reorder,
		Duplicate: o.duplicate,
		Seed:      o.seed,
		Challenge: !o.noChallenge,
	}
	logf := func(format string, args ...any) { fmt.Fprintf(stderr, "gsq: "+format+"\n", args...) }
	if o.master != "" {
		stop, err := serveFleetMaster(o.master, cfg, logf)
		if err != nil {
			return err
		}
		defer stop()
	}
	err = sim.RunFleet(ctx, cfg, logf)
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("%w (another program holds that port: choose another --base-port)", err)
	}
	return err
}

// fleetList describes a fleet of n simulated servers with the default
// content as a server list does: the A2S_INFO server i answers, at
// addr(i).
func fleetList(n int, addr func(i int) netip.AddrPort) *serverlist.Fleet {
	servers := make([]serverlist.Server, n)
	for i := range servers {
		addr := addr(i)
		c := sim.FleetContent(i)
		info, _, _ := c.A2S(addr.Port())
		servers[i] = serverlist.FromA2S(addr, info)
	}
	return serverlist.NewFleet(servers)
}

// serveFleetMaster starts a master server on addr that lists the fleet
// cfg runs, and returns what stops it. On loopback it lifts the budget
// per source (30 pages a minute, Valve's, to keep a master from
// amplifying spoofed queries, which need a source from afar): it would
// only slow a local demo down.
func serveFleetMaster(addr string, cfg sim.FleetConfig, logf func(string, ...any)) (func(), error) {
	ap, err := netip.ParseAddrPort(addr)
	if ip, perr := netip.ParseAddr(addr); perr == nil {
		ap, err = netip.AddrPortFrom(ip, master.DefaultPort), nil
	}
	if err != nil || !ap.Addr().Is4() {
		return nil, usageError("--master %q: want IP:PORT, an IPv4 address to listen on (port 0: any free port)", addr)
	}
	pc, err := net.ListenPacket("udp4", ap.String())
	if err != nil {
		return nil, fmt.Errorf("--master: %w", err)
	}
	host := netip.MustParseAddr(cfg.Host)
	list := fleetList(cfg.N, func(i int) netip.AddrPort { return netip.AddrPortFrom(host, uint16(cfg.BasePort+i)) })
	s := &master.Server{Handler: master.FleetHandler(list), Logf: logf}
	if ap.Addr().IsLoopback() {
		s.RateLimit = -1
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(pc) }()
	logf("master: lists the %d servers of the fleet on udp %s (try: gsq discover --master %s | gsq scan)", cfg.N, pc.LocalAddr(), pc.LocalAddr())
	return func() {
		s.Shutdown(context.Background())
		if err := <-done; err != nil && !errors.Is(err, master.ErrServerClosed) {
			logf("master: %v", err)
		}
	}, nil
}
