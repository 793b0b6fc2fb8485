package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/gsq-project/gsq/monitor"
	"github.com/gsq-project/gsq/monitor/poller"
	"github.com/gsq-project/gsq/protocol"
	"github.com/gsq-project/gsq/store"
	"github.com/gsq-project/gsq/web"
)

func init() { register(newMonitorCmd) }

// monitorOptions are gsq monitor's flags.
type monitorOptions struct {
	config    string
	targets   []string
	lists     []string
	interval  time.Duration
	downAfter time.Duration
	protocol  string
	db        string
	listen    string
	webhooks  []string
	token     string
	demo      bool
	demoSize  int
	cluster   clusterOptions
}

func newMonitorCmd(env *Env) *cobra.Command {
	o := &monitorOptions{}
	cmd := &cobra.Command{
		Use:   "monitor [--config monitor.yaml] [--target NAME=HOST:PORT]... [-f list.txt]",
		Short: "Watch servers over time: history, a web page with charts, Prometheus metrics, a JSON API and alerts",
		Long: `Poll game servers again and again, keep their history, and serve it.

Each server is polled every --interval (30s) on shared sockets; it is down
after 3 failed polls in a row spanning at least --down-after (60s), so one
lost datagram is no flap. The history (samples, 1-minute, 1-hour and 1-day
rollups, player sessions, records, map changes) goes to a SQLite file
(default $XDG_STATE_HOME/gsq/monitor.db) or, with a postgres:// DSN, to
PostgreSQL. On --listen (127.0.0.1:9815) it serves:

  /                   the page: server list, a page per server with charts
  /api/v1/...         the JSON API, and /api/v1/events (server-sent events)
  /metrics            Prometheus metrics (gameserver_up, _players, ...)
  /probe?target=HOST:PORT&protocol=a2s   blackbox-style probe
  /badge/NAME.svg     a status badge

HTTP connections are capped at 1024 (fewer under a low limit on open
files: 256 descriptors stay for polling and the history) and at 128 per
client address (an IPv6 /64); a connection idle for 30s is closed, and
one of the address holding the most sooner when a new connection needs
its place, so idle connections cannot lock an admin out. A connection refused because
all in its way are busy gets a 503; /metrics counts both
(gsq_http_connections_evicted_total, gsq_http_connections_refused_total).
With a token, 5 wrong tokens posted to /login from one address lock it
out for 5 minutes (429).

Alerts that come together go as one message per webhook ("37 servers on
203.0.113.10 are down", and the list; alert_group_window, 3s), each webhook
is sent no more than its service takes (Discord 5 per 2 s, Slack 1 a second;
a webhook's rate: key), and a 429's Retry-After is honoured. What the alerts
announced, and those not yet delivered, are kept in the history database:
a restart neither pages again nor loses an alert.

A config's discover: entries keep the server list: the monitor asks a
master server or the Steam Web API every so often, adds the servers listed
and retires those gone (gsq discover --help; docs/monitor-config.md).

SIGHUP reads the config again; a config with errors is refused and the
running one kept. docs/monitor-config.md documents monitor.yaml.

  gsq monitor --demo                      a simulated fleet, and its page
  gsq monitor --target eu1=203.0.113.10 --webhook https://...
  gsq monitor -f servers.txt --interval 1m
  gsq monitor export --server eu1 --from -24h > eu1.csv`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMonitor(cmd.Context(), env, cmd, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.config, "config", "", "the config file (YAML; see docs/monitor-config.md)")
	f.StringArrayVar(&o.targets, "target", nil, "a server to monitor: NAME=HOST[:PORT], or HOST[:PORT] (repeatable)")
	f.StringArrayVarP(&o.lists, "file", "f", nil, "a target list, as gsq scan reads: one HOST[:PORT] a line (repeatable)")
	durationFlag(cmd, &o.interval, "interval", 0, "how often each server is polled (default 30s)")
	durationFlag(cmd, &o.downAfter, "down-after", 0, "a server is down when its failures span at least this long (default 60s)")
	f.StringVar(&o.protocol, "protocol", "", strings.Join(protocol.Names(), " or ")+": the protocol of servers that name none (default "+protocol.Default.Name+")")
	f.StringVar(&o.db, "db", "", "the history: a SQLite file, or a postgres:// DSN (default $XDG_STATE_HOME/gsq/monitor.db)")
	f.StringVar(&o.listen, "listen", "", "the HTTP address of the page, the API and /metrics (default 127.0.0.1:9815)")
	f.StringArrayVar(&o.webhooks, "webhook", nil, "a webhook URL for alerts on down and up: Discord, Slack, any JSON receiver, or a shoutrrr URL (telegram://, ntfy://, smtp://...) (repeatable)")
	f.StringVar(&o.token, "token", "", "a bearer token that guards the page, the API and /metrics (or GSQ_MONITOR_TOKEN)")
	f.BoolVar(&o.demo, "demo", false, "start a small simulated fleet whose players come and go, and monitor it")
	f.IntVar(&o.demoSize, "demo-servers", 6, "with --demo: how many simulated servers")
	addClusterFlags(cmd, &o.cluster)
	cmd.AddCommand(newMonitorExportCmd(env))
	cmd.AddCommand(newMonitorForgetCmd(env))
	cmd.AddCommand(newMonitorTargetsCmd(env))
	cmd.AddCommand(newMonitorMigrateCmd(env))
	return cmd
}

// logger writes timestamped lines to stderr, one at a time.
type logger struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *logger) Printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, "%s gsq: %s\n", time.Now().Format("2006-01-02 15:04:05"), strings.TrimRight(fmt.Sprintf(format, args...), "\n"))
}

