// Package betest provides fake BattlEye RCon servers for tests, in the
// manner of net/http/httptest: a [Server] on a loopback UDP port (or on a
// socket of the test's, such as an in-memory one inside a
// testing/synctest bubble) that plays a real server's behaviour
// ([Profile]: dayz, arma3, reforger) through [battleye.Server], and the
// faults real networks and servers add ([Faults]): silence while RCon is
// disabled or the server loads, lost, duplicated and reordered parts,
// corrupted checksums, and lost acknowledgements that make the server send
// its messages again. [SimHandler] answers the usual commands with the
// text real servers give.
//
// The behaviour comes from BattlEye's BERConProtocol.txt and the reports
// collected in console-field-notes.md §3.
//
// The package uses the standard library only.
package betest

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gsq-project/gsq/battleye"
)

// Profile is a kind of real server.
type Profile struct {
	Name string
	// Reforger answers as Arma Reforger: an empty acknowledgement, then
	// the output as server messages.
	Reforger bool
	// PartSize is the most answer text per datagram.
	PartSize int
}

// The profiles.
var (
	DayZ     = Profile{Name: "dayz", PartSize: battleye.DefaultPartSize}
	Arma3    = Profile{Name: "arma3", PartSize: battleye.DefaultPartSize}
	Reforger = Profile{Name: "reforger", Reforger: true, PartSize: battleye.DefaultPartSize}
)

// Profiles lists the profiles.
func Profiles() []Profile { return []Profile{DayZ, Arma3, Reforger} }

// ProfileNames lists the profiles' names.
func ProfileNames() []string {
	var names []string
	for _, p := range Profiles() {
		names = append(names, p.Name)
	}
	return names
}

// LookupProfile returns the profile of that name; its error lists the
// known names.
func LookupProfile(name string) (Profile, error) {
	for _, p := range Profiles() {
		if p.Name == name {
			return p, nil
		}
	}
	return Profile{}, fmt.Errorf("betest: unknown profile %q (known: %s)", name, strings.Join(ProfileNames(), ", "))
}

// Faults are what the fake does wrong on purpose.
type Faults struct {
	// Disabled: the server never answers, as BattlEye with no RCon
	// configured (behind a firewall that drops the ICMP).
	Disabled bool
	// BootDelay: the server answers nothing until this long after Start,
	// as a server still loading its mission.
	BootDelay time.Duration
	// DropPart, from 1, loses that part of every multi-part answer the
	// first time it is sent (a command sent again gets it).
	DropPart int
	// DuplicateParts sends every part of a multi-part answer twice.
	DuplicateParts bool
	// ReorderParts sends the first part of a multi-part answer last.
	ReorderParts bool
	// BadCRC sends, before every answer to a command, a copy of it whose
	// checksum is wrong.
	BadCRC bool
	// LoseAcks loses the first LoseAcks acknowledgements of server
	// messages, so the server sends those messages again.
	LoseAcks int
	// AsyncDelay delays each command's handler (so, on Reforger, its
	// output after the acknowledgement).
	AsyncDelay time.Duration
}

// Server is a fake BattlEye RCon server.
type Server struct {
	// BE is the server itself; set its fields (IdleTimeout, Resends,
	// ...) before Start.
	BE     *battleye.Server
	Faults Faults
	// PacketConn is the socket served: a loopback UDP socket made by
	// NewUnstartedServer; a test may replace it before Start.
	PacketConn net.PacketConn

	received atomic.Int64
	dropped  atomic.Int64
	acks     atomic.Int64
	resent   atomic.Int64

	mu       sync.Mutex
	started  time.Time
	lostAcks int
	dropDone map[string]bool // parts already lost once
	held     map[string][]byte
	seqs     map[byte]int // command sequence numbers seen, with counts
	served   chan error
}

// NewServer starts a fake of profile with password and handler (nil: a
// SimHandler).
func NewServer(p Profile, password string, h battleye.Handler) *Server {
	s := NewUnstartedServer(p, password, h)
	s.Start()
	return s
}

// NewUnstartedServer is NewServer without the start, so that fields can
// be set first. It panics if no loopback port can be bound, as httptest
// does.
func NewUnstartedServer(p Profile, password string, h battleye.Handler) *Server {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("betest: listen on loopback: %v", err))
	}
	return NewUnstartedServerOn(pc, p, password, h)
}

