package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/gsq-project/gsq/scan"
)

// A targetSource is one list of targets for `gsq scan`: a file, stdin,
// or the hosts named on the command line.
type targetSource struct {
	name  string    // for messages: the file name, "stdin" or "arguments"
	r     io.Reader // the list, one target per line; nil for hosts
	hosts []string  // the hosts named on the command line
	close func() error
}

// scanSources opens the lists `gsq scan` reads: -f FILE, then each
// argument in turn. An argument is a host, @FILE, or the name of an
// existing file; - is stdin. With none, the list is read from stdin.
func scanSources(env *Env, file string, args []string) (sources []targetSource, err error) {
	defer func() {
		if err != nil {
			closeSources(sources)
		}
	}()
	if file != "" {
		src, err := openSource(env, file)
		if err != nil {
			return sources, err
		}
		sources = append(sources, src)
	}
	var hosts []string
	for _, arg := range args {
		name, isFile := strings.CutPrefix(arg, "@")
		if !isFile {
			st, err := os.Stat(arg)
			isFile = arg == "-" || err == nil && !st.IsDir()
		}
		if !isFile {
			hosts = append(hosts, arg)
			continue
		}
		if len(hosts) > 0 {
			sources = append(sources, targetSource{name: "arguments", hosts: hosts})
			hosts = nil
		}
		src, err := openSource(env, name)
		if err != nil {
			return sources, err
		}
		sources = append(sources, src)
	}
	if len(hosts) > 0 {
		sources = append(sources, targetSource{name: "arguments", hosts: hosts})
	}
	if len(sources) == 0 {
		src, _ := openSource(env, "-")
		sources = append(sources, src)
	}
	return sources, nil
}

func openSource(env *Env, name string) (targetSource, error) {
	if name == "-" {
		return targetSource{name: "stdin", r: env.Stdin}, nil
	}
	f, err := os.Open(name)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return targetSource{}, usageError("cannot read the list %s: %v", name, err)
	}
	return targetSource{name: name, r: f, close: f.Close}, nil
}

func closeSources(sources []targetSource) {
	for _, s := range sources {
		if s.close != nil {
			s.close()
		}
	}
}

// countTargets counts the target lines of the sources, for the progress
// bar: -1 when a source is not a regular file (stdin, a pipe). Regular
// files are read once ahead and rewound.
func countTargets(sources []targetSource) int64 {
	total := int64(0)
	for _, src := range sources {
		if src.r == nil {
			total += int64(len(src.hosts))
			continue
		}
		f, ok := src.r.(*os.File)
		if !ok {
			return -1
		}
		if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
			return -1
		}
		lr := newLineReader(f)
		for {
			line, err := lr.next()
			if err != nil && !errors.Is(err, errLineTooLong) {
				break
			}
			if len(line) > 0 {
				total++
			}
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return -1
		}
	}
	return total
}

// lineReader reads a target list: lines without their line end, a UTF-8
// byte-order mark at the start, comments (from a '#' at the start of the
// line or after a space) and the spaces around what is left. A line
// longer than scan.MaxLineLength comes back cut, with errLineTooLong.
type lineReader struct {
	r     *bufio.Reader
	first bool
}

var errLineTooLong = fmt.Errorf("line longer than %d bytes", scan.MaxLineLength)

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), first: true}
}