func runMonitor(ctx context.Context, env *Env, cmd *cobra.Command, o *monitorOptions) error {
	log := &logger{w: env.Stderr}
	// SIGHUP reloads the config; caught from the start, so that one sent
	// early does not end the monitor as its default action would.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	// A reader of stdout or stderr that is gone (`gsq monitor | cat`, and
	// Ctrl-C ended cat too) fails a write with EPIPE instead of killing
	// the monitor half-way through writing its history and removing the
	// demo's temporary directory.
	signal.Ignore(syscall.SIGPIPE)
	loader := &monitor.Loader{
		Path: o.config, Targets: o.targets, Lists: o.lists,
		Interval: o.interval, DownAfter: o.downAfter, Protocol: o.protocol,
		Listen: o.listen, DB: o.db, Webhooks: o.webhooks,
		Token: o.token, TokenFrom: "--token", Warnf: log.Printf,
	}
	if o.token == "" {
		loader.Token, loader.TokenFrom = env.Getenv("GSQ_MONITOR_TOKEN"), "GSQ_MONITOR_TOKEN"
	}
	if o.demo {
		stop, err := startDemo(env, loader, o)
		if err != nil {
			return err
		}
		defer stop()
	}
	cfg, err := loader.Load()
	if err != nil {
		return usageError("%v", err)
	}
	token := string(cfg.Token)
	disc, err := newMonitorDiscovery(env, cfg, log) // monitor_discover.go
	if err != nil {
		return err
	}
	if len(cfg.Servers) == 0 && disc == nil {
		log.Printf("monitor: no servers configured: give --config, --target or -f (or try --demo); /probe works meanwhile")
	}

	dsn := cfg.DB
	if dsn == "" {
		if dsn, err = store.DefaultPath(); err != nil {
			return withCode(ExitFailure, err)
		}
	}
	if err := o.cluster.check(dsn); err != nil {
		return err
	}
	st, err := store.Open(ctx, dsn, store.WithRetention(cfg.Retention), store.WithLogf(log.Printf))
	if err != nil {
		return withCode(ExitFailure, err)
	}
	defer st.Close()
	maint := &monitor.Maintenance{}
	popts := poller.Options{Store: st, Logf: log.Printf, Maintenance: maint}
	var fl *fleet // nil when alone (monitor_cluster.go)
	if !o.cluster.alone() {
		if fl, cfg, err = joinFleet(ctx, &o.cluster, st, loader, log); err != nil {
			return err
		}
		defer fl.close()
		popts.Shard = fl.shard()
		if fl.node != nil { // a worker: its samples carry its region
			popts.Vantage = fl.node.Region()
		}
	}

	listen := cfg.Listen
	if o.cluster.role == roleWorker {
		listen = "127.0.0.1:0" // its own view on a free loopback port: the fleet's page is the API nodes'
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return withCode(ExitFailure, fmt.Errorf("monitor: listen on %s: %w", listen, err))
	}
	svc, err := poller.New(ctx, cfg, popts)
	if err != nil {
		ln.Close()
		return withCode(ExitFailure, err)
	}
	var live web.Live = svc
	var targets <-chan []monitor.SharedTarget
	if fl != nil {
		live = fl.attach(svc)
		targets = fl.watchTargets(ctx)
	}
	h := web.New(st, live, web.Options{
		Token: token, GuardBadges: cfg.GuardBadges, PlayerMetrics: cfg.PlayerMetrics, Logf: log.Printf, Config: svc.Config,
		Maintenance: maint, TimeZone: cfg.TimeZone,
	})
	if err := h.LoadMaintenance(ctx); err != nil {
		ln.Close()
		return withCode(ExitFailure, err)
	}
	hs := web.NewServer(cfg.Listen, h)
	httpDone := make(chan error, 1)
	go func() { httpDone <- hs.Serve(ln) }()

	url := "http://" + pageHost(ln.Addr().String()) + "/"
	if token == "" && !loopback(ln.Addr()) {
		log.Printf("monitor: listening on %s without a token: anyone who reaches it sees every server and may send probes (give --token)", ln.Addr())
	}
	discovering := ""
	if disc != nil {
		discovering = fmt.Sprintf(" (and those of %s)", plural(len(disc.sources), "discover source"))
	}
	log.Printf("monitor: %s%s, history in %s", plural(len(cfg.Servers), "server"), discovering, store.Describe(dsn))
	fmt.Fprintf(env.Stdout, "gsq monitor: the page is at %s (metrics at %smetrics)\n", url, url)

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	runDone := make(chan error, 1)
	go func() { runDone <- svc.Run(runCtx) }()
	if fl != nil {
		fl.run(runCtx)
	}
	static := cfg // the config's own servers, without the discovered ones
	var discovered <-chan struct{}
	if disc != nil {
		discovered = disc.changed
		discDone := make(chan struct{})
		go func() {
			defer close(discDone)
			disc.run(runCtx)
		}()
		defer func() { cancel(); <-discDone }()
	}
	go h.WarmRanks(runCtx)

	var runErr error
loop:
	for {
		select {
		case <-hup:
			static = reload(ctx, loader, svc, log, disc, static)
			if fl != nil {
				fl.reloaded()
			}
		case ts := <-targets:
			loader.Shared = ts
			static = reload(ctx, loader, svc, log, disc, static)
			fl.reloaded()
		case <-discovered:
			disc.apply(ctx, svc, static)
		case runErr = <-runDone:
			break loop
		case err := <-httpDone:
			cancel()
			<-runDone
			return withCode(ExitFailure, fmt.Errorf("monitor: http: %w", err))
		}
	}
	sctx, scancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer scancel()
	hs.Shutdown(sctx)
	if runErr != nil {
		return withCode(ExitFailure, runErr)
	}
	if err := st.Close(); err != nil {
		return withCode(ExitFailure, err)
	}
	log.Printf("monitor: stopped; history written")
	return ctx.Err()
}

