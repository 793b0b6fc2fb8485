package cli

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/gsq-project/gsq/monitor"
	"github.com/gsq-project/gsq/monitor/cluster"
	"github.com/gsq-project/gsq/monitor/poller"
	"github.com/gsq-project/gsq/protocol"
	"github.com/gsq-project/gsq/store"
	"github.com/gsq-project/gsq/web"
)

// clusterOptions are gsq monitor's flags for a fleet of workers (README,
// "Running at scale").
type clusterOptions struct {
	nats   string
	region string
	role   string
}

// The roles of a gsq monitor process.
const (
	roleAll    = "all"    // polls its share and serves the page (the default)
	roleWorker = "worker" // polls its share, serves nothing
	roleAPI    = "api"    // serves the page, the API and /metrics from PostgreSQL, polls nothing
)

func addClusterFlags(cmd *cobra.Command, o *clusterOptions) {
	f := cmd.Flags()
	f.StringVar(&o.nats, "nats", "", "share the servers with other workers through NATS JetStream (nats://HOST:4222); needs a postgres:// --db")
	f.StringVar(&o.region, "region", "", "with --nats: this worker's region, one vantage point (default \""+cluster.DefaultRegion+"\")")
	f.StringVar(&o.role, "role", roleAll, "all (poll and serve), worker (poll only) or api (serve the page, API and /metrics from PostgreSQL only; with --nats, each vantage's live view too)")
}

// check validates the flags against the history's DSN.
func (o *clusterOptions) check(dsn string) error {
	switch o.role {
	case roleAll, roleWorker, roleAPI:
	default:
		return usageError("--role: all, worker or api, not %q", o.role)
	}
	if o.region != "" && o.nats == "" {
		return usageError("--region needs --nats")
	}
	if o.region != "" {
		if err := monitor.CheckRegion(o.region); err != nil {
			return usageError("--region: %v", err)
		}
	}
	if o.role == roleWorker && o.nats == "" {
		return usageError("--role worker needs --nats: workers share the servers through NATS")
	}
	if (o.nats != "" || o.role == roleAPI) && !isPostgres(dsn) {
		return usageError("a fleet (--nats, --role api) shares a PostgreSQL history: give --db postgres://...")
	}
	return nil
}

func isPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// alone reports whether the process runs by itself, as before fleets.
func (o *clusterOptions) alone() bool { return o.nats == "" && o.role == roleAll }

// fleet is a process's part in a fleet.
type fleet struct {
	opts    *clusterOptions
	shared  *store.Cluster
	nc      *nats.Conn
	js      jetstream.JetStream // nil on an API node without --nats
	fleetID string
	node    *cluster.Node // nil on an API node
	svc     *poller.Poller
	view    *cluster.View
	targets []monitor.SharedTarget
	log     *logger
}

// joinFleet connects to the fleet: the shared state in st, and NATS,
// which a worker needs and an API node with --nats follows the regions'
// observations on. It loads the fleet's target list into the loader and
// returns the config that includes it.
func joinFleet(ctx context.Context, o *clusterOptions, st store.Store, loader *monitor.Loader, log *logger) (*fleet, *monitor.Config, error) {
	shared, err := store.ClusterOf(st)
	if err != nil {
		return nil, nil, usageError("%v", err)
	}
	f := &fleet{opts: o, shared: shared, log: log}
	if f.targets, err = sharedTargets(ctx, shared); err != nil {
		return nil, nil, withCode(ExitFailure, err)
	}
	loader.Shared = f.targets
	cfg, err := loader.Load()
	if err != nil {
		return nil, nil, usageError("%v", err)
	}
	if o.nats == "" {
		return f, cfg, nil // an API node: PostgreSQL alone
	}
	// The client reconnects for ever: a worker outlives a NATS outage,
	// polling what it holds until its leases would have expired.
	f.nc, err = nats.Connect(o.nats, nats.Name("gsq monitor"), nats.MaxReconnects(-1), nats.ReconnectWait(time.Second),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) { log.Printf("monitor: NATS disconnected: %v", err) }),
		nats.ReconnectHandler(func(c *nats.Conn) { log.Printf("monitor: NATS reconnected to %s", c.ConnectedUrlRedacted()) }))
	if err != nil {
		return nil, nil, withCode(ExitFailure, fmt.Errorf("monitor: NATS %s: %w", o.nats, err))
	}
	if f.js, err = jetstream.New(f.nc); err != nil {
		f.nc.Close()
		return nil, nil, withCode(ExitFailure, err)
	}
	// The fleet is its database: workers of one database share its name,
	// and their buckets; another fleet on the same NATS has its own.
	if f.fleetID, err = shared.FleetID(ctx); err != nil {
		f.nc.Close()
		return nil, nil, withCode(ExitFailure, err)
	}
	if o.role == roleAPI {
		return f, cfg, nil
	}
	f.node, err = cluster.NewNode(ctx, f.js, cluster.NodeOptions{
		Options: f.natsOptions(cfg),
		Store:   shared, Config: cfg,
		Verdict: func(v monitor.Verdict) { f.svc.Verdict(v) },
		State:   func(name string) (monitor.ServerState, bool) { return f.svc.Server(name) },
	})
	if err != nil {
		f.nc.Close()
		return nil, nil, withCode(ExitFailure, err)
	}
	return f, cfg, nil
}

