package monitor

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gsq-project/gsq/internal/duration"
	"github.com/gsq-project/gsq/scan"
)

// Loader builds a monitor's config from what `gsq monitor` was given: a
// config file, the flags that override its global settings, and the
// quick-start servers of --target and -f. The CLI keeps its Loader
// and calls [Loader.Reload] on SIGHUP, so that a reload reads the same
// sources with the same flags.
//
// Precedence, strongest first: a server's own setting in the file, a flag,
// a global setting in the file, the default.
type Loader struct {
	// Path is the config file (--config); "" means none: the defaults.
	Path string
	// Targets are --target values: NAME=HOST[:PORT], or HOST[:PORT] alone,
	// named after itself.
	Targets []string
	// Lists are target lists (-f), in `gsq scan`'s format: one HOST[:PORT]
	// per line, '#' comments; each server is named HOST:PORT. They are
	// taken by gsq scan's rules: a line that is not an address, and a
	// server the lists named before (scan.Seen), are skipped with a
	// warning.
	Lists []string
	// Shared is a fleet's target list, from PostgreSQL (config_cluster.go).
	Shared []SharedTarget
	// Warnf, if set, receives the warnings of a load: the lines of the
	// lists skipped, at most maxListWarnings of them and then a count.
	Warnf func(format string, args ...any)

	// The flags over the file's global settings; zero values leave the
	// file's (or the default) in place.
	Interval  time.Duration // --interval
	DownAfter time.Duration // --down-after
	Protocol  string        // --protocol: of --target and -f servers, and of file servers that set none
	Listen    string        // --listen
	DB        string        // --db
	Webhooks  []string      // --webhook URL, each added to the file's webhooks
	// Token, when set, takes the place of the file's token, under the
	// same rule; TokenFrom says where it came from, for messages
	// ("--token", "GSQ_MONITOR_TOKEN").
	Token     string
	TokenFrom string
}

// Load reads and checks the config. Every problem found comes back in one
// *ConfigError, each at its file and line; a file that cannot be read is
// an error that names it.
func (l *Loader) Load() (*Config, error) {
	d := newDraft(l.Path, ".")
	if l.Path != "" {
		data, err := readBounded(l.Path, MaxFileSize)
		if err != nil {
			return nil, fmt.Errorf("monitor: config: %w", err)
		}
		d.dir = filepath.Dir(l.Path)
		d.parse(data)
	}
	l.override(d)
	for _, t := range l.Targets {
		l.addTarget(d, t)
	}
	lw := listWarnings{warnf: l.Warnf}
	for _, path := range l.Lists {
		if err := l.addList(d, path, &lw); err != nil {
			return nil, err
		}
	}
	for _, t := range l.Shared {
		addShared(d, t)
	}
	lw.done()
	return d.finish()
}

// maxListWarnings bounds the warnings of one load about the lines of its
// lists; the rest are counted.
const maxListWarnings = 10

// listWarnings reports the lines of the lists a load skips.
type listWarnings struct {
	warnf   func(format string, args ...any)
	seen    scan.Seen // the servers of every list of the load
	skipped int
}

func (w *listWarnings) skip(path string, line int, format string, args ...any) {
	w.skipped++
	if w.warnf != nil && w.skipped <= maxListWarnings {
		w.warnf("monitor: %s:%d: %s; line skipped", path, line, fmt.Sprintf(format, args...))
	}
}

func (w *listWarnings) done() {
	if w.warnf != nil && w.skipped > maxListWarnings {
		w.warnf("monitor: %d more lines of the target lists skipped (%d in all)", w.skipped-maxListWarnings, w.skipped)
	}
}

// Reload builds the next config as Load does, and compares it with the
// running one. When the new config has a problem, Reload returns the
// running config unchanged, no changes, and the error: the poller keeps
// going as it was and logs why.
func (l *Loader) Reload(running *Config) (*Config, Changes, error) {
	next, err := l.Load()
	if err != nil {
		return running, Changes{}, err
	}
	return next, Diff(running, next), nil
}

