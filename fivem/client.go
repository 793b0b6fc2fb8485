package fivem

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/gsq-project/gsq/internal/neterr"
)

// DefaultPort is FXServer's endpoint_add_tcp default, the game port.
const DefaultPort = 30120

// Client defaults, for the fields left zero.
const (
	DefaultTimeout     = 5 * time.Second
	DefaultMaxBodySize = 4 << 20
)

// Client reads FiveM servers' HTTP endpoints. The zero value is ready to
// use, and safe for concurrent use.
type Client struct {
	// Timeout bounds each request, its body included (default
	// DefaultTimeout, negative none); a context's earlier deadline ends
	// it sooner.
	Timeout time.Duration
	// MaxBodySize bounds a body (default, and for a negative value too,
	// DefaultMaxBodySize): beyond it, ErrResponseTooLarge.
	MaxBodySize int64
	// HTTPClient, if set, makes the requests; redirects are not followed
	// whatever its CheckRedirect says. If nil, a client without proxy.
	HTTPClient *http.Client
	// Debug, if set, sees each request line ("send") and each body
	// ("recv"). It must not retain b.
	Debug func(dir string, peer netip.AddrPort, b []byte)

	once sync.Once
	hc   *http.Client
}

func (c *Client) init() {
	c.once.Do(func() {
		base := c.HTTPClient
		if base == nil {
			tr := http.DefaultTransport.(*http.Transport).Clone()
			tr.Proxy = nil // a game server is not reached through a proxy
			tr.MaxResponseHeaderBytes = 64 << 10
			// A scan asks thousands of servers once each: a connection
			// kept open after its answer would only hold a descriptor.
			tr.DisableKeepAlives = true
			base = &http.Client{Transport: tr}
		}
		hc := *base
		hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		c.hc = &hc
	})
}

func (c *Client) maxBody() int64 {
	if c.MaxBodySize <= 0 {
		return DefaultMaxBodySize
	}
	return c.MaxBodySize
}

// get fetches path from the server at addr and returns its body, read up
// to MaxBodySize, and the time to the answer's headers.
func (c *Client) get(ctx context.Context, addr netip.AddrPort, path string) ([]byte, time.Duration, error) {
	c.init()
	if t := max(0, cmp.Or(c.Timeout, DefaultTimeout)); t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t)
		defer cancel()
	}
	url := "http://" + addr.String() + path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "gsq (https://github.com/gsq-project/gsq)")
	if c.Debug != nil {
		c.Debug("send", addr, []byte("GET "+path))
	}
	start := time.Now()
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, 0, netErr(ctx, err, start)
	}
	defer resp.Body.Close()
	rtt := time.Since(start)
	limit := c.maxBody()
	if resp.StatusCode != http.StatusOK {
		head, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
		if c.Debug != nil {
			c.Debug("recv", addr, head)
		}
		return nil, rtt, &StatusError{Code: resp.StatusCode, Path: path, Body: strings.TrimSpace(string(head))}
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, rtt, netErr(ctx, err, start)
	}
	if c.Debug != nil {
		c.Debug("recv", addr, b[:min(int64(len(b)), limit)])
	}
	if int64(len(b)) > limit {
		return nil, rtt, &neterr.Cause{Msg: fmt.Sprintf("%s larger than %d bytes (read no further)", path, limit), Errs: []error{ErrResponseTooLarge}}
	}
	return b, rtt, nil
}

// netErr turns a transport error into the client's: a deadline is
// ErrTimeout.
func netErr(ctx context.Context, err error, start time.Time) error {
	if neterr.IsTimeout(err) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &neterr.Cause{Msg: fmt.Sprintf("no whole answer within %v", time.Since(start).Round(time.Millisecond)),
			Errs: []error{ErrTimeout, context.DeadlineExceeded}}
	}
	if errors.Is(err, context.Canceled) {
		return context.Canceled
	}
	return err
}

// Info reads /info.json.
func (c *Client) Info(ctx context.Context, addr netip.AddrPort) (*Info, error) {
	b, _, err := c.get(ctx, addr, PathInfo)
	if err != nil {
		return nil, opError("info", addr.String(), err)
	}
	i, err := ParseInfo(b)
	return i, opError("info", addr.String(), err)
}

// Players reads /players.json; a server that disabled it answers
// [ErrNotAvailable].
func (c *Client) Players(ctx context.Context, addr netip.AddrPort) ([]Player, error) {
	b, _, err := c.get(ctx, addr, PathPlayers)
	if err != nil {
		return nil, opError("players", addr.String(), err)
	}
	p, err := ParsePlayers(b)
	return p, opError("players", addr.String(), err)
}

// Dynamic reads /dynamic.json.
func (c *Client) Dynamic(ctx context.Context, addr netip.AddrPort) (*Dynamic, error) {
	b, _, err := c.get(ctx, addr, PathDynamic)
	if err != nil {
		return nil, opError("dynamic", addr.String(), err)
	}
	d, err := ParseDynamic(b)
	return d, opError("dynamic", addr.String(), err)
}

// Result is what Query got: each endpoint's answer or error.
type Result struct {
	Dynamic    *Dynamic
	DynamicErr error
	Info       *Info
	InfoErr    error
	Players    []Player
	PlayersErr error
	// RTT is the time to the headers of /dynamic.json's answer (or
	// /info.json's, when dynamic failed).
	RTT time.Duration
}

// Answered reports whether any endpoint answered.
func (r *Result) Answered() bool { return r.Dynamic != nil || r.Info != nil || r.Players != nil }

// Query reads the endpoints asked (info, players, dynamic: each
// when its flag is set) at once, and returns each one's answer or
// error.
func (c *Client) Query(ctx context.Context, addr netip.AddrPort, info, players, dynamic bool) *Result {
	r := &Result{}
	var wg sync.WaitGroup
	var infoRTT, dynRTT time.Duration
	run := func(ask bool, op, path string, read func(b []byte) error, rtt *time.Duration, errp *error) {
		if !ask {
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, t, err := c.get(ctx, addr, path)
			if err == nil {
				err = read(b)
				*rtt = t
			}
			*errp = opError(op, addr.String(), err)
		}()
	}
	run(dynamic, "dynamic", PathDynamic, func(b []byte) (err error) { r.Dynamic, err = ParseDynamic(b); return err }, &dynRTT, &r.DynamicErr)
	run(info, "info", PathInfo, func(b []byte) (err error) { r.Info, err = ParseInfo(b); return err }, &infoRTT, &r.InfoErr)
	var playersRTT time.Duration
	run(players, "players", PathPlayers, func(b []byte) (err error) { r.Players, err = ParsePlayers(b); return err }, &playersRTT, &r.PlayersErr)
	wg.Wait()
	switch {
	case r.Dynamic != nil:
		r.RTT = dynRTT
	case r.Info != nil:
		r.RTT = infoRTT
	default:
		r.RTT = playersRTT
	}
	return r
}
