package palworld

import (
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/gsq-project/gsq/console"
	"github.com/gsq-project/gsq/internal/httpserve"
	"github.com/gsq-project/gsq/internal/ratelog"
)

// Server defaults, used when the matching [Server] field is zero.
const (
	DefaultMaxRequestSize  = 64 << 10
	DefaultMaxFailedLogins = 10
	DefaultLockoutDuration = time.Minute
)

// ErrServerClosed is returned by Serve and ListenAndServe after Shutdown.
var ErrServerClosed = errors.New("palworld: server closed")

// Handler is what a Go program serving Palworld's REST API provides: one
// method per endpoint. An error becomes a 500 with its text.
type Handler interface {
	Info(ctx context.Context) (*Info, error)
	Players(ctx context.Context) ([]Player, error)
	Settings(ctx context.Context) (Settings, error)
	Metrics(ctx context.Context) (*Metrics, error)
	Announce(ctx context.Context, message string) error
	Kick(ctx context.Context, userID, message string) error
	Ban(ctx context.Context, userID, message string) error
	Unban(ctx context.Context, userID string) error
	Save(ctx context.Context) error
	Shutdown(ctx context.Context, waitSeconds int, message string) error
	Stop(ctx context.Context) error
}

// Server serves Palworld's REST API (GET info, players, settings,
// metrics; POST announce, kick, ban, unban, save, shutdown, stop under
// /v1/api/) with HTTP Basic auth, user "admin" and the AdminPassword, for
// a Go program with a [Handler]. It is an http.Handler; ListenAndServe
// runs it on its own. Request bodies are bounded by MaxRequestSize, and a
// source (an IPv4 address or IPv6 /64) that failed MaxFailedLogins times
// gets 401 without a check until LockoutDuration has passed since its
// last failure. Palworld's own advice holds: do not expose it to the
// Internet.
type Server struct {
	// Addr is the address ListenAndServe listens on; empty means ":8212".
	Addr     string
	Password string // empty refuses every request
	Handler  Handler
	// Limits; 0 means the default above, negative none.
	MaxRequestSize  int64
	MaxFailedLogins int
	LockoutDuration time.Duration
	Logf            func(format string, args ...any)

	once  sync.Once
	log   ratelog.Limiter
	fails console.Lockout
	srv   httpserve.Server
}

func (s *Server) init() {
	s.once.Do(func() {
		s.log.Logf = s.Logf
		s.fails = console.Lockout{Limit: max(0, cmp.Or(s.MaxFailedLogins, DefaultMaxFailedLogins)), For: max(0, cmp.Or(s.LockoutDuration, DefaultLockoutDuration))}
	})
}

// ListenAndServe listens on Addr and serves until Shutdown.
func (s *Server) ListenAndServe() error {
	return s.srv.ListenAndServe(s.Addr, ":8212", s, ErrServerClosed)
}

// Serve serves on l until Shutdown; it returns ErrServerClosed then.
func (s *Server) Serve(l net.Listener) error { return s.srv.Serve(l, s, ErrServerClosed) }

// LocalAddr is the address served, once Serve runs.
func (s *Server) LocalAddr() net.Addr { return s.srv.LocalAddr() }

// Shutdown stops the server gracefully, as http.Server's Shutdown does.
func (s *Server) Shutdown(ctx context.Context) error { return s.srv.Shutdown(ctx) }

// ServeHTTP answers one request of the API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.init()
	peer, _ := netip.ParseAddrPort(r.RemoteAddr)
	now := time.Now()
	if s.fails.Blocked(peer.Addr(), now) || !s.authorized(r) {
		if !s.fails.Blocked(peer.Addr(), now) && s.fails.Fail(peer.Addr(), now) {
			s.log.Printf("lockout", "palworld: %v: too many failed logins, refused for %v", peer, s.fails.For)
		}
		w.Header().Set("WWW-Authenticate", `Basic realm="Palworld"`)
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return
	}
	endpoint, ok := strings.CutPrefix(r.URL.Path, apiPath)
	if !ok {
		http.NotFound(w, r)
		return
	}
	ctx := r.Context()
	h := s.Handler
	if h == nil {
		http.Error(w, "no handler", http.StatusInternalServerError)
		return
	}
	get := func(f func() (any, error)) {
		if r.Method != http.MethodGet {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		v, err := f()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	}
	post := func(body any, f func() error) {
		if r.Method != http.MethodPost {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		if body != nil {
			lr := io.LimitReader(r.Body, max(0, cmp.Or(s.MaxRequestSize, DefaultMaxRequestSize))+1)
			b, err := io.ReadAll(lr)
			if err != nil || int64(len(b)) > max(0, cmp.Or(s.MaxRequestSize, DefaultMaxRequestSize)) || json.Unmarshal(b, body) != nil {
				http.Error(w, "bad request body", http.StatusBadRequest)
				return
			}
		}
		if err := f(); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	}
	var ub userBody
	switch endpoint {
	case "info":
		get(func() (any, error) { return h.Info(ctx) })
	case "players":
		get(func() (any, error) {
			ps, err := h.Players(ctx)
			if ps == nil {
				ps = []Player{}
			}
			return players{Players: ps}, err
		})
	case "settings":
		get(func() (any, error) { return h.Settings(ctx) })
	case "metrics":
		get(func() (any, error) { return h.Metrics(ctx) })
	case "announce":
		var a announceBody
		post(&a, func() error { return h.Announce(ctx, a.Message) })
	case "kick":
		post(&ub, func() error { return h.Kick(ctx, ub.UserID, ub.Message) })
	case "ban":
		post(&ub, func() error { return h.Ban(ctx, ub.UserID, ub.Message) })
	case "unban":
		post(&ub, func() error { return h.Unban(ctx, ub.UserID) })
	case "save":
		post(nil, func() error { return h.Save(ctx) })
	case "shutdown":
		var sb shutdownBody
		post(&sb, func() error { return h.Shutdown(ctx, sb.WaitTime, sb.Message) })
	case "stop":
		post(nil, func() error { return h.Stop(ctx) })
	default:
		http.NotFound(w, r)
	}
}

// authorized checks the Basic credentials in constant time.
func (s *Server) authorized(r *http.Request) bool {
	user, pass, ok := r.BasicAuth()
	if !ok || s.Password == "" {
		return false
	}
	want := sha256.Sum256([]byte(DefaultUsername + ":" + s.Password))
	got := sha256.Sum256([]byte(user + ":" + pass))
	return subtle.ConstantTimeCompare(want[:], got[:]) == 1
}