// NewUnstartedServerOn is NewUnstartedServer on a socket of the caller's
// (gsq serve's, on the address its user gave).
func NewUnstartedServerOn(pc net.PacketConn, p Profile, password string, h battleye.Handler) *Server {
	if h == nil {
		h = &SimHandler{}
	}
	s := &Server{PacketConn: pc, dropDone: make(map[string]bool), held: make(map[string][]byte), seqs: make(map[byte]int)}
	s.BE = &battleye.Server{Password: password, Handler: h, Reforger: p.Reforger, PartSize: p.PartSize, RateLimit: -1}
	if sim, ok := h.(*SimHandler); ok {
		sim.server = s
	}
	return s
}

// Start serves.
func (s *Server) Start() {
	s.mu.Lock()
	s.started = time.Now()
	s.served = make(chan error, 1)
	s.mu.Unlock()
	if s.Faults.AsyncDelay > 0 {
		h, delay := s.BE.Handler, s.Faults.AsyncDelay
		s.BE.Handler = battleye.HandlerFunc(func(ctx context.Context, w battleye.ResponseWriter, cmd string) {
			t := time.NewTimer(delay)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
				return
			}
			h.ServeBattlEye(ctx, w, cmd)
		})
	}
	go func() { s.served <- s.BE.Serve(&faultConn{PacketConn: s.PacketConn, s: s}) }()
}

// Addr is the address served.
func (s *Server) Addr() netip.AddrPort {
	if a, ok := s.PacketConn.LocalAddr().(*net.UDPAddr); ok {
		return a.AddrPort()
	}
	return netip.AddrPort{}
}

// Close shuts the server down.
func (s *Server) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.BE.Shutdown(ctx)
	s.PacketConn.Close()
	if s.served != nil {
		<-s.served
	}
}

// Broadcast sends a server message to every client logged in.
func (s *Server) Broadcast(msg string) int { return s.BE.Broadcast(msg) }

// Received counts the datagrams that reached the fake, dropped ones
// included.
func (s *Server) Received() int64 { return s.received.Load() }

// Dropped counts the datagrams the faults dropped (both ways).
func (s *Server) Dropped() int64 { return s.dropped.Load() }

// Acks counts the acknowledgements of server messages received, lost
// ones included.
func (s *Server) Acks() int64 { return s.acks.Load() }

// Resent counts the server messages sent more than once.
func (s *Server) Resent() int64 { return s.resent.Load() }

// Seqs returns how many commands (keep-alives included) came with each
// sequence number.
func (s *Server) Seqs() map[byte]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[byte]int, len(s.seqs))
	for k, v := range s.seqs {
		out[k] = v
	}
	return out
}

// faultConn plays the faults on the server's socket.
type faultConn struct {
	net.PacketConn
	s    *Server
	mu   sync.Mutex
	sent map[string]bool // server messages sent, to count re-sends
}

func (c *faultConn) silent() bool {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Faults.Disabled || time.Since(s.started) < s.Faults.BootDelay
}

func (c *faultConn) ReadFrom(b []byte) (int, net.Addr, error) {
	for {
		n, from, err := c.PacketConn.ReadFrom(b)
		if err != nil {
			return n, from, err
		}
		s := c.s
		s.received.Add(1)
		if c.silent() {
			s.dropped.Add(1)
			continue
		}
		if p, err := battleye.ParsePacket(b[:n]); err == nil {
			switch p.Type {
			case battleye.TypeMessage:
				s.acks.Add(1)
				s.mu.Lock()
				lose := s.lostAcks < s.Faults.LoseAcks
				if lose {
					s.lostAcks++
				}
				s.mu.Unlock()
				if lose {
					s.dropped.Add(1)
					continue
				}
			case battleye.TypeCommand:
				s.mu.Lock()
				s.seqs[p.Seq]++
				s.mu.Unlock()
			}
		}
		return n, from, nil
	}
}

func (c *faultConn) WriteTo(b []byte, addr net.Addr) (int, error) {
	if c.silent() {
		return len(b), nil
	}
	p, err := battleye.ParsePacket(b)
	if err != nil {
		return c.PacketConn.WriteTo(b, addr)
	}
	s := c.s
	switch p.Type {
	case battleye.TypeMessage:
		key := fmt.Sprintf("%v/%d/%s", addr, p.Seq, p.Data)
		c.mu.Lock()
		if c.sent == nil {
			c.sent = make(map[string]bool)
		}
		if c.sent[key] {
			s.resent.Add(1)
		}
		c.sent[key] = true
		c.mu.Unlock()
	case battleye.TypeCommand:
		if s.Faults.BadCRC {
			bad := slices.Clone(b)
			binary.LittleEndian.PutUint32(bad[2:], binary.LittleEndian.Uint32(bad[2:])^0xFFFFFFFF)
			c.PacketConn.WriteTo(bad, addr)
		}
		if p.Total > 0 {
			return c.part(p, b, addr)
		}
	}
	return c.PacketConn.WriteTo(b, addr)
}

