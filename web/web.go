// Package web is the HTTP face of `gsq monitor`: Prometheus metrics on
// /metrics, the blackbox-style multi-target probe on /probe, a JSON API
// under /api/v1/ with a live stream of changes (server-sent events), status
// badges under /badge/, and an embedded web page with the server list and a
// page per server.
//
// The handler reads the monitor's live state through [Live] and its history
// through a [store.Store]; it never queries a game server itself, except for
// /probe, which asks [Live.Probe]. Every string a game server supplies is
// escaped where it is shown: the page sets text, never HTML, and the badges
// and metrics escape or sanitise what they carry.
//
// Limits a client can hit: a live stream keeps at most
// [Options.StreamBuffer] events queued for one client and drops a client
// that falls further behind (the page reconnects and reloads the state);
// at most [Options.MaxStreams] streams and [Options.MaxProbes] probes run at
// once (more get 503); a probe waits at most its scrape timeout less half a
// second; a JSON request is answered within [Options.RequestTimeout].
package web

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"strings"
	"time"

	"github.com/gsq-project/gsq/internal/ratelog"
	"github.com/gsq-project/gsq/monitor"
	"github.com/gsq-project/gsq/store"
)

// Live is the monitor's live state as the handler reads it. The monitor
// service implements it; the handler never changes what it returns.
type Live interface {
	// Servers returns a snapshot of every monitored server, sorted by
	// name. It must be cheap (no database, no query): /metrics and the
	// server list call it on every request.
	Servers() []monitor.ServerState
	// Server returns the named server's state, and false if no server of
	// that name is monitored.
	Server(name string) (monitor.ServerState, bool)
	// Subscribe returns a channel of the monitor's events, closed once ctx
	// is done. The handler reads it promptly; the monitor may drop events
	// for a subscriber that falls behind rather than delay its polls.
	Subscribe(ctx context.Context) <-chan monitor.Event
	// Probe queries target (HOST:PORT) once with protocol ("a2s" or "ogp")
	// within ctx's deadline, for /probe. The returned state's Status is
	// [monitor.StatusUp] when the server answered, with its Summary, Ping
	// and QueryDuration filled; an error, or any other status, is a failed
	// probe (LastError says why when set).
	Probe(ctx context.Context, target, protocol string) (monitor.ServerState, error)
}

// Options configure a [Handler]. The zero value is usable: no token, no
// per-player metrics, and the defaults below.
type Options struct {
	// Token, when set, is a bearer token that guards the page, the JSON
	// API, /metrics and /probe. Clients send "Authorization: Bearer
	// TOKEN"; a browser signs in once on /login and gets a cookie.
	Token string
	// GuardBadges makes the badges need the token too. By default they are
	// public even when Token is set, since they are meant for READMEs and
	// chat embeds that cannot send a token, and show only what the game
	// server tells anyone who queries it: up or down, and its player count.
	GuardBadges bool
	// PlayerMetrics adds per-player series to /metrics
	// (gameserver_player_connected_seconds and gameserver_player_score,
	// labelled with the player's name). Off by default: player names are
	// unbounded cardinality and personal data.
	PlayerMetrics bool
	// ProbeTimeout is how long /probe waits for a game server when the
	// scrape sends no X-Prometheus-Scrape-Timeout-Seconds (default 5s).
	ProbeTimeout time.Duration
	// MaxProbes bounds the probes running at once (default 64); /probe
	// answers 503 while that many run.
	MaxProbes int
	// MaxStreams bounds the live streams open at once (default 256); more
	// get 503.
	MaxStreams int
	// StreamBuffer is how many events a live stream queues for a client
	// that reads slowly before it drops that client (default 1024).
	StreamBuffer int
	// Heartbeat is how often an idle live stream sends a comment line, so
	// that proxies keep it open and clients notice a dead link (default
	// 15s).
	Heartbeat time.Duration
	// RequestTimeout bounds the store queries of one API request (default
	// 10s).
	RequestTimeout time.Duration
	// Logf, if set, receives notable events: failed sign-ins (rate-limited)
	// and store errors.
	Logf func(format string, args ...any)
}

func (o Options) withDefaults() Options {
	if o.ProbeTimeout <= 0 {
		o.ProbeTimeout = 5 * time.Second
	}
	if o.MaxProbes <= 0 {
		o.MaxProbes = 64
	}
	if o.MaxStreams <= 0 {
		o.MaxStreams = 256
	}
	if o.StreamBuffer <= 0 {
		o.StreamBuffer = 1024
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = 15 * time.Second
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = 10 * time.Second
	}
	return o
}

// Handler serves the monitor's HTTP interface. Create it with [New].
type Handler struct {
	store   store.Store
	live    Live
	opts    Options
	mux     *http.ServeMux
	metrics http.Handler
	hub     *hub
	probes  chan struct{} // a semaphore of MaxProbes slots
	log     *ratelog.Limiter
	session string // the sign-in cookie's value, derived from Token
}

