package cli

import (
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/gsq-project/gsq/protocol"
	"github.com/gsq-project/gsq/result"
	"github.com/gsq-project/gsq/scan"
)

func init() { register(newScanCmd) }

// scanOptions are the flags of `gsq scan`.
type scanOptions struct {
	file         string
	query        queryOptions // what to ask: the flags query and scan share
	rate         int
	concurrency  int
	retries      int
	timeout      time.Duration
	deadline     time.Duration
	maxPerIP     int
	hostInterval time.Duration
}

func newScanCmd(env *Env) *cobra.Command {
	o := &scanOptions{}
	cmd := &cobra.Command{
		Use:   "scan [HOST[:PORT] | FILE | @FILE | -]...",
		Short: "Query a list of servers concurrently and print one JSON line each",
		Long: `Query every server of a list, many at once, and print one JSON object per
server on stdout as soon as it is done: the object of 'gsq query --json'.

The servers are the arguments: hosts, files (@FILE is always a file; - is
stdin; an argument with a / or a list's extension such as .txt, and no
port, is a file too), or the file -f names; with no argument, the list is
read from stdin. A list holds one HOST[:PORT] per line; blank lines and # comments
are skipped, and so is a UTF-8 byte-order mark. A server listed twice is
asked once. A line that is not a valid address gets a line of its own, with
the error kind "invalid", and the scan goes on. Lists are read as the scan
goes, so lists of millions of servers take no more memory than short ones.
` + portsHelp() + `
--game NAME picks the game's protocol and, for lines without a port, its
query port (see gsq query --help); servers that do not answer a game's
first protocol are asked with the next once the list is done.

Few sockets serve the whole scan. Sends are paced (--rate). A server is
asked one section at a time until its challenge is known, then the sections
left at once; with --host-interval it gets one request at a time, that far
apart.

Waits: each server takes --deadline (5s) at most from its first request
(from the start of the lookup, for a host name), whatever the retries:
what has not answered by then fails with a timeout.
An unanswered request is sent again after a timeout adapted to the
measured round trips (0.25s at first), 1.5 times longer on each retry and
capped by --timeout (1s), --retries (3) times: a silent server is done
after about 2s. A closed port is done after one request, when the network
reports it (Linux; hosts limit how many such reports they send, so in a
fast scan some closed ports look silent). The wait for a turn under
--concurrency, --max-per-ip, --rate or --host-interval comes on top.

Ctrl-C stops the scan: each server in flight gets a line with what it had
answered and the error kind "canceled" for the rest, and gsq exits 130.

A summary goes to stderr at the end, and a progress line while scanning
when stderr is a terminal.

Exit codes: 0 every server answered everything asked (or the list was
empty), 1 some servers failed or answered only in part, 2 usage error or
lines that are not an address, 3 every server timed out or was
unreachable, 130 interrupted.`,
		Example: fmt.Sprintf(`  gsq scan servers.txt > results.jsonl
  gsq scan 127.0.0.1:%d 127.0.0.1:%d
  master-list | gsq scan --info --rate 5000
  gsq scan -f servers.txt --max-per-ip 4 --host-interval 50ms`, protocol.Default.DefaultPort, protocol.Default.DefaultPort+1),
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkGameFlag(cmd, &o.query); err != nil {
				return err
			}
			return runScan(cmd, env, o, args)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.file, "file", "f", "", "target list, one HOST[:PORT] per line; - reads stdin")
	f.StringVar(&o.query.protocol, "protocol", protocol.Default.Name, "query protocol: "+strings.Join(protocol.Names(), " or "))
	addQueryFlags(f, &o.query)
	f.IntVar(&o.rate, "rate", scan.DefaultRate, "datagrams sent per second at most; 0 for no pacing")
	f.IntVar(&o.concurrency, "concurrency", scan.DefaultConcurrency, "servers queried at once")
	f.IntVar(&o.retries, "retries", scan.DefaultRetries, "times an unanswered request is sent again")
	durationFlag(cmd, &o.timeout, "timeout", scan.DefaultTimeout, "longest wait for one answer before resending")
	durationFlag(cmd, &o.deadline, "deadline", scan.DefaultDeadline, "the most time one server may take from its first request, whatever the retries")
	f.IntVar(&o.maxPerIP, "max-per-ip", 0, "servers of one IP address queried at once; 0 for no limit")
	durationFlag(cmd, &o.hostInterval, "host-interval", 0, "least time between two datagrams to one server")
	completeQueryFlags(cmd)
	return cmd
}