// reload reads the config again for SIGHUP, keeping the servers
// discovered so far, and returns the config's own (static, when it is
// refused). A config with problems changes nothing: the running one
// stays, and the log says why.
func reload(ctx context.Context, loader *monitor.Loader, svc *poller.Poller, log *logger, disc *monitorDiscovery, static *monitor.Config) *monitor.Config {
	running := svc.Config()
	own, _, err := loader.Reload(running)
	if err != nil {
		log.Printf("monitor: reload refused, the running config stays: %v", err)
		return static
	}
	next := disc.merge(own)
	ch := monitor.Diff(running, next)
	if err := svc.Reload(ctx, next, ch); err != nil {
		log.Printf("monitor: reload failed, the running config stays: %v", err)
		return static
	}
	log.Printf("monitor: reloaded: %s (%d added, %d removed, %d changed)", plural(len(next.Servers), "server"), len(ch.Added), len(ch.Removed), len(ch.Changed))
	if r := ch.NeedRestart(); len(r) > 0 {
		log.Printf("monitor: %s changed: takes effect at the next start", strings.Join(r, ", "))
	}
	if disc.sourcesChanged(own) {
		log.Printf("monitor: discover changed: its sources are the ones the monitor started with until the next start")
	}
	return own
}

// pageHost is the host:port to print for a listener's address: a
// wildcard address is shown as 127.0.0.1.
func pageHost(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// loopback reports whether a listener's address is a loopback one.
func loopback(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}