// override applies the flags to the global settings.
func (l *Loader) override(d *draft) {
	c := d.cfg
	if l.Interval != 0 {
		if l.Interval < MinInterval || l.Interval > MaxInterval {
			d.p.AtLine("--interval", 0, "must be from %s to %s, not %s", duration.Format(MinInterval), duration.Format(MaxInterval), duration.Format(l.Interval))
		}
		c.Interval = l.Interval
	}
	if l.DownAfter != 0 {
		if l.DownAfter < 0 {
			d.p.AtLine("--down-after", 0, "must not be negative")
		}
		c.DownAfter = l.DownAfter
	}
	if l.Protocol != "" {
		if name, problem := protocolProblem(l.Protocol); problem != "" {
			d.p.AtLine("--protocol", 0, "%s", problem)
		} else {
			c.Protocol = name
		}
	}
	if l.Listen != "" {
		if msg := listenProblem(l.Listen); msg != "" {
			d.p.AtLine("--listen", 0, "%s", msg)
		}
		c.Listen = l.Listen
	}
	if l.DB != "" {
		c.DB = l.DB
	}
	if l.Token != "" {
		if msg := tokenProblem(l.Token); msg != "" {
			d.p.AtLine(cmp.Or(l.TokenFrom, "the token"), 0, "%s", msg)
		}
		c.Token, c.TokenFile = Secret(l.Token), ""
	}
	saved := d.p.Source
	d.p.Source = "--webhook"
	for i, u := range l.Webhooks {
		w := Webhook{Name: fmt.Sprintf("--webhook %d", i+1), URL: u}
		if d.addWebhook(&w, "", nil, "") {
			c.Webhooks = append(c.Webhooks, w)
		}
	}
	d.p.Source = saved
}

// ParseTargetFlag reads a --target value: NAME=HOST[:PORT], or
// HOST[:PORT] alone, which names the server after its address. It checks
// the syntax only; the address is checked with the server's protocol.
func ParseTargetFlag(s string) (name, address string, err error) {
	s = strings.TrimSpace(s)
	name, address, found := strings.Cut(s, "=")
	if !found {
		name, address = s, s
	}
	name, address = strings.TrimSpace(name), strings.TrimSpace(address)
	switch {
	case address == "":
		return "", "", fmt.Errorf("%q has no address: write NAME=HOST:PORT", s)
	case name == "":
		return "", "", fmt.Errorf("%q has no name: write NAME=HOST:PORT", s)
	}
	if msg := nameProblem(name); msg != "" {
		return "", "", fmt.Errorf("%q: %s", s, msg)
	}
	return name, address, nil
}

func (l *Loader) addTarget(d *draft, flag string) {
	name, addr, err := ParseTargetFlag(flag)
	if err != nil {
		d.p.AtLine("--target", 0, "%v", err)
		return
	}
	d.servers = append(d.servers, serverDraft{Server: Server{Name: name, Address: addr, Origin: "--target " + flag}, source: "--target"})
}

// addList adds the servers of a target list by gsq scan's rules: a line
// that is not HOST[:PORT], and a server named before, are skipped with a
// warning; a file that cannot be read ends the load.
func (l *Loader) addList(d *draft, path string, lw *listWarnings) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("monitor: target list: %w", err)
	}
	defer f.Close()
	protocol := d.cfg.Protocol
	tr := scan.NewTargetReader(io.LimitReader(f, MaxFileSize), defaultPort(protocol))
	for {
		t, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("monitor: target list %s: %w", path, err)
		}
		if t.Err != nil {
			lw.skip(path, t.Line, "%s", targetReason(t))
			continue
		}
		if !lw.seen.Add(t) {
			lw.skip(path, t.Line, "%s is a duplicate", t)
			continue
		}
		if len(d.servers) >= MaxServers {
			d.p.AtLine(path, t.Line, "more than %d servers", MaxServers)
			return nil
		}
		d.servers = append(d.servers, serverDraft{Server: Server{
			Name:    t.String(),
			Address: t.String(),
			Origin:  fmt.Sprintf("%s:%d", path, t.Line),
		}, source: path, line: t.Line})
	}
}
