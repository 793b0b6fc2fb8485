package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/gsq-project/gsq/ogp"
	"github.com/gsq-project/gsq/scan"
)

func init() { register(newScanCmd) }

// scanOptions are the flags of `gsq scan`.
type scanOptions struct {
	file         string
	protocol     string
	info         bool
	players      bool
	rules        bool
	rate         int
	concurrency  int
	retries      int
	timeout      time.Duration
	maxPerIP     int
	hostInterval time.Duration
	dialect      string
}

func newScanCmd(env *Env) *cobra.Command {
	o := &scanOptions{}
	cmd := &cobra.Command{
		Use:   "scan [-f FILE|-]",
		Short: "Query a list of servers concurrently and print one JSON line each",
		Long: `Query every server of a list, many at once, and print one JSON object per
server on stdout as soon as it is done: the object of 'gsq query --json'.

The list (a file, or stdin with -f -) holds one HOST[:PORT] per line; blank
lines and # comments are skipped. It is read as the scan goes, so lists of
millions of servers take no more memory than short ones. A2S uses port
27015 when a line has none; OGP has no standard port, so every line needs
one.

Few sockets serve the whole scan. Sends are paced (--rate). A server is
asked one section at a time until its challenge is known, then the sections
left at once; with --host-interval it gets one request at a time, that far
apart. An unanswered request is sent again after a timeout adapted to the measured round trips, 1.5 times
longer on each retry and capped by --timeout.

A summary goes to stderr at the end, and a progress bar while scanning when
stderr is a terminal.

Exit codes: 0 every server answered everything asked (or the list was
empty), 1 some servers failed, answered only in part or were bad lines,
2 usage error, 3 every server timed out.`,
		Example: `  gsq scan -f servers.txt > results.jsonl
  master-list | gsq scan --info --rate 5000
  gsq scan -f servers.txt --max-per-ip 4 --host-interval 50ms`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runScan(cmd.Context(), env, o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.file, "file", "f", "-", "target list, one HOST[:PORT] per line; - reads stdin")
	f.StringVar(&o.protocol, "protocol", "a2s", "query protocol: a2s or ogp")
	f.StringVar(&o.dialect, "dialect", "v0.91", "OGP: protocol dialect, v0.91 or v1")
	f.BoolVar(&o.info, "info", false, "ask for info (default: info, players and rules)")
	f.BoolVar(&o.players, "players", false, "ask for the player list")
	f.BoolVar(&o.rules, "rules", false, "ask for the rules")
	f.IntVar(&o.rate, "rate", scan.DefaultRate, "datagrams sent per second at most; 0 for no pacing")
	f.IntVar(&o.concurrency, "concurrency", scan.DefaultConcurrency, "servers queried at once")
	f.IntVar(&o.retries, "retries", scan.DefaultRetries, "times an unanswered request is sent again")
	f.DurationVar(&o.timeout, "timeout", scan.DefaultTimeout, "longest wait for one answer before resending")
	f.IntVar(&o.maxPerIP, "max-per-ip", 0, "servers of one IP address queried at once; 0 for no limit")
	f.DurationVar(&o.hostInterval, "host-interval", 0, "least time between two datagrams to one server")
	return cmd
}

func runScan(ctx context.Context, env *Env, o *scanOptions) error {
	proto, toJSON, err := scanProtocol(o)
	if err != nil {
		return err
	}
	switch {
	case o.rate < 0:
		return usageError("--rate must not be negative")
	case o.concurrency < 1:
		return usageError("--concurrency must be at least 1")
	case o.retries < 0:
		return usageError("--retries must not be negative")
	case o.timeout <= 0:
		return usageError("--timeout must be positive")
	case o.maxPerIP < 0:
		return usageError("--max-per-ip must not be negative")
	case o.hostInterval < 0:
		return usageError("--host-interval must not be negative")
	}
	in, total, err := openTargets(env, o.file)
	if err != nil {
		return err
	}
	defer in.Close()

	s := &scan.Scanner{
		Protocol:     proto,
		Concurrency:  o.concurrency,
		Rate:         zeroIsNone(o.rate),
		Retries:      zeroIsNone(o.retries),
		Timeout:      o.timeout,
		MinTimeout:   min(o.timeout, scan.DefaultMinTimeout),
		MaxPerIP:     o.maxPerIP,
		HostInterval: o.hostInterval,
	}

	// Results are short-lived garbage, and the heap stays small whatever
	// the list: trading a little memory for less collector work buys
	// throughput.
	defer debug.SetGCPercent(debug.SetGCPercent(400))

	var bar *progressbar.ProgressBar
	if env.IsTerminal(env.Stderr) {
		bar = progressbar.NewOptions64(total,
			progressbar.OptionSetWriter(env.Stderr),
			progressbar.OptionSetDescription("scanning"),
			progressbar.OptionShowCount(),
			progressbar.OptionShowIts(),
			progressbar.OptionSetItsString("servers"),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish())
	}
	out := bufio.NewWriterSize(env.Stdout, 64<<10)
	var line []byte
	var writeErr error
	lastFlush := time.Now()
	sum, err := s.Scan(ctx, in, func(r *scan.Result) {
		if bar != nil {
			_ = bar.Add(1)
		}
		if writeErr != nil {
			return
		}
		line = append(toJSON(line[:0], r), '\n')
		_, writeErr = out.Write(line)
		// Whoever reads the stream live sees results at least every 100 ms.
		if now := time.Now(); writeErr == nil && now.Sub(lastFlush) > 100*time.Millisecond {
			writeErr, lastFlush = out.Flush(), now
		}
	})
	if bar != nil {
		_ = bar.Finish()
	}
	if writeErr == nil {
		writeErr = out.Flush()
	}
	fmt.Fprintf(env.Stderr, "gsq: scanned %d servers in %.2fs (%.0f/s): %d answered, %d partial, %d timed out, %d unreachable, %d failed, %d canceled; %d datagrams sent, %d resent\n",
		sum.Targets, sum.Elapsed.Seconds(), sum.QueriesPerSecond(), sum.Answered, sum.Partial, sum.TimedOut, sum.Unreachable, sum.Failed, sum.Canceled, sum.Sent, sum.Resent)
	switch {
	case writeErr != nil:
		return fmt.Errorf("writing results: %w", writeErr)
	case err != nil:
		return withCode(ExitFailure, err)
	case sum.Answered == sum.Targets:
		return nil
	case sum.TimedOut+sum.Unreachable == sum.Targets:
		return silentExit(ExitTimeout)
	}
	return silentExit(ExitFailure)
}

// scanProtocol is the protocol --protocol names, and the encoder of its
// results.
func scanProtocol(o *scanOptions) (scan.Protocol, func([]byte, *scan.Result) []byte, error) {
	switch o.protocol {
	case "a2s":
		return scan.A2S{Info: o.info, Players: o.players, Rules: o.rules}, appendScanResult, nil
	case "ogp":
		d, err := ogp.ParseDialect(o.dialect)
		if err != nil {
			return nil, nil, usageError("--dialect: %v", err)
		}
		all := !o.info && !o.players && !o.rules
		q, err := ogpQuery(&queryOptions{info: o.info || all, players: o.players || all, rules: o.rules || all}, d)
		if err != nil {
			return nil, nil, err
		}
		return scan.OGP{Dialect: d, Query: &q}, func(b []byte, r *scan.Result) []byte {
			res := &OGPResult{Address: r.Target.String(), Dialect: d, Err: r.Err}
			if r.Addr.IsValid() {
				res.Address = r.Addr.String()
			}
			if r.OGP != nil {
				res.Ping, res.Answer, res.Err = r.OGP.Ping, r.OGP.Answer, r.OGP.Err
			}
			return appendJSON(b, res.JSON())
		}, nil
	}
	return nil, nil, usageError("unknown protocol %q for scan (known: a2s, ogp)", o.protocol)
}

// openTargets opens the target list and, for a regular file, counts its
// targets for the progress bar (-1 when unknown).
func openTargets(env *Env, name string) (io.ReadCloser, int64, error) {
	if name == "-" {
		return io.NopCloser(env.Stdin), -1, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, 0, usageError("%v", err)
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return f, -1, nil
	}
	total := int64(0)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" && line[0] != '#' {
			total++
		}
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil || sc.Err() != nil {
		total = -1
		if err != nil {
			f.Close()
			return nil, 0, fmt.Errorf("rewinding %s: %w", name, err)
		}
	}
	return f, total, nil
}
