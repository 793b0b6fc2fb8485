// Package sdtdtest provides fake 7 Days to Die telnet consoles for tests,
// in the manner of net/http/httptest: a [Server] on a loopback port that
// plays the game's console through [sdtd.Server] (the prompts and banner
// verbatim, a NUL byte per log line before the login, the per-address
// lockout a success does not reset, output written 64 bytes at a time)
// with a [SimHandler] that answers the usual commands and can put log
// lines in the middle of an answer, as console-field-notes.md §4.4 asks.
//
// The package uses the standard library only.
package sdtdtest

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gsq-project/gsq/sdtd"
)

// Server is a fake telnet console on a loopback port.
type Server struct {
	// Telnet is the server itself; its fields may be set before Start.
	Telnet   *sdtd.Server
	Listener net.Listener
	served   chan error
}

// NewServer starts a fake with password and handler (nil: a SimHandler).
func NewServer(password string, h sdtd.Handler) *Server {
	s := NewUnstartedServer(password, h)
	s.Start()
	return s
}

// NewUnstartedServer is NewServer without the start. It panics if no
// loopback port can be bound, as httptest does.
func NewUnstartedServer(password string, h sdtd.Handler) *Server {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("sdtdtest: listen on loopback: %v", err))
	}
	return NewUnstartedServerOn(l, password, h)
}

// NewUnstartedServerOn is NewUnstartedServer on a listener of the
// caller's (gsq serve's, on the address its user gave).
func NewUnstartedServerOn(l net.Listener, password string, h sdtd.Handler) *Server {
	if h == nil {
		h = &SimHandler{}
	}
	s := &Server{Listener: l, Telnet: &sdtd.Server{Password: password, Handler: h}}
	if sim, ok := h.(*SimHandler); ok {
		sim.server = s.Telnet
	}
	return s
}

// Start serves.
func (s *Server) Start() {
	s.served = make(chan error, 1)
	go func() { s.served <- s.Telnet.Serve(s.Listener) }()
}

// Addr is the address served.
func (s *Server) Addr() netip.AddrPort { return s.Listener.Addr().(*net.TCPAddr).AddrPort() }

// Close shuts the server down.
func (s *Server) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.Telnet.Shutdown(ctx)
	if s.served != nil {
		<-s.served
	}
}

// SimHandler answers as a 7DTD server: listplayers (lp), version,
// gettime (gt), say, help; anything else is an unknown command. With
// LogMidAnswer, listplayers puts a log line between its rows, as a busy
// server does.
type SimHandler struct {
	Players      []sdtd.Player
	LogMidAnswer bool
	server       *sdtd.Server
	received     atomic.Int64
}

// Received counts the commands the handler got.
func (h *SimHandler) Received() int64 { return h.received.Load() }

// ServeTelnet answers cmd.
func (h *SimHandler) ServeTelnet(ctx context.Context, w sdtd.ResponseWriter, cmd string) {
	h.received.Add(1)
	name, arg, _ := strings.Cut(cmd, " ")
	switch strings.ToLower(name) {
	case "listplayers", "lp":
		for i, p := range h.Players {
			fmt.Fprintf(w, "%d. id=%d, %s, pos=%s, rot=(0.0, 90.0, 0.0), remote=True, health=%d, deaths=%d, zombies=%d, players=%d, score=%d, level=%d, pltfmid=%s, crossid=%s, ip=%s, ping=%d\n",
				i+1, p.EntityID, p.Name, p.Position, p.Health, p.Deaths, p.Zombies, p.Players, p.Score, p.Level, p.PlatformID, p.CrossID, p.IP, p.Ping)
			if h.LogMidAnswer && h.server != nil {
				h.server.Log(fmt.Sprintf("Chat (from 'Steam_76561198000000009', entity id '200', to 'Global'): 'Zed': row %d", i+1))
			}
		}
		fmt.Fprintf(w, "Total of %d in the game\n", len(h.Players))
	case "version":
		w.WriteString("Game version: V 1.0 (b333) Compatibility Version: V 1.0\n")
	case "gettime", "gt":
		w.WriteString("Day 7, 21:04\n")
	case "say":
		if h.server != nil {
			h.server.Log(fmt.Sprintf("Chat (from '-non-player-', entity id '-1', to 'Global'): 'Server': %s", strings.Trim(arg, `"`)))
		}
	case "help":
		w.WriteString("*** Generic Console Help ***\nlistplayers => lists all players\nversion => game version\n")
	default:
		w.WriteString(sdtd.UnknownCommand(cmd) + "\n")
	}
}