// natsOptions are the fleet's options on NATS, for cfg's servers.
func (f *fleet) natsOptions(cfg *monitor.Config) cluster.Options {
	return cluster.Options{Region: f.opts.region, Fleet: f.fleetID, Heartbeat: cluster.HeartbeatFor(shortestInterval(cfg)), Logf: f.log.Printf}
}

// shortestInterval is the shortest poll interval of cfg's servers (the
// default one without servers).
func shortestInterval(cfg *monitor.Config) time.Duration {
	d := monitor.DefaultInterval
	for i, srv := range cfg.Servers {
		if i == 0 || srv.Interval < d {
			d = srv.Interval
		}
	}
	return d
}

// shard is what the poller polls: the node's share, or nothing on an API
// node.
func (f *fleet) shard() poller.Sharding {
	if f.node == nil {
		return cluster.Nothing{}
	}
	return f.node
}

// attach takes the poller, and returns what the page serves.
func (f *fleet) attach(svc *poller.Poller) web.Live {
	f.svc = svc
	f.view = cluster.NewView(svc, f.node, f.shared)
	if f.node == nil && f.js != nil {
		f.view.Follow(f.js, f.natsOptions(svc.Config()))
	}
	return f.view
}

// run runs the node and the view until ctx is done.
func (f *fleet) run(ctx context.Context) {
	if f.node != nil {
		go f.node.Run(ctx)
		f.log.Printf("monitor: worker %s of region %s, sharing the servers through NATS", f.node.ID(), f.node.Region())
	}
	// A worker's page is its own, on a free port, for a look from the
	// machine; reading every verdict each heartbeat is for the pages
	// people use.
	if f.opts.role != roleWorker {
		go f.view.Run(ctx, cluster.DefaultHeartbeat, f.log.Printf)
	}
}

// reloaded hands the node the poller's new config.
func (f *fleet) reloaded() {
	if f.node != nil {
		f.node.SetConfig(f.svc.Config())
	}
}

func (f *fleet) close() {
	if f.nc != nil {
		f.nc.Close()
	}
}