// part sends one part of a multi-part answer, with the faults.
func (c *faultConn) part(p battleye.Packet, b []byte, addr net.Addr) (int, error) {
	s := c.s
	key := fmt.Sprintf("%v/%d", addr, p.Seq)
	s.mu.Lock()
	if s.Faults.DropPart > 0 && int(p.Index) == s.Faults.DropPart-1 && !s.dropDone[key] {
		s.dropDone[key] = true
		s.mu.Unlock()
		s.dropped.Add(1)
		return len(b), nil
	}
	var out [][]byte
	switch {
	case s.Faults.ReorderParts && p.Index == 0 && p.Total > 1:
		s.held[key] = slices.Clone(b)
	case s.Faults.ReorderParts && p.Index == p.Total-1:
		out = append(out, b)
		if h := s.held[key]; h != nil {
			out = append(out, h)
			delete(s.held, key)
		}
	default:
		out = append(out, b)
	}
	s.mu.Unlock()
	for _, d := range out {
		c.PacketConn.WriteTo(d, addr)
		if s.Faults.DuplicateParts {
			c.PacketConn.WriteTo(d, addr)
		}
	}
	return len(b), nil
}

// SimHandler answers the usual commands as a DayZ server would, from its
// fields: players, bans, admins, say, version, and two of the fake's own,
// "big N" (N bytes of text) and "echo TEXT". Other commands are answered
// "Unknown command". It is safe for concurrent use once serving.
type SimHandler struct {
	Players []battleye.Player
	Bans    []battleye.Ban
	server  *Server
}

// ServeBattlEye answers cmd.
func (h *SimHandler) ServeBattlEye(ctx context.Context, w battleye.ResponseWriter, cmd string) {
	name, arg, _ := strings.Cut(cmd, " ")
	switch strings.ToLower(name) {
	case "players":
		w.WriteString(FormatPlayers(h.Players))
	case "bans":
		w.WriteString(FormatBans(h.Bans))
	case "admins":
		if h.server != nil {
			fmt.Fprintf(w, "Connected RCon admins:\n[#] [IP Address]:[Port]\n-----------------------------\n0   %v\n", w.RemoteAddr())
		}
	case "say":
		// "say -1 text" goes to everyone as chat; the answer is empty.
		if _, text, ok := strings.Cut(arg, " "); ok && h.server != nil {
			h.server.Broadcast("RCon admin #0: (Global) " + text)
		}
	case "version":
		w.WriteString("2.240")
	case "echo":
		w.WriteString(arg)
	case "big":
		var n int
		fmt.Sscan(arg, &n)
		line := strings.Repeat("x", 63) + "\n"
		for n > 0 {
			k := min(n, len(line))
			w.WriteString(line[:k])
			n -= k
		}
	default:
		w.WriteString("Unknown command")
	}
}

// FormatPlayers writes a "players" answer as DayZ does.
func FormatPlayers(ps []battleye.Player) string {
	var b strings.Builder
	b.WriteString("Players on server:\n[#] [IP Address]:[Port] [Ping] [GUID] [Name]\n--------------------------------------------------\n")
	for _, p := range ps {
		guid := p.GUID
		if p.Verified {
			guid += "(OK)"
		} else {
			guid += "(?)"
		}
		name := p.Name
		if p.Lobby {
			name += " (Lobby)"
		}
		fmt.Fprintf(&b, "%-3d %-21v %-4d %s %s\n", p.Slot, p.Addr, p.Ping, guid, name)
	}
	fmt.Fprintf(&b, "(%d players in total)", len(ps))
	return b.String()
}

// FormatBans writes a "bans" answer: GUID bans, then IP bans.
func FormatBans(bans []battleye.Ban) string {
	bans = slices.Clone(bans)
	sort.SliceStable(bans, func(i, j int) bool { return bans[i].GUID != "" && bans[j].GUID == "" })
	var b strings.Builder
	b.WriteString("GUID Bans:\n[#] [GUID] [Minutes left] [Reason]\n----------------------------------------\n")
	ip := false
	for _, x := range bans {
		if x.GUID == "" && !ip {
			ip = true
			b.WriteString("\nIP Bans:\n[#] [IP Address] [Minutes left] [Reason]\n----------------------------------------------\n")
		}
		who := x.GUID
		if who == "" {
			who = x.IP.String()
		}
		left := "perm"
		if x.MinutesLeft >= 0 {
			left = fmt.Sprint(x.MinutesLeft)
		}
		fmt.Fprintf(&b, "%-3d %s %s %s\n", x.Index, who, left, x.Reason)
	}
	return b.String()
}
