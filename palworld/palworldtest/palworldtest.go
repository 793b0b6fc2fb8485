// Package palworldtest provides fake Palworld REST API servers for tests,
// in the manner of net/http/httptest: a [Server] on a loopback port that
// serves the API through [palworld.Server] with a [SimHandler], and the
// failures a client must survive ([Faults]): 500s, a body of any size
// streamed and never held (a gigabyte by default), and a server that
// never answers.
//
// The package uses the standard library only.
package palworldtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gsq-project/gsq/palworld"
)

// Faults are what the fake does wrong on purpose.
type Faults struct {
	// Status500 answers every authorized request 500.
	Status500 bool
	// HugeBody, if positive, makes GET endpoints answer 200 with that
	// many bytes of a JSON array that never closes, written as it goes.
	HugeBody int64
	// Hang keeps every request waiting, headers unsent, until the client
	// gives up or the server closes.
	Hang bool
}

// Server is a fake Palworld REST API on a loopback port.
type Server struct {
	API      *palworld.Server
	Faults   Faults
	Listener net.Listener
	// Requests counts the requests received.
	Requests atomic.Int64
	// Written counts the bytes of huge bodies written.
	Written atomic.Int64
	hs      *http.Server
	served  chan error
	stop    chan struct{}
	stopped sync.Once
}

// NewServer starts a fake with password and handler (nil: a SimHandler).
func NewServer(password string, h palworld.Handler) *Server {
	s := NewUnstartedServer(password, h)
	s.Start()
	return s
}

// NewUnstartedServer is NewServer without the start. It panics if no
// loopback port can be bound, as httptest does.
func NewUnstartedServer(password string, h palworld.Handler) *Server {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("palworldtest: listen on loopback: %v", err))
	}
	return NewUnstartedServerOn(l, password, h)
}

// NewUnstartedServerOn is NewUnstartedServer on a listener of the
// caller's (gsq serve's, on the address its user gave).
func NewUnstartedServerOn(l net.Listener, password string, h palworld.Handler) *Server {
	if h == nil {
		h = &SimHandler{}
	}
	return &Server{Listener: l, API: &palworld.Server{Password: password, Handler: h}, stop: make(chan struct{})}
}

// Start serves.
func (s *Server) Start() {
	s.served = make(chan error, 1)
	s.hs = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { s.served <- s.hs.Serve(s.Listener) }()
}

// Addr is the address served.
func (s *Server) Addr() netip.AddrPort { return s.Listener.Addr().(*net.TCPAddr).AddrPort() }

// Close shuts the server down, ending hung requests.
func (s *Server) Close() {
	s.stopped.Do(func() { close(s.stop) })
	s.hs.Close()
	<-s.served
}

// serve plays the faults in front of the API.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.Requests.Add(1)
	_, pass, _ := r.BasicAuth()
	authorized := pass == s.API.Password
	switch {
	case s.Faults.Hang:
		select {
		case <-r.Context().Done():
		case <-s.stop:
		}
		return
	case authorized && s.Faults.Status500:
		http.Error(w, "Internal Server Error", http.StatusInternalServerError)
		return
	case authorized && s.Faults.HugeBody > 0 && r.Method == http.MethodGet:
		w.Header().Set("Content-Type", "application/json")
		chunk := []byte(strings.Repeat(`{"name":"x"},`, 512))
		w.Write([]byte("["))
		for left := s.Faults.HugeBody - 1; left > 0; {
			n := min(int64(len(chunk)), left)
			if _, err := w.Write(chunk[:n]); err != nil {
				return // the client stopped reading
			}
			s.Written.Add(n)
			left -= n
		}
		return
	}
	s.API.ServeHTTP(w, r)
}

// SimHandler is a Palworld server's state: its answers come from the
// fields, and the admin actions are recorded. It is safe for concurrent
// use.
type SimHandler struct {
	mu       sync.Mutex
	info     palworld.Info
	players  []palworld.Player
	settings palworld.Settings
	metrics  palworld.Metrics
	// Actions records the admin actions, one line each ("announce hi",
	// "kick steam_1 bye", ...).
	actions []string
	banned  map[string]bool
}

// NewSimHandler returns a handler with this state.
func NewSimHandler(info palworld.Info, players []palworld.Player, metrics palworld.Metrics) *SimHandler {
	return &SimHandler{info: info, players: append([]palworld.Player(nil), players...), metrics: metrics,
		settings: palworld.Settings{"Difficulty": "None", "ExpRate": 1.0, "ServerPlayerMaxNum": float64(metrics.MaxPlayerNum), "RESTAPIEnabled": true, "RESTAPIPort": 8212.0}}
}

// SetPlayers replaces the players online.
func (h *SimHandler) SetPlayers(ps []palworld.Player) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.players = append([]palworld.Player(nil), ps...)
}

// Actions returns the admin actions so far.
func (h *SimHandler) Actions() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.actions...)
}

func (h *SimHandler) record(format string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.actions = append(h.actions, strings.TrimSpace(fmt.Sprintf(format, args...)))
}

// Info returns the info.
func (h *SimHandler) Info(context.Context) (*palworld.Info, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	i := h.info
	return &i, nil
}

// Players returns the players online.
func (h *SimHandler) Players(context.Context) ([]palworld.Player, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]palworld.Player(nil), h.players...), nil
}

// Settings returns the settings.
func (h *SimHandler) Settings(context.Context) (palworld.Settings, error) { return h.settings, nil }

// Metrics returns the metrics, the player count from the players online.
func (h *SimHandler) Metrics(context.Context) (*palworld.Metrics, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := h.metrics
	m.CurrentPlayerNum = len(h.players)
	return &m, nil
}

// Announce records the message.
func (h *SimHandler) Announce(_ context.Context, msg string) error {
	h.record("announce %s", msg)
	return nil
}

// Kick removes the player, or fails for one not online.
func (h *SimHandler) Kick(_ context.Context, userID, msg string) error {
	if !h.remove(userID) {
		return errors.New("player not found")
	}
	h.record("kick %s %s", userID, msg)
	return nil
}

// Ban removes the player and remembers the ban.
func (h *SimHandler) Ban(_ context.Context, userID, msg string) error {
	h.remove(userID)
	h.mu.Lock()
	if h.banned == nil {
		h.banned = make(map[string]bool)
	}
	h.banned[userID] = true
	h.mu.Unlock()
	h.record("ban %s %s", userID, msg)
	return nil
}

// Unban forgets the ban.
func (h *SimHandler) Unban(_ context.Context, userID string) error {
	h.mu.Lock()
	delete(h.banned, userID)
	h.mu.Unlock()
	h.record("unban %s", userID)
	return nil
}

// Save records the save.
func (h *SimHandler) Save(context.Context) error { h.record("save"); return nil }

// Shutdown records the shutdown.
func (h *SimHandler) Shutdown(_ context.Context, wait int, msg string) error {
	h.record("shutdown %d %s", wait, msg)
	return nil
}

// Stop records the stop.
func (h *SimHandler) Stop(context.Context) error { h.record("stop"); return nil }

func (h *SimHandler) remove(userID string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, p := range h.players {
		if string(p.UserID) == userID {
			h.players = append(append([]palworld.Player(nil), h.players[:i]...), h.players[i+1:]...)
			return true
		}
	}
	return false
}