// watchTargets reads the fleet's target list every heartbeat and sends
// it when it changed, until ctx is done.
func (f *fleet) watchTargets(ctx context.Context) <-chan []monitor.SharedTarget {
	ch := make(chan []monitor.SharedTarget)
	go func() {
		t := time.NewTicker(cluster.DefaultHeartbeat)
		defer t.Stop()
		last := f.targets
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			ts, err := sharedTargets(ctx, f.shared)
			if err != nil {
				if ctx.Err() == nil {
					f.log.Printf("monitor: reading the fleet's targets: %v", err)
				}
				continue
			}
			if slices.EqualFunc(ts, last, sameShared) {
				continue
			}
			select {
			case ch <- ts:
				last = ts
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch
}

func sameShared(a, b monitor.SharedTarget) bool {
	return a.Name == b.Name && a.Address == b.Address && a.Protocol == b.Protocol &&
		slices.Equal(a.Vantages, b.Vantages) && a.Quorum == b.Quorum
}

func sharedTargets(ctx context.Context, shared *store.Cluster) ([]monitor.SharedTarget, error) {
	ts, err := shared.Targets(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]monitor.SharedTarget, len(ts))
	for i, t := range ts {
		out[i] = monitor.SharedTarget{Name: t.Name, Address: t.Address, Protocol: t.Protocol,
			Vantage: monitor.Vantage{Vantages: t.Vantages, Quorum: t.Quorum}}
	}
	return out, nil
}

// newMonitorTargetsCmd is `gsq monitor targets`: the fleet's target list
// in PostgreSQL.
func newMonitorTargetsCmd(env *Env) *cobra.Command {
	var db string
	cmd := &cobra.Command{
		Use:   "targets add|rm|ls --db postgres://...",
		Short: "Manage the target list a fleet of monitor workers shares in PostgreSQL",
		Long: `Manage the target list of a fleet of gsq monitor workers (--nats), kept in
PostgreSQL. Every worker reads it every heartbeat (5s) and polls what was
added, or stops polling what was removed, without a restart; a worker
also polls the servers of its own --config, --target and -f.

  gsq monitor targets add eu1 203.0.113.10 --vantages eu,us --quorum 2 --db postgres://...
  gsq monitor targets rm eu1 --db postgres://...
  gsq monitor targets ls --db postgres://...`,
		Args: cobra.NoArgs,
	}
	cmd.PersistentFlags().StringVar(&db, "db", "", "the fleet's PostgreSQL history (postgres://...)")
	open := func(ctx context.Context) (store.Store, *store.Cluster, error) {
		if !isPostgres(db) {
			return nil, nil, usageError("--db: the fleet's target list lives in PostgreSQL: give postgres://...")
		}
		st, err := store.Open(ctx, db)
		if err != nil {
			return nil, nil, withCode(ExitFailure, err)
		}
		shared, err := store.ClusterOf(st)
		if err != nil {
			st.Close()
			return nil, nil, withCode(ExitFailure, err)
		}
		return st, shared, nil
	}

	var proto string
	var vantages []string
	var quorum int
	add := &cobra.Command{
		Use:   "add NAME HOST[:PORT]",
		Short: "Add a server to the fleet's target list, or change the one of that name",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			t := monitor.SharedTarget{Name: args[0], Address: args[1], Protocol: proto, Vantage: monitor.Vantage{Vantages: vantages, Quorum: quorum}}
			// The same checks as a config's server: load it alone.
			if _, err := (&monitor.Loader{Shared: []monitor.SharedTarget{t}}).Load(); err != nil {
				return usageError("%v", err)
			}
			st, shared, err := open(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			err = shared.AddTarget(cmd.Context(), store.Target{Name: t.Name, Address: t.Address, Protocol: t.Protocol, Vantages: t.Vantages, Quorum: t.Quorum})
			if err != nil {
				return withCode(ExitFailure, err)
			}
			fmt.Fprintf(env.Stdout, "added %s (%s)\n", t.Name, t.Address)
			return nil
		},
	}
	add.Flags().StringVar(&proto, "protocol", "", strings.Join(protocol.Names(), " or ")+" (default: the workers' --protocol)")
	add.Flags().StringSliceVar(&vantages, "vantages", nil, "the regions that poll it, comma-separated (default: every region that has workers)")
	add.Flags().IntVar(&quorum, "quorum", 0, "how many of them must agree it is down, or up (default: a majority)")

	rm := &cobra.Command{
		Use:   "rm NAME",
		Short: "Remove a server from the fleet's target list (its history stays)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, shared, err := open(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			ok, err := shared.RemoveTarget(cmd.Context(), args[0])
			if err != nil {
				return withCode(ExitFailure, err)
			}
			if !ok {
				return withCode(ExitFailure, fmt.Errorf("monitor targets: no target %q", args[0]))
			}
			fmt.Fprintf(env.Stdout, "removed %s\n", args[0])
			return nil
		},
	}
	ls := &cobra.Command{
		Use:   "ls",
		Short: "List the fleet's target list",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, shared, err := open(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			ts, err := shared.Targets(cmd.Context())
			if err != nil {
				return withCode(ExitFailure, err)
			}
			tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tADDRESS\tPROTOCOL\tVANTAGES\tQUORUM")
			for _, t := range ts {
				q := "majority"
				if t.Quorum > 0 {
					q = fmt.Sprint(t.Quorum)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.Name, t.Address, cmp.Or(t.Protocol, "-"), cmp.Or(strings.Join(t.Vantages, ","), "all"), q)
			}
			return tw.Flush()
		},
	}
	cmd.AddCommand(add, rm, ls)
	return cmd
}