// next returns the next line, empty for a blank or comment line; io.EOF
// at the end.
func (lr *lineReader) next() ([]byte, error) {
	line, err := lr.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull || err == nil && len(line) > scan.MaxLineLength+2 {
		head := bytes.Clone(line[:64])
		for err == bufio.ErrBufferFull {
			_, err = lr.r.ReadSlice('\n')
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		return head, errLineTooLong
	}
	if err == io.EOF && len(line) > 0 {
		err = nil // a last line without '\n'
	}
	if err != nil {
		return nil, err
	}
	if lr.first {
		line = bytes.TrimPrefix(line, []byte("\uFEFF"))
		lr.first = false
	}
	if i := bytes.IndexByte(line, '#'); i == 0 || i > 0 && (line[i-1] == ' ' || line[i-1] == '\t') {
		line = line[:i]
	}
	return bytes.TrimSpace(line), nil
}

// targetFeed turns the sources into the text the scan engine reads: one
// valid HOST:PORT per line, written the same way for the same server, each
// server once. It reports the lines that are not a valid address itself,
// and remembers which target as written each line it hands the engine
// stands for, until the engine's result for it comes back: those are the
// servers in flight, reported as canceled when the scan is interrupted.
type targetFeed struct {
	defaultPort uint16
	// invalid reports a target that is not a valid address; err is a
	// usage error. duplicate reports a target skipped as a duplicate.
	invalid   func(target string, err error)
	duplicate func()

	mu      sync.Mutex
	pending map[int]string // by engine line number: the target as written
	lines   int            // lines handed to the engine
	stopped bool

	// seen holds the servers handed to the engine, by a 64-bit hash of
	// their address (about 16 bytes each, where the addresses would take
	// 60): two servers of a list of a million share a hash with odds of
	// one in 30 million.
	seed maphash.Seed
	seen map[uint64]struct{}
}

func newTargetFeed(defaultPort uint16, invalid func(string, error), duplicate func()) *targetFeed {
	return &targetFeed{defaultPort: defaultPort, invalid: invalid, duplicate: duplicate,
		pending: map[int]string{}, seed: maphash.MakeSeed(), seen: map[uint64]struct{}{}}
}

// run writes the targets of sources to w, then closes w (with the error
// when a list cannot be read). It stops early when ctx is canceled or
// the feed is stopped.
func (f *targetFeed) run(ctx context.Context, sources []targetSource, w *io.PipeWriter) {
	bw := bufio.NewWriterSize(w, 16<<10)
	err := func() error {
		for _, src := range sources {
			if src.r == nil {
				for _, h := range src.hosts {
					if !f.add(bw, h, "") {
						return nil
					}
				}
				continue
			}
			lr := newLineReader(src.r)
			for n := 1; ; n++ {
				if lr.r.Buffered() == 0 {
					// The next read may wait for input: hand what is
					// read to the engine first.
					if err := bw.Flush(); err != nil {
						return nil // the scan is over
					}
				}
				if ctx.Err() != nil {
					return nil
				}
				line, err := lr.next()
				if err == io.EOF {
					break
				}
				switch {
				case errors.Is(err, errLineTooLong):
					f.invalid(string(line)+"...", usageError("%s:%d: %v", src.name, n, err))
				case err != nil:
					return fmt.Errorf("reading %s: %w", src.name, err)
				case len(line) > 0:
					if !f.add(bw, string(line), fmt.Sprintf("%s:%d: ", src.name, n)) {
						return nil
					}
				}
			}
		}
		return bw.Flush()
	}()
	w.CloseWithError(err)
}

// add hands one target to the engine, or reports it; where names the
// line in a list, for messages. It returns false when the feed was
// stopped.
func (f *targetFeed) add(bw *bufio.Writer, target, where string) bool {
	hp, err := parseHostPort(target, f.defaultPort)
	if err != nil {
		f.invalid(strings.TrimSpace(target), usageError("%s%v", where, errors.Unwrap(err)))
		return !f.isStopped()
	}
	canonical := hp.String()
	h := maphash.String(f.seed, canonical)
	f.mu.Lock()
	if f.stopped {
		f.mu.Unlock()
		return false
	}
	if _, dup := f.seen[h]; dup {
		f.mu.Unlock()
		f.duplicate()
		return true
	}
	f.seen[h] = struct{}{}
	f.lines++
	f.pending[f.lines] = target
	f.mu.Unlock()
	bw.WriteString(canonical)
	bw.WriteByte('\n')
	return true
}

func (f *targetFeed) isStopped() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stopped
}

// take returns the target as written of the engine's line n, once.
func (f *targetFeed) take(n int) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.pending[n]
	if !ok {
		return fmt.Sprintf("line %d", n) // never: every line the engine reads was added
	}
	delete(f.pending, n)
	return t
}

// stop stops the feed and returns the targets handed to the engine that
// have no result yet, in list order.
func (f *targetFeed) stop() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopped = true
	lines := make([]int, 0, len(f.pending))
	for n := range f.pending {
		lines = append(lines, n)
	}
	slices.Sort(lines)
	left := make([]string, len(lines))
	for i, n := range lines {
		left[i] = f.pending[n]
		delete(f.pending, n)
	}
	return left
}