// New returns a handler over the history in st and the live state in live.
func New(st store.Store, live Live, opts Options) *Handler {
	opts = opts.withDefaults()
	h := &Handler{
		store:  st,
		live:   live,
		opts:   opts,
		mux:    http.NewServeMux(),
		probes: make(chan struct{}, opts.MaxProbes),
		log:    &ratelog.Limiter{Logf: opts.Logf},
	}
	h.hub = newHub(live, opts.StreamBuffer, opts.MaxStreams)
	if opts.Token != "" {
		mac := hmac.New(sha256.New, []byte(opts.Token))
		mac.Write([]byte("gsq web session v1"))
		h.session = hex.EncodeToString(mac.Sum(nil))
	}
	h.metrics = newMetricsHandler(live, opts.PlayerMetrics)
	h.routes()
	return h
}

func (h *Handler) routes() {
	guard := h.guard
	m := h.mux
	m.Handle("GET /metrics", guard(h.metrics))
	m.Handle("GET /probe", guard(http.HandlerFunc(h.probe)))

	m.Handle("GET /api/v1/servers", guard(h.api(h.apiServers)))
	m.Handle("GET /api/v1/servers/{name}", guard(h.api(h.apiServer)))
	m.Handle("GET /api/v1/servers/{name}/history", guard(h.api(h.apiHistory)))
	m.Handle("GET /api/v1/servers/{name}/uptime", guard(h.api(h.apiUptime)))
	m.Handle("GET /api/v1/servers/{name}/records", guard(h.api(h.apiRecords)))
	m.Handle("GET /api/v1/servers/{name}/maps", guard(h.api(h.apiMaps)))
	m.Handle("GET /api/v1/servers/{name}/sessions", guard(h.api(h.apiServerSessions)))
	m.Handle("GET /api/v1/sessions", guard(h.api(h.apiSessions)))
	m.Handle("GET /api/v1/events", guard(http.HandlerFunc(h.events)))
	m.Handle("/api/", guard(h.api(apiNotFound)))

	badge := http.Handler(http.HandlerFunc(h.badge))
	if h.opts.GuardBadges {
		badge = guard(badge)
	}
	m.Handle("GET /badge/{file}", badge)

	m.Handle("GET /assets/", assetHandler())
	m.HandleFunc("GET /login", h.loginPage)
	m.HandleFunc("POST /login", h.login)
	m.HandleFunc("POST /logout", h.logout)
	m.Handle("GET /{$}", guard(pageHandler()))
	m.Handle("GET /s/{name}", guard(pageHandler()))
	m.HandleFunc("/", notFoundPage)
}

// ServeHTTP serves a request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Content-Security-Policy", pageCSP)
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.mux.ServeHTTP(w, r)
}

// pageCSP lets the page run only its own script and style files: no
// inline script, no other origin, no framing.
const pageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// sessionCookie is the name of the cookie a browser gets on sign-in.
const sessionCookie = "gsq_session"

// authorized reports whether r carries the token, as a bearer token or as
// the sign-in cookie. It is true when no token is set.
func (h *Handler) authorized(r *http.Request) bool {
	if h.opts.Token == "" {
		return true
	}
	if a := r.Header.Get("Authorization"); a != "" {
		scheme, tok, ok := strings.Cut(a, " ")
		return ok && strings.EqualFold(scheme, "Bearer") && equal(strings.TrimSpace(tok), h.opts.Token)
	}
	if c, err := r.Cookie(sessionCookie); err == nil {
		return equal(c.Value, h.session)
	}
	return false
}

func equal(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// guard answers 401 to a request without the token: JSON for the API,
// the sign-in page for the web page, plain text for the rest.
func (h *Handler) guard(next http.Handler) http.Handler {
	if h.opts.Token == "" {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h.authorized(r) {
			next.ServeHTTP(w, r)
			return
		}
		h.log.Printf("auth", "web: %s %s from %s: no valid token", r.Method, r.URL.Path, r.RemoteAddr)
		w.Header().Set("WWW-Authenticate", `Bearer realm="gsq"`)
		switch {
		case strings.HasPrefix(r.URL.Path, "/api/"):
			writeError(w, http.StatusUnauthorized, "unauthorized", "this monitor needs a bearer token")
		case r.URL.Path == "/" || strings.HasPrefix(r.URL.Path, "/s/"):
			renderLogin(w, http.StatusUnauthorized, false)
		default:
			http.Error(w, "unauthorized: this monitor needs a bearer token", http.StatusUnauthorized)
		}
	})
}

// NewServer returns an http.Server for h on addr with timeouts that bound
// what a slow or idle client can hold: 5 s to send its headers, 30 s to
// send a request, 60 s for a response (a live stream extends its own
// deadline write by write), 120 s idle between requests, 16 KiB of
// headers.
func NewServer(addr string, h http.Handler) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    16 << 10,
	}
}
