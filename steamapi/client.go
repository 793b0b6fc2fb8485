package steamapi

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gsq-project/gsq/internal/neterr"
	"github.com/gsq-project/gsq/internal/ratelog"
)

// Defaults of a [Client]'s fields left zero.
const (
	// DefaultBaseURL is Valve's Web API.
	DefaultBaseURL = "https://api.steampowered.com"
	// DefaultTimeout bounds one request, its body included: a full
	// answer of 10,000 servers is about 4 MB.
	DefaultTimeout = time.Minute
	// DefaultMaxBodySize bounds one answer's body.
	DefaultMaxBodySize = 32 << 20
	// DefaultMinInterval is the least time between two requests of one
	// Client.
	DefaultMinInterval = time.Second
	// DefaultRetries is how many times a request answered 429 or 5xx is
	// sent again.
	DefaultRetries = 3
	// DefaultMaxRetryAfter is the longest wait a 429's Retry-After may
	// ask before the request fails instead.
	DefaultMaxRetryAfter = 2 * time.Minute
	// DefaultAddressInterval is the least time between two
	// GetServersAtAddress requests about one address: Valve's guideline
	// ("more frequent than once every 10 minutes or so is considered
	// abusive", hlds_linux mailing list).
	DefaultAddressInterval = 10 * time.Minute
)

// redacted stands for the key wherever a URL is shown.
const redacted = "REDACTED"

// Client asks the Steam Web API. The zero value is usable for
// GetServersAtAddress; GetServerList needs a Key. It is safe for
// concurrent use, and paces every request it makes (see MinInterval).
type Client struct {
	// Key is the caller's Steam Web API key. It is sent with
	// GetServerList only, and never shown: errors, Debug and Logf see
	// "REDACTED" in its place.
	Key string
	// BaseURL is the API's root (default DefaultBaseURL): a mirror, or a
	// local fake (package steamapitest). The key is sent to it.
	BaseURL string
	// Timeout bounds each request, its body included (default
	// DefaultTimeout, negative none); a context's earlier deadline ends
	// it sooner.
	Timeout time.Duration
	// MaxBodySize bounds an answer's body (default, and for a negative
	// value too, DefaultMaxBodySize).
	MaxBodySize int64
	// MinInterval is the least time between two requests (default
	// DefaultMinInterval, negative none).
	MinInterval time.Duration
	// Retries is how many times a request answered 429 or 5xx is sent
	// again, after the wait its Retry-After asks (or MinInterval, at
	// least 5 s, doubling): 0 means DefaultRetries, negative none.
	Retries int
	// MaxRetryAfter is the longest wait a Retry-After may ask: a longer
	// one fails the request at once with ErrRateLimited (default
	// DefaultMaxRetryAfter; negative: no wait at all).
	MaxRetryAfter time.Duration
	// AddressInterval is the least time between two GetServersAtAddress
	// requests about one address (default DefaultAddressInterval,
	// negative none).
	AddressInterval time.Duration
	// Limit is how many servers each request of a List asks for (default
	// and most MaxLimit); a test lowers it with a fake's cap.
	Limit int
	// MaxRequests bounds the requests of one List (default
	// DefaultMaxRequests, negative none); MaxServers the distinct servers
	// it hands out (default DefaultMaxServers, negative none).
	MaxRequests int
	MaxServers  int
	// HTTPClient, if set, makes the requests; its redirects are not
	// followed whatever its CheckRedirect says (a redirect would carry
	// the key elsewhere). If nil, a client without proxy.
	HTTPClient *http.Client
	// Debug, if set, sees each request line ("send", the key redacted)
	// and each body as it is read ("recv", in chunks). It must not retain
	// b. peer is the zero value: the host is in the request line.
	Debug func(dir string, peer netip.AddrPort, b []byte)
	// Logf, if set, hears of the waits a 429 asks for, 5 lines per 10
	// seconds at most.
	Logf func(format string, args ...any)

	once sync.Once
	hc   *http.Client
	log  ratelog.Limiter

	mu    sync.Mutex
	next  time.Time                                  // no request before then
	v0001 bool                                       // the API answers at /v0001/, not /v1/
	asked map[netip.Addr]time.Time                   // GetServersAtAddress, by address
	sleep func(context.Context, time.Duration) error // the waits; tests replace it
	clock func() time.Time                           // time.Now; tests replace it
}

