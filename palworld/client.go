package palworld

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/gsq-project/gsq/console"
	"github.com/gsq-project/gsq/internal/neterr"
)

// DefaultPort is PalWorldSettings.ini's RESTAPIPort default.
const DefaultPort = 8212

// Client defaults, used when the matching [Options] field is zero.
const (
	DefaultTimeout     = 5 * time.Second
	DefaultMaxBodySize = 4 << 20
	DefaultUsername    = "admin"
	DefaultEventBuffer = console.DefaultEventBuffer
)

// apiPath is the root of the REST API.
const apiPath = "/v1/api/"

// Options configures a [Client]; the zero value (and nil) is usable.
type Options struct {
	// Timeout bounds each request, its body included; a context's
	// earlier deadline ends it sooner.
	Timeout time.Duration
	// MaxBodySize bounds an answer's body; a larger one is not read
	// further ([ErrResponseTooLarge]). 0 means DefaultMaxBodySize.
	MaxBodySize int64
	// Username for HTTP Basic auth; empty means "admin", the one user
	// Palworld knows.
	Username string
	// PollInterval, if positive, makes Events report players joining and
	// leaving, from GET players every PollInterval: the REST API pushes
	// nothing.
	PollInterval time.Duration
	EventBuffer  int
	// DialContext, if set, opens the TCP connections.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
	Logf        func(format string, args ...any)
	// Debug sees each request line and body sent and each body received
	// (never the Authorization header). It must not retain b.
	Debug func(dir string, peer netip.AddrPort, b []byte)
}

// Client is a session with Palworld's REST API (HTTP Basic auth, JSON,
// at http://host:8212/v1/api/). Besides the typed calls it implements
// [console.Session], mapping console commands onto the endpoints (see
// [Client.Exec]). It is safe for concurrent use.
type Client struct {
	opts     Options
	addr     string
	base     string
	password string
	hc       *http.Client
	events   *console.Feed
	quit     chan struct{}
	wg       sync.WaitGroup
	once     sync.Once
}

// Dial checks that addr ("host:port", port 8212 by default) serves
// Palworld's REST API and accepts password (the server's AdminPassword),
// and returns the client. opts may be nil.
func Dial(ctx context.Context, addr, password string, opts *Options) (*Client, error) {
	c := NewClient(addr, password, opts)
	if _, err := c.Info(ctx); err != nil {
		c.Close()
		return nil, err
	}
	if c.opts.PollInterval > 0 {
		c.wg.Add(1)
		go c.poll()
	}
	return c, nil
}

// NewClient returns a client of addr without asking it anything.
func NewClient(addr, password string, opts *Options) *Client {
	c := &Client{addr: addr, base: "http://" + addr + apiPath, password: password, quit: make(chan struct{})}
	if opts != nil {
		c.opts = *opts
	}
	o := &c.opts
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxBodySize <= 0 {
		o.MaxBodySize = DefaultMaxBodySize
	}
	if o.Username == "" {
		o.Username = DefaultUsername
	}
	if o.EventBuffer <= 0 {
		o.EventBuffer = DefaultEventBuffer
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil // a game server's admin API is not reached through a proxy
	tr.MaxResponseHeaderBytes = 64 << 10
	if o.DialContext != nil {
		tr.DialContext = o.DialContext
	}
	c.hc = &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	c.events = console.NewFeed(o.EventBuffer)
	return c
}

// do sends one request and returns its body, read up to MaxBodySize.
func (c *Client) do(ctx context.Context, method, endpoint string, body any) ([]byte, error) {
	select {
	case <-c.quit:
		return nil, opError(endpoint, c.addr, ErrClosed)
	default:
	}
	b, err := c.roundTrip(ctx, method, endpoint, body)
	return b, opError(endpoint, c.addr, err)
}

func (c *Client) roundTrip(ctx context.Context, method, endpoint string, body any) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	var rd io.Reader
	var payload []byte
	if body != nil {
		payload, _ = json.Marshal(body)
		rd = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+endpoint, rd)
	if err != nil {
		return nil, err
	}
	req.SetBasicAuth(c.opts.Username, c.password)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	c.debug("send", append([]byte(method+" "+apiPath+endpoint+" "), payload...))
	start := time.Now()
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, c.netErr(ctx, err, start)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, c.opts.MaxBodySize+1))
	if err != nil {
		return nil, c.netErr(ctx, err, start)
	}
	if int64(len(data)) > c.opts.MaxBodySize {
		return nil, &neterr.Cause{Msg: fmt.Sprintf("body larger than %d bytes (read no further)", c.opts.MaxBodySize), Errs: []error{ErrResponseTooLarge}}
	}
	c.debug("recv", data)
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return nil, &neterr.Cause{Msg: "authentication failed: 401 (check AdminPassword; the user is " + c.opts.Username + ")", Errs: []error{ErrAuthFailed}}
	case resp.StatusCode/100 != 2:
		return nil, &StatusError{Code: resp.StatusCode, Body: string(data[:min(len(data), 512)])}
	}
	return data, nil
}