func runScan(cmd *cobra.Command, env *Env, o *scanOptions, args []string) error {
	ctx := cmd.Context()
	gc, gameQueries, err := prepareGame(env, &o.query)
	if err != nil {
		return err
	}
	p, q, err := prepareQuery(env, &o.query)
	if err != nil {
		return err
	}
	defaultPort := p.DefaultPort
	if gc != nil {
		defaultPort = gc.first().port
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
	case o.deadline <= 0:
		return usageError("--deadline must be positive")
	case o.maxPerIP < 0:
		return usageError("--max-per-ip must not be negative")
	case o.hostInterval < 0:
		return usageError("--host-interval must not be negative")
	}
	sources, err := scanSources(env, o.file, args)
	if err != nil {
		return err
	}
	defer closeSources(sources)
	for _, src := range sources {
		if src.name == "stdin" && env.IsTerminal(env.Stdin) {
			fmt.Fprintln(env.Stderr, "gsq: hint: reading the server list from stdin, one HOST[:PORT] per line; end it with Ctrl-D (or name hosts or a file: gsq scan servers.txt)")
		}
	}

	s := &scan.Scanner{
		Query:        q,
		Concurrency:  o.concurrency,
		Rate:         zeroIsNone(o.rate),
		Retries:      zeroIsNone(o.retries),
		Timeout:      o.timeout,
		MinTimeout:   min(o.timeout, scan.DefaultMinTimeout),
		Deadline:     o.deadline,
		MaxPerIP:     o.maxPerIP,
		HostInterval: o.hostInterval,
	}
	// Results are short-lived garbage, and the heap stays small whatever
	// the list: trading a little memory for less collector work buys
	// throughput.
	defer debug.SetGCPercent(debug.SetGCPercent(400))

	out := &scanOutput{w: env.Stdout, buf: make([]byte, 0, outputBatch+16<<10)}
	if env.IsTerminal(env.Stderr) {
		out.bar = newProgress(env.Stderr, countTargets(sources, defaultPort))
	}
	feed := newTargetFeed(defaultPort, out.duplicate)
	emit := out.write
	var fb *gameFallback
	if gc != nil && len(gc.endpoints) > 1 {
		fb = &gameFallback{gc: gc, queries: gameQueries, write: out.write}
		emit = fb.emit
	}
	sum, _ := s.Run(ctx, feed.targets(ctx, sources), emit)
	if fb != nil {
		sum = fb.rest(ctx, s, sum)
	}
	out.finish()
	fmt.Fprintln(env.Stderr, out.summary(sum))
	switch {
	case out.err != nil:
		return fmt.Errorf("writing results: %w", out.err)
	case ctx.Err() != nil:
		return silentExit(ExitInterrupted)
	case feed.Err() != nil:
		return withCode(ExitFailure, feed.Err())
	}
	return silentExit(out.exitCode())
}

// outputBatch is how many bytes of JSON lines `gsq scan` gathers before it
// writes them.
const outputBatch = 128 << 10

// outputDelay is the longest a result of `gsq scan` waits to be written.
const outputDelay = 100 * time.Millisecond