func (c *Client) init() {
	c.once.Do(func() {
		c.log.Logf = c.Logf
		base := c.HTTPClient
		if base == nil {
			tr := http.DefaultTransport.(*http.Transport).Clone()
			tr.Proxy = nil
			tr.MaxResponseHeaderBytes = 64 << 10
			base = &http.Client{Transport: tr}
		}
		hc := *base
		hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		c.hc = &hc
		if c.sleep == nil {
			c.sleep = sleep
		}
		if c.clock == nil {
			c.clock = time.Now
		}
	})
}

func (c *Client) maxBody() int64 {
	if c.MaxBodySize <= 0 {
		return DefaultMaxBodySize
	}
	return c.MaxBodySize
}

// sleep waits d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *Client) baseURL() string {
	return strings.TrimRight(knobString(c.BaseURL, DefaultBaseURL), "/")
}

func knobString(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// host is the API's host, as errors name it.
func (c *Client) host() string {
	if u, err := url.Parse(c.baseURL()); err == nil && u.Host != "" {
		return u.Host
	}
	return c.baseURL()
}

// pace reserves the next slot for a request and waits for it.
func (c *Client) pace(ctx context.Context) error {
	gap := max(0, cmp.Or(c.MinInterval, DefaultMinInterval))
	c.mu.Lock()
	now := c.clock()
	at := c.next
	if at.Before(now) {
		at = now
	}
	c.next = at.Add(gap)
	c.mu.Unlock()
	return c.sleep(ctx, at.Sub(now))
}

// holdOff makes every request wait until d from now.
func (c *Client) holdOff(d time.Duration) {
	c.mu.Lock()
	if t := c.clock().Add(d); t.After(c.next) {
		c.next = t
	}
	c.mu.Unlock()
}

// get sends GET path with query q, paced, and hands the body of a 200 to
// read, bounded by MaxBodySize and Timeout. A 429 or 5xx is sent again
// as Retries and Retry-After say. op names the method in errors.
func (c *Client) get(ctx context.Context, op, path string, q url.Values, read func(body io.Reader) error) error {
	c.init()
	retries := max(0, cmp.Or(c.Retries, DefaultRetries))
	for attempt := 0; ; attempt++ {
		if err := c.pace(ctx); err != nil {
			return opError(op, c.host(), err)
		}
		retryAfter, err := c.exchange(ctx, path, q, read)
		var se *StatusError
		if !errors.As(err, &se) || se.Code != 429 && se.Code < 500 || attempt >= retries {
			return opError(op, c.host(), err)
		}
		wait := retryAfter
		if wait <= 0 {
			wait = max(max(0, cmp.Or(c.MinInterval, DefaultMinInterval)), 5*time.Second) << attempt
		}
		if limit := max(0, cmp.Or(c.MaxRetryAfter, DefaultMaxRetryAfter)); wait > limit {
			return opError(op, c.host(), fmt.Errorf("%w (more than MaxRetryAfter %v: not waited)", err, limit))
		}
		c.log.Printf("retry", "steamapi: %s %s: HTTP %d: waiting %v before retry %d of %d", op, c.host(), se.Code, wait, attempt+1, retries)
		c.holdOff(wait)
	}
}

// exchange makes one request; retryAfter is what a 429 asked.
func (c *Client) exchange(ctx context.Context, path string, q url.Values, read func(io.Reader) error) (retryAfter time.Duration, err error) {
	if t := max(0, cmp.Or(c.Timeout, DefaultTimeout)); t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t)
		defer cancel()
	}
	u := c.baseURL() + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, c.scrub(err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "gsq (https://github.com/gsq-project/gsq)")
	if c.Debug != nil {
		c.Debug("send", netip.AddrPort{}, []byte("GET "+c.redact(u)))
	}
	start := time.Now()
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, c.netErr(ctx, err, start)
	}
	defer resp.Body.Close()
	body := io.LimitReader(resp.Body, c.maxBody()+1)
	if resp.StatusCode != http.StatusOK {
		head, _ := io.ReadAll(io.LimitReader(body, 256))
		shown := c.redact(string(head))
		c.debug([]byte(shown))
		se := &StatusError{Code: resp.StatusCode, Body: strings.TrimSpace(shown)}
		if se.Code == http.StatusTooManyRequests {
			se.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
		}
		return se.RetryAfter, se
	}
	lr := &limitedReader{r: body, left: c.maxBody(), debug: c.debugBody()}
	err = read(lr)
	lr.debug(nil) // what the redaction held back
	if err != nil {
		if lr.over {
			return 0, &neterr.Cause{Msg: fmt.Sprintf("body larger than %d bytes (read no further)", lr.limit()), Errs: []error{ErrResponseTooLarge}}
		}
		var pe *ParseError
		if !errors.As(err, &pe) || lr.err != nil {
			return 0, c.netErr(ctx, err, start)
		}
		return 0, err
	}
	return 0, nil
}

