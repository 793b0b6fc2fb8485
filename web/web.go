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
// that falls further behind, as the monitor drops the subscription of a
// handler that falls behind it: no event is skipped silently, a page
// reconnects and reloads the state, and /metrics counts both
// (gsq_live_streams_dropped_total, gsq_event_subscribers_dropped_total);
// at most [Options.MaxStreams] streams and [Options.MaxProbes] probes run at
// once (more get 503); a server made by [NewServer] keeps at most
// [Options.MaxConns] connections open, [Options.MaxConnsPerSource] from
// one source, closing an idle one to make room; [Options.MaxFailedLogins]
// wrong tokens on /login lock a source out for [Options.LockoutDuration];
// a probe waits at most its scrape timeout less half a second; a JSON
// request is answered within [Options.RequestTimeout].
package web

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gsq-project/gsq/internal/fdlimit"
	"github.com/gsq-project/gsq/internal/ratelog"
	"github.com/gsq-project/gsq/monitor"
	"github.com/gsq-project/gsq/store"
)

// Live is the monitor's live state as the handler reads it. The poller
// (package monitor/poller) implements it; the handler never changes what
// it returns.
type Live interface {
	// Servers returns a snapshot of every monitored server, sorted by
	// name. It must be cheap (no database, no query): /metrics and the
	// server list call it on every request.
	Servers() []monitor.ServerState
	// Server returns the named server's state, and false if no server of
	// that name is monitored.
	Server(name string) (monitor.ServerState, bool)
	// Subscribe returns a channel of the monitor's events, closed once ctx
	// is done. The handler reads it promptly; the monitor closes it early
	// rather than skip events for a subscriber that falls behind (the
	// handler then drops its streams, whose pages reconnect and reload).
	Subscribe(ctx context.Context) <-chan monitor.Event
	// SubscribersDropped counts the subscriptions the monitor closed
	// early, for /metrics.
	SubscribersDropped() uint64
	// AlertStats counts each webhook's alerts, for /metrics.
	AlertStats() []monitor.WebhookStats
	// Probe queries target (HOST:PORT) once with protocol (a name of the
	// registry in package protocol) within ctx's deadline, for /probe. The
	// returned state's Status is
	// [monitor.StatusUp] when the server answered, with its Summary, Ping
	// and QueryDuration filled; an error, or any other status, is a failed
	// probe (LastError says why when set).
	Probe(ctx context.Context, target, protocol string) (monitor.ServerState, error)
}

// Options configure a [Handler]. The zero value is usable: no token, no
// per-player metrics, and the defaults below; a negative limit is its
// default too, since none can be "none".
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
	// MaxConns bounds the HTTP connections open at once on a server made
	// by [NewServer] (default [DefaultMaxConns]); it is lowered to leave
	// 256 descriptors, or half the limit on open files if that is less,
	// to the rest of the process.
	MaxConns int
	// MaxConnsPerSource bounds the connections of one source, an IPv4
	// address or an IPv6 /64 (default [DefaultMaxConnsPerSource]).
	MaxConnsPerSource int
	// MaxFailedLogins is how many wrong tokens one source may post to
	// /login before it is locked out (default [DefaultMaxFailedLogins]);
	// a locked-out source gets 429, even with the right token.
	MaxFailedLogins int
	// LockoutDuration is how long a lockout lasts after the source's last
	// failure (default [DefaultLockoutDuration]).
	LockoutDuration time.Duration
	// Maintenance, if set, holds the maintenance windows: the API lists
	// them and adds and deletes those set through it (kept in the store;
	// [Handler.LoadMaintenance] reads them at start).
	Maintenance *monitor.Maintenance
	// Config, if set, returns the monitor's running config: which
	// servers keep player data (the player views leave the others out),
	// the maintenance windows and the public status page.
	Config func() *monitor.Config
	// TimeZone is the zone the heatmap of when people play is drawn in
	// when the request names none (default the host's local zone).
	TimeZone *time.Location
	// Logf, if set, receives notable events: failed sign-ins (rate-limited)
	// and store errors.
	Logf func(format string, args ...any)
}

