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
	"github.com/gsq-project/gsq/monitor/service"
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

SIGHUP reads the config again; a config with errors is refused and the
running one kept. docs/monitor-config.md documents monitor.yaml.

  gsq monitor --demo                      a simulated fleet, and its page
  gsq monitor --target eu1=203.0.113.10:27015 --webhook https://...
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
	f.DurationVar(&o.interval, "interval", 0, "how often each server is polled (default 30s)")
	f.DurationVar(&o.downAfter, "down-after", 0, "a server is down when its failures span at least this long (default 60s)")
	f.StringVar(&o.protocol, "protocol", "", "a2s or ogp: the protocol of servers that name none (default a2s)")
	f.StringVar(&o.db, "db", "", "the history: a SQLite file, or a postgres:// DSN (default $XDG_STATE_HOME/gsq/monitor.db)")
	f.StringVar(&o.listen, "listen", "", "the HTTP address of the page, the API and /metrics (default 127.0.0.1:9815)")
	f.StringArrayVar(&o.webhooks, "webhook", nil, "a webhook URL for alerts on down and up: Discord, Slack, or any JSON receiver (repeatable)")
	f.StringVar(&o.token, "token", "", "a bearer token that guards the page, the API and /metrics (or GSQ_MONITOR_TOKEN)")
	f.BoolVar(&o.demo, "demo", false, "start a small simulated fleet whose players come and go, and monitor it")
	f.IntVar(&o.demoSize, "demo-servers", 6, "with --demo: how many simulated servers")
	cmd.AddCommand(newMonitorExportCmd(env))
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
	loader := &monitor.Loader{
		Path: o.config, Targets: o.targets, Lists: o.lists,
		Interval: o.interval, DownAfter: o.downAfter, Protocol: o.protocol,
		Listen: o.listen, DB: o.db, Webhooks: o.webhooks,
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
	token := o.token
	if token == "" {
		token = env.Getenv("GSQ_MONITOR_TOKEN")
	}
	if token == "" {
		token = string(cfg.Token)
	}
	if token != "" && len(token) < 16 {
		return usageError("--token: at least 16 characters, for a token that cannot be guessed")
	}
	if len(cfg.Servers) == 0 {
		log.Printf("monitor: no servers configured: give --config, --target or -f (or try --demo); /probe works meanwhile")
	}

	dsn := cfg.DB
	if dsn == "" {
		if dsn, err = store.DefaultPath(); err != nil {
			return withCode(ExitFailure, err)
		}
	}
	st, err := store.Open(ctx, dsn, store.WithRetention(cfg.Retention), store.WithSessionGap(sessionGap(cfg)))
	if err != nil {
		return withCode(ExitFailure, err)
	}
	defer st.Close()

	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return withCode(ExitFailure, fmt.Errorf("monitor: listen on %s: %w", cfg.Listen, err))
	}
	svc, err := service.New(ctx, cfg, service.Options{Store: st, Logf: log.Printf})
	if err != nil {
		ln.Close()
		return withCode(ExitFailure, err)
	}
	h := web.New(st, svc, web.Options{
		Token: token, GuardBadges: cfg.GuardBadges, PlayerMetrics: cfg.PlayerMetrics, Logf: log.Printf,
	})
	hs := web.NewServer(cfg.Listen, h)
	httpDone := make(chan error, 1)
	go func() { httpDone <- hs.Serve(ln) }()

	url := "http://" + pageHost(ln.Addr().String()) + "/"
	if token == "" && !loopback(ln.Addr()) {
		log.Printf("monitor: listening on %s without a token: anyone who reaches it sees every server and may send probes (give --token)", ln.Addr())
	}
	log.Printf("monitor: %d servers, history in %s", len(cfg.Servers), store.Describe(dsn))
	fmt.Fprintf(env.Stdout, "gsq monitor: the page is at %s (metrics at %smetrics)\n", url, url)

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	runDone := make(chan error, 1)
	go func() { runDone <- svc.Run(runCtx) }()

	var runErr error
loop:
	for {
		select {
		case <-hup:
			reload(ctx, loader, svc, log)
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

// reload reads the config again for SIGHUP. A config with problems
// changes nothing: the running one stays, and the log says why.
func reload(ctx context.Context, loader *monitor.Loader, svc *service.Service, log *logger) {
	running := svc.Config()
	next, ch, err := loader.Reload(running)
	if err != nil {
		log.Printf("monitor: reload refused, the running config stays: %v", err)
		return
	}
	if err := svc.Reload(ctx, next, ch); err != nil {
		log.Printf("monitor: reload failed, the running config stays: %v", err)
		return
	}
	log.Printf("monitor: reloaded: %d servers (%d added, %d removed, %d changed)", len(next.Servers), len(ch.Added), len(ch.Removed), len(ch.Changed))
	if r := ch.NeedRestart(); len(r) > 0 {
		log.Printf("monitor: %s changed: takes effect at the next start", strings.Join(r, ", "))
	}
}

// sessionGap is how long players may go unseen before their sessions
// end: a few polls of the slowest server, five minutes at least.
func sessionGap(cfg *monitor.Config) time.Duration {
	gap := store.DefaultSessionGap
	for _, s := range cfg.Servers {
		gap = max(gap, 3*s.Interval)
	}
	return gap
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