// limitedReader reads at most left bytes and reports whether the body
// went beyond, showing what it reads to debug.
type limitedReader struct {
	r     io.Reader
	left  int64
	read  int64
	over  bool
	err   error // the body's own read error
	debug func([]byte)
}

func (l *limitedReader) limit() int64 { return l.left + l.read }

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.left <= 0 {
		// One byte more than the limit tells a body that ends right there
		// from one that goes on.
		var one [1]byte
		if n, _ := l.r.Read(one[:]); n > 0 {
			l.over = true
			return 0, ErrResponseTooLarge
		}
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), l.left)]
	n, err := l.r.Read(p)
	l.left -= int64(n)
	l.read += int64(n)
	if n > 0 {
		l.debug(p[:n])
	}
	if err != nil && err != io.EOF {
		l.err = err
	}
	return n, err
}

func (c *Client) debug(b []byte) {
	if c.Debug != nil && len(b) > 0 {
		c.Debug("recv", netip.AddrPort{}, b)
	}
}

// debugBody returns the function that shows a body to Debug, chunk by
// chunk, the key redacted even where it straddles two chunks: each call
// shows what came before the last len(key)-1 bytes, which wait for the
// next chunk (nil: the end, which shows them).
func (c *Client) debugBody() func([]byte) {
	if c.Debug == nil {
		return func([]byte) {}
	}
	hold := max(len(c.Key), len(url.QueryEscape(c.Key))) - 1
	var pending []byte
	return func(b []byte) {
		if c.Key == "" {
			c.debug(b)
			return
		}
		pending = []byte(c.redact(string(append(pending, b...))))
		keep := 0
		if b != nil {
			keep = min(hold, len(pending))
		}
		c.debug(pending[:len(pending)-keep])
		pending = append(pending[:0], pending[len(pending)-keep:]...)
	}
}

// netErr turns a transport error into the client's: a deadline is
// ErrTimeout; the URL of a *url.Error loses the key.
func (c *Client) netErr(ctx context.Context, err error, start time.Time) error {
	if neterr.IsTimeout(err) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &neterr.Cause{Msg: fmt.Sprintf("no whole answer within %v", time.Since(start).Round(time.Millisecond)),
			Errs: []error{ErrTimeout, context.DeadlineExceeded}}
	}
	if errors.Is(err, context.Canceled) {
		return context.Canceled
	}
	return c.scrub(err)
}

// scrub returns err with the key taken out of the URL of a *url.Error,
// and out of its message.
func (c *Client) scrub(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		inner := ue.Err
		if c.Key != "" && strings.Contains(inner.Error(), c.Key) {
			inner = errors.New(c.redact(inner.Error()))
		}
		return &url.Error{Op: ue.Op, URL: c.redact(ue.URL), Err: inner}
	}
	if c.Key != "" && strings.Contains(err.Error(), c.Key) {
		return errors.New(c.redact(err.Error()))
	}
	return err
}

// redact returns s with the key, as it is and as a URL carries it,
// replaced by REDACTED.
func (c *Client) redact(s string) string {
	if c.Key == "" {
		return s
	}
	s = strings.ReplaceAll(s, url.QueryEscape(c.Key), redacted)
	return strings.ReplaceAll(s, c.Key, redacted)
}

// parseRetryAfter reads a Retry-After: seconds, or an HTTP date; zero
// when it says nothing readable.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		return time.Duration(min(n, 1<<31)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// checkKey reports a key GetServerList cannot send.
func checkKey(key string) error {
	if key == "" {
		return ErrNoKey
	}
	for _, r := range key {
		if r <= ' ' || r == 0x7F {
			return ErrBadKey
		}
	}
	return nil
}