// netErr turns a transport error into the client's: a deadline is
// ErrTimeout.
func (c *Client) netErr(ctx context.Context, err error, start time.Time) error {
	if neterr.IsTimeout(err) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &neterr.Cause{Msg: fmt.Sprintf("no whole answer within %v", time.Since(start).Round(time.Millisecond)), Errs: []error{ErrTimeout, context.DeadlineExceeded}}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

func (c *Client) debug(dir string, b []byte) {
	if c.opts.Debug != nil {
		c.opts.Debug(dir, netip.AddrPort{}, b)
	}
}

// get decodes the JSON of GET endpoint into v.
func (c *Client) get(ctx context.Context, endpoint string, v any) error {
	b, err := c.do(ctx, http.MethodGet, endpoint, nil)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return opError(endpoint, c.addr, &neterr.Cause{Msg: "the answer is not the API's JSON: " + err.Error(), Errs: []error{ErrNotPalworld, err}})
	}
	return nil
}

// Info is GET info: the server's name, version and description.
func (c *Client) Info(ctx context.Context) (*Info, error) {
	var i Info
	if err := c.get(ctx, "info", &i); err != nil {
		return nil, err
	}
	return &i, nil
}

// Players is GET players.
func (c *Client) Players(ctx context.Context) ([]Player, error) {
	var p players
	if err := c.get(ctx, "players", &p); err != nil {
		return nil, err
	}
	return p.Players, nil
}

// Settings is GET settings.
func (c *Client) Settings(ctx context.Context) (Settings, error) {
	var s Settings
	if err := c.get(ctx, "settings", &s); err != nil {
		return nil, err
	}
	return s, nil
}

// Metrics is GET metrics.
func (c *Client) Metrics(ctx context.Context) (*Metrics, error) {
	var m Metrics
	if err := c.get(ctx, "metrics", &m); err != nil {
		return nil, err
	}
	return &m, nil
}

func (c *Client) post(ctx context.Context, endpoint string, body any) error {
	_, err := c.do(ctx, http.MethodPost, endpoint, body)
	return err
}

// Announce is POST announce: a message to every player.
func (c *Client) Announce(ctx context.Context, message string) error {
	return c.post(ctx, "announce", announceBody{Message: message})
}

// Kick is POST kick.
func (c *Client) Kick(ctx context.Context, userID, message string) error {
	return c.post(ctx, "kick", userBody{UserID: userID, Message: message})
}

// Ban is POST ban.
func (c *Client) Ban(ctx context.Context, userID, message string) error {
	return c.post(ctx, "ban", userBody{UserID: userID, Message: message})
}

// Unban is POST unban.
func (c *Client) Unban(ctx context.Context, userID string) error {
	return c.post(ctx, "unban", userBody{UserID: userID})
}

// Save is POST save: the world is saved.
func (c *Client) Save(ctx context.Context) error { return c.post(ctx, "save", nil) }

// Shutdown is POST shutdown: the server stops after waitSeconds, with a
// message to the players.
func (c *Client) Shutdown(ctx context.Context, waitSeconds int, message string) error {
	return c.post(ctx, "shutdown", shutdownBody{WaitTime: waitSeconds, Message: message})
}

// Stop is POST stop: the server stops at once, without saving.
func (c *Client) Stop(ctx context.Context) error { return c.post(ctx, "stop", nil) }

// Commands lists what Exec understands, with the endpoint each maps to.
// Names are case-insensitive; the RCON names Palworld admins know
// (ShowPlayers, Broadcast, KickPlayer, BanPlayer, UnBanPlayer, DoExit)
// are aliases.
var Commands = []string{
	"info                      GET info",
	"players | showplayers     GET players",
	"settings                  GET settings",
	"metrics                   GET metrics",
	"announce | broadcast TEXT POST announce",
	"kick | kickplayer ID [TEXT]  POST kick",
	"ban | banplayer ID [TEXT]    POST ban",
	"unban | unbanplayer ID    POST unban",
	"save                      POST save",
	"shutdown SECONDS [TEXT]   POST shutdown",
	"stop | doexit             POST stop",
}

