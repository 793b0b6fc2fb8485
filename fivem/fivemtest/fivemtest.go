// Package fivemtest runs fake FiveM servers (FXServer's HTTP endpoints
// /info.json, /players.json, /dynamic.json) on loopback for tests, in the
// manner of net/http/httptest. Each [Profile] plays a server clients
// meet: FXServer and RedM as they answer, /players.json disabled (404,
// 403), numbers written as strings, an /info.json that never ends, one
// that trickles, one that is JSON of the wrong shape, an HTML page, and a
// server that never answers.
package fivemtest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gsq-project/gsq/internal/fakeprofile"
	"github.com/gsq-project/gsq/internal/jsonenc"
)

// Profile describes a fake server.
type Profile struct {
	// Name is the profile's name (for LookupProfile); Description says
	// what it plays.
	Name, Description string
	// Game is the gamename convar ("gta5", "rdr3").
	Game string
	// Players is how many players are on.
	Players int
	// PlayersStatus, when not zero, is the status /players.json answers
	// instead of the list (404 or 403: disabled).
	PlayersStatus int
	// NumbersAsStrings writes every number as a string.
	NumbersAsStrings bool
	// EndlessInfo answers /info.json with a body that never ends.
	EndlessInfo bool
	// Trickle, if positive, writes /info.json a byte at a time, this long
	// apart.
	Trickle time.Duration
	// WrongShape answers /info.json with a JSON array.
	WrongShape bool
	// HTML answers every endpoint 200 with an HTML page.
	HTML bool
	// Hang keeps every request waiting, headers unsent.
	Hang bool
}

// Profiles returns the built-in profiles, in a stable order.
func Profiles() []Profile {
	return []Profile{
		{Name: "fxserver", Description: "a FiveM server (GTA V) with 3 players on", Game: "gta5", Players: 3},
		{Name: "redm", Description: "a RedM server (Red Dead Redemption 2), empty", Game: "rdr3"},
		{Name: "players-disabled", Description: "/players.json answered 404 (gamedig #674)", Game: "gta5", Players: 3, PlayersStatus: http.StatusNotFound},
		{Name: "players-forbidden", Description: "/players.json answered 403", Game: "gta5", Players: 3, PlayersStatus: http.StatusForbidden},
		{Name: "strings", Description: "every number written as a string", Game: "gta5", Players: 2, NumbersAsStrings: true},
		{Name: "endless", Description: "/info.json answered with a body that never ends", Game: "gta5", EndlessInfo: true},
		{Name: "trickle", Description: "/info.json written a byte every 50 ms", Game: "gta5", Trickle: 50 * time.Millisecond},
		{Name: "wrong-shape", Description: "/info.json answered with a JSON array", Game: "gta5", WrongShape: true},
		{Name: "html", Description: "every endpoint answered 200 with an HTML page", HTML: true},
		{Name: "hang", Description: "every request left waiting, headers unsent", Hang: true},
	}
}

// LookupProfile returns the built-in profile called name. The error
// lists the known names.
func LookupProfile(name string) (Profile, error) {
	return fakeprofile.Lookup("fivemtest", Profiles(), Profile.name, name)
}

// ProfileNames lists the built-in profiles' names.
func ProfileNames() []string { return fakeprofile.Names(Profiles(), Profile.name) }

func (p Profile) name() string { return p.Name }

// Server is a fake FiveM server on a loopback port.
type Server struct {
	Profile  Profile
	http     *httptest.Server
	stop     chan struct{}
	stopOnce sync.Once
	requests atomic.Int64
	written  atomic.Int64
}

