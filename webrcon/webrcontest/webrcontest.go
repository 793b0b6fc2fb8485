// Package webrcontest provides fake Rust WebRCON servers for tests, in the
// manner of net/http/httptest: a [Server] on a loopback port that plays
// Rust's behaviour through [webrcon.Server] (a raw close frame for a wrong
// password, no answer to WebSocket pings) or Oxide's (every reply sent to
// every session), with a [SimHandler] that answers serverinfo, playerlist,
// status, echo, a silent say, a slow server.save and a large
// console.tail, as console-field-notes.md §2.6 asks of a fake.
//
// The package uses the standard library only.
package webrcontest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gsq-project/gsq/webrcon"
)

// Profile is a kind of real server.
type Profile struct {
	Name string
	// Oxide sends every reply to every session.
	Oxide bool
}

// The profiles. Neither answers WebSocket pings.
var (
	Rust  = Profile{Name: "rust"}
	Oxide = Profile{Name: "oxide", Oxide: true}
)

// Profiles lists the profiles.
func Profiles() []Profile { return []Profile{Rust, Oxide} }

// ProfileNames lists their names.
func ProfileNames() []string { return []string{Rust.Name, Oxide.Name} }

// LookupProfile returns the profile of that name; its error lists the
// known names.
func LookupProfile(name string) (Profile, error) {
	for _, p := range Profiles() {
		if p.Name == name {
			return p, nil
		}
	}
	return Profile{}, fmt.Errorf("webrcontest: unknown profile %q (known: %s)", name, strings.Join(ProfileNames(), ", "))
}

// Server is a fake WebRCON server on a loopback port.
type Server struct {
	// WS is the server itself; its fields may be set before Start.
	WS       *webrcon.Server
	Listener net.Listener
	served   chan error
}

// NewServer starts a fake of profile with password and handler (nil: a
// SimHandler).
func NewServer(p Profile, password string, h webrcon.Handler) *Server {
	s := NewUnstartedServer(p, password, h)
	s.Start()
	return s
}

// NewUnstartedServer is NewServer without the start. It panics if no
// loopback port can be bound, as httptest does.
func NewUnstartedServer(p Profile, password string, h webrcon.Handler) *Server {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("webrcontest: listen on loopback: %v", err))
	}
	return NewUnstartedServerOn(l, p, password, h)
}

// NewUnstartedServerOn is NewUnstartedServer on a listener of the
// caller's (gsq serve's, on the address its user gave).
func NewUnstartedServerOn(l net.Listener, p Profile, password string, h webrcon.Handler) *Server {
	if h == nil {
		h = &SimHandler{}
	}
	s := &Server{Listener: l, WS: &webrcon.Server{Password: password, Handler: h, IgnorePings: true, BroadcastReplies: p.Oxide}}
	if sim, ok := h.(*SimHandler); ok {
		sim.server = s.WS
	}
	return s
}

// Start serves.
func (s *Server) Start() {
	s.served = make(chan error, 1)
	go func() { s.served <- s.WS.Serve(s.Listener) }()
}

// Addr is the address served.
func (s *Server) Addr() netip.AddrPort { return s.Listener.Addr().(*net.TCPAddr).AddrPort() }

// Close shuts the server down.
func (s *Server) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.WS.Shutdown(ctx)
	if s.served != nil {
		<-s.served
	}
}

// Log broadcasts a console line, as Rust does with Identifier 0.
func (s *Server) Log(line string) {
	s.WS.Broadcast(webrcon.Message{Message: line, Type: webrcon.TypeGeneric})
}

// Chat broadcasts a chat message: JSON inside the message's JSON.
func (s *Server) Chat(c webrcon.Chat) {
	b, _ := json.Marshal(c)
	s.WS.Broadcast(webrcon.Message{Message: string(b), Type: webrcon.TypeChat})
}

// Report broadcasts a player's F7 report.
func (s *Server) Report(r webrcon.Report) {
	b, _ := json.Marshal(r)
	s.WS.Broadcast(webrcon.Message{Message: string(b), Type: webrcon.TypeReport})
}

// SimHandler answers as a Rust server: serverinfo and playerlist in JSON,
// status in text, "echo TEXT", "say TEXT" with no reply (the text goes to
// every session as chat from SERVER), "server.save" after SaveDelay, and
// "console.tail N" with TailSize bytes of log lines. Unknown commands get
// Rust's "Command '<name>' not found". Fields must not change once
// serving.
type SimHandler struct {
	Info    webrcon.ServerInfo
	Players []webrcon.Player
	// SaveDelay is how long server.save takes; 0 means 2 s.
	SaveDelay time.Duration
	// TailSize is the size of the answer to console.tail; 0 means 1 MB.
	TailSize int
	server   *webrcon.Server
	received atomic.Int64
}

// Received counts the commands the handler got.
func (h *SimHandler) Received() int64 { return h.received.Load() }

// ServeWebRcon answers r.
func (h *SimHandler) ServeWebRcon(ctx context.Context, w webrcon.ResponseWriter, r *webrcon.Request) {
	h.received.Add(1)
	name, arg, _ := strings.Cut(r.Message, " ")
	switch strings.ToLower(name) {
	case "serverinfo":
		json.NewEncoder(w).Encode(h.Info)
	case "playerlist":
		ps := h.Players
		if ps == nil {
			ps = []webrcon.Player{}
		}
		json.NewEncoder(w).Encode(ps)
	case "status":
		fmt.Fprintf(w, "hostname: %s\nversion : 2593 secure (secure mode enabled, connected to Steam3)\nmap     : %s\nplayers : %d (%d max) (0 queued) (0 joining)\n\nid                name   ping connected addr owner violation kicks\n",
			h.Info.Hostname, h.Info.Map, len(h.Players), h.Info.MaxPlayers)
		for _, p := range h.Players {
			fmt.Fprintf(w, "%s \"%s\" %d %ds %s 0.0 0\n", p.SteamID, p.DisplayName, p.Ping, p.ConnectedSeconds, p.Address)
		}
	case "echo":
		w.WriteString(arg)
	case "say":
		if h.server != nil {
			b, _ := json.Marshal(webrcon.Chat{Channel: 2, Message: arg, UserID: "0", Username: "SERVER", Color: "#eee", Time: time.Now().Unix()})
			h.server.Broadcast(webrcon.Message{Message: string(b), Type: webrcon.TypeChat})
		}
	case "server.save":
		delay := h.SaveDelay
		if delay == 0 {
			delay = 2 * time.Second
		}
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
			w.WriteString("Saved 12,345 ents, cache(0.01), write(0.02), disk(0.01).")
		case <-ctx.Done():
		}
	case "console.tail":
		size := h.TailSize
		if size == 0 {
			size = 1 << 20
		}
		n, _ := strconv.Atoi(arg)
		for i := 0; size > 0; i++ {
			line := fmt.Sprintf("[%d/%d] log line %d of the server console\n", i, n, i)
			if len(line) > size {
				line = line[:size]
			}
			w.WriteString(line)
			size -= len(line)
		}
	default:
		fmt.Fprintf(w, "Command '%s' not found", name)
	}
}