// scanOutput writes a scan's results as JSON lines and counts them. Each
// line is encoded straight after the ones not yet written, and they are
// written together once outputBatch bytes are gathered, or 100 ms have
// passed.
type scanOutput struct {
	mu        sync.Mutex
	w         io.Writer
	buf       []byte // lines not yet written
	err       error
	lastFlush time.Time
	timer     *time.Timer // flushes what waits, when no result follows
	bar       *progress

	answered, partial, timedOut, unreachable, failed, invalid, canceled, duplicates int
}

func (out *scanOutput) write(sr *scan.Outcome) {
	r := sr.Result
	out.mu.Lock()
	defer out.mu.Unlock()
	switch sr.Status {
	case scan.StatusAnswered:
		out.answered++
	case scan.StatusPartial:
		out.partial++
	case scan.StatusTimedOut:
		out.timedOut++
	case scan.StatusUnreachable:
		out.unreachable++
	case scan.StatusCanceled:
		out.canceled++
	default:
		if r.Err != nil && r.Err.Kind == result.KindInvalid {
			out.invalid++
		} else {
			out.failed++
		}
	}
	if out.bar != nil {
		out.bar.add(1)
	}
	if out.err != nil {
		return
	}
	out.buf = append(r.AppendJSON(out.buf), '\n')
	// Whoever reads the stream live sees each result within 100 ms, even
	// when no other follows (a list still coming down a pipe).
	switch now := time.Now(); {
	case len(out.buf) >= outputBatch || now.Sub(out.lastFlush) > outputDelay:
		out.flush()
		out.lastFlush = now
	case out.timer == nil:
		out.timer = time.AfterFunc(outputDelay, func() {
			out.mu.Lock()
			defer out.mu.Unlock()
			out.timer = nil
			out.flush()
			out.lastFlush = time.Now()
		})
	}
}

// flush writes the lines gathered; out.mu is held.
func (out *scanOutput) flush() {
	if len(out.buf) > 0 && out.err == nil {
		_, out.err = out.w.Write(out.buf)
	}
	out.buf = out.buf[:0]
}

func (out *scanOutput) duplicate() {
	out.mu.Lock()
	defer out.mu.Unlock()
	out.duplicates++
	if out.bar != nil {
		out.bar.add(1)
	}
}

func (out *scanOutput) finish() {
	out.mu.Lock()
	defer out.mu.Unlock()
	if out.bar != nil {
		out.bar.finish()
	}
	if out.timer != nil {
		out.timer.Stop()
		out.timer = nil
	}
	out.flush()
}

// summary is the line written on stderr at the end.
func (out *scanOutput) summary(sum scan.Summary) string {
	servers := out.answered + out.partial + out.timedOut + out.unreachable + out.failed + out.canceled
	rate := 0.0
	if sum.Elapsed > 0 {
		rate = float64(servers) / sum.Elapsed.Seconds()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "gsq: scanned %s in %.2fs (%.0f/s): %d answered, %d partial, %d timed out, %d unreachable, %d failed; %s sent, %d resent",
		plural(servers, "server"), sum.Elapsed.Seconds(), rate, out.answered, out.partial, out.timedOut, out.unreachable, out.failed,
		plural(int(sum.Sent), "datagram"), sum.Resent)
	for _, extra := range []struct {
		n    int
		what string
	}{{out.invalid, "invalid line"}, {out.duplicates, "duplicate"}, {out.canceled, "canceled server"}} {
		if extra.n > 0 {
			fmt.Fprintf(&b, "; %s", plural(extra.n, extra.what))
		}
	}
	return b.String()
}

// exitCode is 0 when every server answered everything asked (or there
// was none), 2 when a line was not an address, 3 when every server timed
// out or was unreachable, and 1 otherwise.
func (out *scanOutput) exitCode() int {
	switch {
	case out.invalid > 0:
		return ExitUsage
	case out.partial+out.failed+out.timedOut+out.unreachable == 0:
		return ExitOK
	case out.answered+out.partial+out.failed == 0:
		return ExitTimeout
	}
	return ExitFailure
}