// NewServer starts a fake playing p on 127.0.0.1 with a random port.
// Close it when done.
func NewServer(p Profile) *Server {
	s := &Server{Profile: p, stop: make(chan struct{})}
	s.http = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Addr is the address the fake listens on.
func (s *Server) Addr() netip.AddrPort {
	a, _ := netip.ParseAddrPort(strings.TrimPrefix(s.http.URL, "http://"))
	return a
}

// Requests returns the requests received; Written the bytes of endless
// or trickled bodies written.
func (s *Server) Requests() int64 { return s.requests.Load() }
func (s *Server) Written() int64  { return s.written.Load() }

// Close stops the fake, ending hung requests.
func (s *Server) Close() {
	s.stopOnce.Do(func() { close(s.stop) })
	s.http.Close()
}

// Hostname is the fake's server name, with FiveM's ^ colour codes.
const Hostname = "^2gsq ^7FiveM test"

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	p := s.Profile
	switch {
	case p.Hang:
		select {
		case <-r.Context().Done():
		case <-s.stop:
		}
		return
	case p.HTML:
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body>It works!</body></html>")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/info.json":
		switch {
		case p.EndlessInfo:
			s.endless(w)
		case p.WrongShape:
			fmt.Fprint(w, `["not","an","object"]`)
		case p.Trickle > 0:
			s.trickle(w, r, s.info())
		default:
			_, _ = w.Write(s.info())
		}
	case "/players.json":
		if p.PlayersStatus != 0 {
			http.Error(w, http.StatusText(p.PlayersStatus), p.PlayersStatus)
			return
		}
		_, _ = w.Write(s.players())
	case "/dynamic.json":
		_, _ = w.Write(s.dynamic())
	default:
		http.NotFound(w, r)
	}
}

// num writes n, or its text when the profile writes numbers as strings.
func (s *Server) num(o *jsonenc.Object, k string, n int64) {
	if s.Profile.NumbersAsStrings {
		o.Str(k, strconv.FormatInt(n, 10))
		return
	}
	o.Int(k, n)
}

func (s *Server) info() []byte {
	o := jsonenc.Begin(nil, false)
	o.Bool("enhancedHostSupport", true)
	o.Str("icon", "iVBORw0KGgoAAAANSUhEUgAAAGAAAABgCAYAAADimHc4AAAAAElFTkSuQmCC")
	o.Str("requestSteamTicket", "off")
	o.Strings("resources", []string{"mapmanager", "chat", "spawnmanager", "sessionmanager", "basic-gamemode", "hardcap"})
	o.Str("server", "FXServer-master SERVER v1.0.0.7290 linux")
	o.Key("vars")
	v := o.Sub()
	v.Str("gamename", s.Profile.Game)
	v.Str("locale", "en-US")
	v.Str("onesync_enabled", "true")
	v.Str("sv_enforceGameBuild", "2802")
	v.Str("sv_maxClients", "48")
	v.Str("sv_projectDesc", "A gsq test server")
	v.Str("sv_projectName", Hostname)
	v.Str("tags", "default, gsq")
	o.B = v.End()
	s.num(&o, "version", 1234567)
	return o.End()
}

func (s *Server) players() []byte {
	return jsonenc.AppendList(nil, s.Profile.Players, false, func(e *jsonenc.Object, i int) {
		e.Str("endpoint", "127.0.0.1")
		s.num(e, "id", int64(i+1))
		e.Strings("identifiers", []string{fmt.Sprintf("license:%040d", i+1)})
		e.Str("name", fmt.Sprintf("player %d", i+1))
		s.num(e, "ping", int64(20+i))
	})
}

func (s *Server) dynamic() []byte {
	o := jsonenc.Begin(nil, false)
	s.num(&o, "clients", int64(s.Profile.Players))
	o.Str("gametype", "Freeroam")
	o.Str("hostname", Hostname)
	o.Str("iv", "1337")
	o.Str("mapname", "fivem-map-skater")
	o.Str("sv_maxclients", "48")
	return o.End()
}

// endless writes an /info.json that never ends (its resources list goes
// on), until the client stops reading.
func (s *Server) endless(w http.ResponseWriter) {
	chunk := []byte(`{"resources":[`)
	for {
		for len(chunk) < 32<<10 {
			chunk = append(chunk, `"resource",`...)
		}
		n, err := w.Write(chunk)
		s.written.Add(int64(n))
		if err != nil {
			return
		}
		chunk = chunk[:0]
		select {
		case <-s.stop:
			return
		default:
		}
	}
}

// trickle writes b a byte at a time, Trickle apart, until the client
// goes.
func (s *Server) trickle(w http.ResponseWriter, r *http.Request, b []byte) {
	f, _ := w.(http.Flusher)
	t := time.NewTicker(s.Profile.Trickle)
	defer t.Stop()
	for i := range b {
		if _, err := w.Write(b[i : i+1]); err != nil {
			return
		}
		s.written.Add(1)
		if f != nil {
			f.Flush()
		}
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		case <-s.stop:
			return
		}
	}
}
