package monitor

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gsq-project/gsq/scan"
)

// Loader builds a monitor's config from what `gsq monitor` was given: a
// config file, the flags that override its global settings, and the
// quick-start servers of --target and -f. The service keeps its Loader
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
	// per line, '#' comments; each server is named HOST:PORT.
	Lists []string

	// The flags over the file's global settings; zero values leave the
	// file's (or the default) in place.
	Interval  time.Duration // --interval
	DownAfter time.Duration // --down-after
	Protocol  string        // --protocol: of --target and -f servers, and of file servers that set none
	Listen    string        // --listen
	DB        string        // --db
	Webhooks  []string      // --webhook URL, each added to the file's webhooks
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
	for _, path := range l.Lists {
		if err := l.addList(d, path); err != nil {
			return nil, err
		}
	}
	return d.finish()
}

// Reload builds the next config as Load does, and compares it with the
// running one. When the new config has a problem, Reload returns the
// running config unchanged, no changes, and the error: the service keeps
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
			d.p.AtLine("--interval", 0, "must be from %s to %s, not %s", FormatDuration(MinInterval), FormatDuration(MaxInterval), FormatDuration(l.Interval))
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
		switch p := strings.ToLower(l.Protocol); p {
		case ProtocolA2S, ProtocolOGP:
			c.Protocol = p
		default:
			d.p.AtLine("--protocol", 0, "must be a2s or ogp, not %q", l.Protocol)
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

// addList adds the servers of a target list. A line that is not HOST[:PORT]
// is a problem reported at its line; a file that cannot be read ends the
// load.
func (l *Loader) addList(d *draft, path string) error {
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
			d.p.AtLine(path, t.Line, "%s", targetReason(t))
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
