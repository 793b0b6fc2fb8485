package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"strings"
	"sync/atomic"

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
			isFile = arg == "-" || err == nil && !st.IsDir() || err != nil && looksLikeFile(arg)
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

// listExtensions are the file name extensions of target lists, none of
// them a top-level domain: an argument that ends in one names a file.
var listExtensions = []string{".txt", ".lst", ".list", ".csv", ".tsv", ".json", ".jsonl", ".yaml", ".yml", ".conf", ".cfg", ".ini", ".log", ".out"}

// looksLikeFile reports whether arg, which names no file, was meant to:
// it has a path separator, or ends in a list's extension (nofile.txt),
// and no port, which a host would.
func looksLikeFile(arg string) bool {
	if strings.ContainsAny(arg, `/\`) {
		return true
	}
	if strings.Contains(arg, ":") {
		return false
	}
	lower := strings.ToLower(arg)
	for _, ext := range listExtensions {
		if strings.HasSuffix(lower, ext) {
			return true
		}
	}
	return false
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

// countTargets counts the targets of the sources, for the progress bar:
// -1 when a source is not a regular file (stdin, a pipe). Regular files
// are read once ahead and rewound.
func countTargets(sources []targetSource, defaultPort uint16) int64 {
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
		tr := scan.NewTargetReader(f, defaultPort)
		for {
			if _, err := tr.Next(); err != nil {
				break
			}
			total++
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return -1
		}
	}
	return total
}

// targetFeed turns the sources into the targets the scan engine takes:
// each server once, in list order, with the target as written (Input). A
// line that is not a valid address goes too, with its usage error (Err):
// the engine reports it in its place, with the kind "invalid".
type targetFeed struct {
	defaultPort uint16
	duplicate   func() // reports a target skipped as a duplicate
	err         atomic.Pointer[error]
	seen        scan.Seen // the servers handed to the engine
}

func newTargetFeed(defaultPort uint16, duplicate func()) *targetFeed {
	return &targetFeed{defaultPort: defaultPort, duplicate: duplicate}
}

// targets returns the sequence of the targets of sources. It ends early
// when ctx is canceled; a list that cannot be read ends it too, and Err
// tells.
func (f *targetFeed) targets(ctx context.Context, sources []targetSource) iter.Seq[scan.Target] {
	return func(yield func(scan.Target) bool) {
		if err := f.feed(ctx, sources, yield); err != nil {
			f.err.Store(&err)
		}
	}
}

// Err is the error reading a list, if any.
func (f *targetFeed) Err() error {
	if p := f.err.Load(); p != nil {
		return *p
	}
	return nil
}

func (f *targetFeed) feed(ctx context.Context, sources []targetSource, yield func(scan.Target) bool) error {
	for _, src := range sources {
		if src.r == nil {
			for _, h := range src.hosts {
				if !f.add(yield, scan.ParseTarget(0, h, f.defaultPort), "") {
					return nil
				}
			}
			continue
		}
		tr := scan.NewTargetReader(src.r, f.defaultPort)
		for {
			if ctx.Err() != nil {
				return nil
			}
			t, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return fmt.Errorf("reading %s: %w", src.name, err)
			}
			if !f.add(yield, t, src.name) {
				return nil
			}
		}
	}
	return nil
}

// add yields target t, unless it is a duplicate; list names the list it
// is a line of ("" for an argument), for messages. A target that does not
// parse goes with a usage error. It returns false when the sequence must
// stop.
func (f *targetFeed) add(yield func(scan.Target) bool, t scan.Target, list string) bool {
	if te := (*scan.TargetError)(nil); errors.As(t.Err, &te) {
		where := ""
		if list != "" {
			where = fmt.Sprintf("%s:%d: ", list, t.Line)
		}
		t.Err = usageError("%s%s", where, addressProblem(te.Err))
		return yield(t)
	}
	if !f.seen.Add(t) {
		f.duplicate()
		return true
	}
	return yield(t)
}