// withDefaults fills in the defaults of zero (and, since none of these
// can be "none", negative) fields.
func (o Options) withDefaults() Options {
	o.ProbeTimeout = cmp.Or(max(0, o.ProbeTimeout), 5*time.Second)
	o.MaxProbes = cmp.Or(max(0, o.MaxProbes), 64)
	o.MaxStreams = cmp.Or(max(0, o.MaxStreams), 256)
	o.StreamBuffer = cmp.Or(max(0, o.StreamBuffer), 1024)
	o.Heartbeat = cmp.Or(max(0, o.Heartbeat), 15*time.Second)
	o.RequestTimeout = cmp.Or(max(0, o.RequestTimeout), 10*time.Second)
	o.MaxConns = connCapFor(cmp.Or(max(0, o.MaxConns), DefaultMaxConns), fdlimit.OpenFiles())
	o.MaxConnsPerSource = cmp.Or(max(0, o.MaxConnsPerSource), DefaultMaxConnsPerSource)
	o.MaxFailedLogins = cmp.Or(max(0, o.MaxFailedLogins), DefaultMaxFailedLogins)
	o.LockoutDuration = cmp.Or(max(0, o.LockoutDuration), DefaultLockoutDuration)
	if o.TimeZone == nil {
		o.TimeZone = time.Local
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
	conns   *connLimiter
	logins  *loginLimit
	session string // the sign-in cookie's value, derived from Token

	windowsMu sync.Mutex // serializes changes to the API's maintenance windows

	regularsMu sync.Mutex // the regulars of the servers last asked for (api_players.go)
	regulars   map[string]cachedRegulars

	statusMu   sync.Mutex // the public status page, built at most every statusCache
	statusPage []byte
	statusAt   time.Time
	ranks      rankCache
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
	h.conns = newConnLimiter(opts.MaxConns, opts.MaxConnsPerSource, h.log)
	h.logins = newLoginLimit(opts.MaxFailedLogins, opts.LockoutDuration)
	if opts.Token != "" {
		mac := hmac.New(sha256.New, []byte(opts.Token))
		mac.Write([]byte("gsq web session v1"))
		h.session = hex.EncodeToString(mac.Sum(nil))
	}
	h.metrics = newMetricsHandler(st, live, h.hub, opts.PlayerMetrics, h.conns, h.logins)
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
	m.Handle("GET /api/v1/servers/{name}/heatmap", guard(h.api(h.apiHeatmap)))
	m.Handle("GET /api/v1/servers/{name}/map-stats", guard(h.api(h.apiMapStats)))
	m.Handle("GET /api/v1/servers/{name}/rank", guard(h.api(h.apiRank)))
	m.Handle("GET /api/v1/sessions", guard(h.api(h.apiSessions)))
	m.Handle("GET /api/v1/servers/{name}/incidents", guard(h.api(h.apiServerIncidents)))
	m.Handle("GET /api/v1/servers/{name}/fleet-events", guard(h.api(h.apiFleetEvents)))
	m.Handle("GET /api/v1/servers/{name}/regulars", guard(h.api(h.apiRegulars)))
	m.Handle("GET /api/v1/servers/{name}/maintenance", guard(h.api(h.apiServerWindows)))
	m.Handle("GET /api/v1/incidents", guard(h.api(h.apiIncidents)))
	m.Handle("GET /api/v1/players", guard(h.api(h.apiPlayers)))
	m.Handle("GET /api/v1/players/{name}", guard(h.api(h.apiPlayer)))
	m.Handle("GET /api/v1/maintenance", guard(h.api(h.apiWindows)))
	m.Handle("POST /api/v1/maintenance", guard(h.api(h.addWindow)))
	m.Handle("DELETE /api/v1/maintenance/{id}", guard(h.api(h.deleteWindow)))
	m.Handle("GET /api/v1/sparklines", guard(h.api(h.apiSparklines)))
	m.Handle("GET /api/v1/events", guard(http.HandlerFunc(h.events)))
	m.Handle("/api/", guard(h.api(apiNotFound)))

	// Badges and banners are public unless GuardBadges.
	badge := func(next http.Handler) http.Handler {
		if h.opts.GuardBadges {
			return guard(next)
		}
		return next
	}
	m.Handle("GET /badge/{file}", badge(http.HandlerFunc(h.badge)))

	m.Handle("GET /assets/", assetHandler())
	m.HandleFunc("GET /login", h.loginPage)
	m.HandleFunc("POST /login", h.login)
	m.HandleFunc("POST /logout", h.logout)
	m.Handle("GET /{$}", guard(pageHandler()))
	m.Handle("GET /s/{name}", guard(pageHandler()))
	m.Handle("GET /p/{name}", guard(pageHandler()))
	m.Handle("GET /incidents", guard(pageHandler()))
	m.HandleFunc("/", notFoundPage)
	// The public status page: no token (status.go).
	if h.opts.Config != nil {
		if cfg := h.opts.Config(); cfg != nil && cfg.StatusPage != nil {
			m.HandleFunc("GET "+cfg.StatusPage.Path, h.serveStatus)
		}
	}
	m.Handle("GET /banner/{file}", badge(http.HandlerFunc(h.banner)))
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
		case r.URL.Path == "/" || r.URL.Path == "/incidents" || strings.HasPrefix(r.URL.Path, "/s/") || strings.HasPrefix(r.URL.Path, "/p/"):
			h.renderLogin(w, http.StatusUnauthorized, loginFresh)
		default:
			http.Error(w, "unauthorized: this monitor needs a bearer token", http.StatusUnauthorized)
		}
	})
}

// NewServer returns an http.Server for h on addr with timeouts that bound
// what a slow or idle client can hold: 5 s to send its headers, 30 s to
// send a request, 60 s for a response (a live stream extends its own
// deadline write by write), 30 s idle between requests, 16 KiB of
// headers; and with h's caps on connections (Options.MaxConns and
// Options.MaxConnsPerSource). A new connection over a cap closes an idle
// one in its way (at the per-source cap its source's own, idle longest;
// at the overall cap one of the source holding the most), so idle
// connections cannot lock anyone out; when every connection in its way
// is busy, the new one gets a 503 and is closed.
// /metrics counts both (gsq_http_connections_evicted_total,
// gsq_http_connections_refused_total).
func NewServer(addr string, h *Handler) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       30 * time.Second,
		MaxHeaderBytes:    16 << 10,
		ConnState:         h.conns.track,
	}
}