// Exec maps cmd onto an endpoint (see [Commands]) and returns the answer:
// the JSON body of a GET as the server sent it, and for an action its
// body, or "ok" when the server sends none.
func (c *Client) Exec(ctx context.Context, cmd string) (string, error) {
	fields := strings.Fields(cmd)
	if len(fields) == 0 {
		return "", opError("exec", c.addr, fmt.Errorf("%w: empty", ErrUnknownCommand))
	}
	name := strings.ToLower(fields[0])
	arg := func(i int) string {
		if i < len(fields) {
			return fields[i]
		}
		return ""
	}
	var method, endpoint string
	var body any
	switch name {
	case "info", "players", "settings", "metrics":
		method, endpoint = http.MethodGet, name
	case "showplayers":
		method, endpoint = http.MethodGet, "players"
	case "announce", "broadcast":
		method, endpoint, body = http.MethodPost, "announce", announceBody{Message: after(cmd, 1)}
	case "kick", "kickplayer", "ban", "banplayer":
		if arg(1) == "" {
			return "", opError("exec", c.addr, fmt.Errorf("%w: %s needs a user ID", ErrUnknownCommand, name))
		}
		method, endpoint, body = http.MethodPost, strings.TrimSuffix(name, "player"), userBody{UserID: arg(1), Message: after(cmd, 2)}
	case "unban", "unbanplayer":
		if arg(1) == "" {
			return "", opError("exec", c.addr, fmt.Errorf("%w: %s needs a user ID", ErrUnknownCommand, name))
		}
		method, endpoint, body = http.MethodPost, "unban", userBody{UserID: arg(1)}
	case "save":
		method, endpoint = http.MethodPost, "save"
	case "shutdown":
		wait, err := strconv.Atoi(arg(1))
		if err != nil {
			return "", opError("exec", c.addr, fmt.Errorf("%w: shutdown needs the seconds to wait", ErrUnknownCommand))
		}
		method, endpoint, body = http.MethodPost, "shutdown", shutdownBody{WaitTime: wait, Message: after(cmd, 2)}
	case "stop", "doexit":
		method, endpoint = http.MethodPost, "stop"
	default:
		return "", opError("exec", c.addr, fmt.Errorf("%w %q; known: info, players, settings, metrics, announce, kick, ban, unban, save, shutdown, stop", ErrUnknownCommand, fields[0]))
	}
	b, err := c.do(ctx, method, endpoint, body)
	if err != nil {
		return "", err
	}
	if method == http.MethodPost && len(bytes.TrimSpace(b)) == 0 {
		return "ok", nil
	}
	return string(b), nil
}

// after returns s after its first n space-separated fields, inner spaces
// kept.
func after(s string, n int) string {
	s = strings.TrimSpace(s)
	for range n {
		i := strings.IndexFunc(s, unicode.IsSpace)
		if i < 0 {
			return ""
		}
		s = strings.TrimSpace(s[i:])
	}
	return s
}

// Send runs cmd like Exec and drops its answer: HTTP has no way to send
// without waiting.
func (c *Client) Send(ctx context.Context, cmd string) error {
	_, err := c.Exec(ctx, cmd)
	return err
}

// Events reports players joining and leaving when Options.PollInterval is
// set; the REST API itself pushes nothing.
func (c *Client) Events() <-chan console.Event { return c.events.Events() }

// poll compares the player list every PollInterval.
func (c *Client) poll() {
	defer c.wg.Done()
	var known map[ID]Player
	t := time.NewTicker(c.opts.PollInterval)
	defer t.Stop()
	for {
		ps, err := c.Players(context.Background())
		if err == nil {
			now := make(map[ID]Player, len(ps))
			for _, p := range ps {
				key := p.UserID
				if key == "" {
					key = ID("name:" + p.Name)
				}
				now[key] = p
				if _, ok := known[key]; !ok && known != nil {
					c.events.Publish(console.Event{Time: time.Now(), Kind: console.KindJoin, Text: p.Name + " joined", Player: p.Name, PlayerID: string(p.UserID)})
				}
			}
			for key, p := range known {
				if _, ok := now[key]; !ok {
					c.events.Publish(console.Event{Time: time.Now(), Kind: console.KindLeave, Text: p.Name + " left", Player: p.Name, PlayerID: string(p.UserID)})
				}
			}
			known = now
		} else if c.opts.Logf != nil {
			c.opts.Logf("palworld: %s: polling players: %v", c.addr, err)
		}
		select {
		case <-c.quit:
			return
		case <-t.C:
		}
	}
}

// Close stops polling, closes idle connections and Events.
func (c *Client) Close() error {
	c.once.Do(func() {
		close(c.quit)
		c.wg.Wait()
		c.hc.CloseIdleConnections()
		c.events.Close()
	})
	return nil
}

// Probe reports whether addr serves Palworld's REST API, asking GET info
// with no password: the API answers 401 with an HTTP Basic challenge (or
// 200 with its JSON when auth is off). It is how a console client that
// finds Palworld's RCON port closed can tell that REST is there.
func Probe(ctx context.Context, addr string, opts *Options) error {
	c := NewClient(addr, "", opts)
	defer c.Close()
	_, err := c.Info(ctx)
	var se *StatusError
	switch {
	case err == nil, errors.Is(err, ErrAuthFailed):
		return nil
	case errors.As(err, &se):
		return opError("probe", addr, &neterr.Cause{Msg: fmt.Sprintf("HTTP %d at %sinfo: not Palworld's REST API", se.Code, apiPath), Errs: []error{ErrNotPalworld, err}})
	}
	return err
}

var _ console.Session = (*Client)(nil)
