// Package steamapitest runs a fake Steam Web API on loopback for tests,
// in the manner of net/http/httptest: IGameServersService/GetServerList
// and ISteamApps/GetServersAtAddress over a serverlist.Fleet, with the
// filter evaluator every gsq list shares (serverlist.Filter.Match), so a
// filter means the same to it as to the fake master (package
// master/mastertest) and master.Server.
//
// It answers as the field notes describe the real API: at most Cap
// servers an answer (10,000), 100 when the request names no limit, every
// empty field left out, {"response":{}} when nothing matches, the steamid
// as a string, 403 with an HTML page for a wrong key. Each [Profile] adds
// what clients meet besides: 429 with a Retry-After past a request
// budget, servers behind Steam Datagram Relay listed at 169.254.0.0/16
// addresses, numbers sent as strings, a method answered only at
// /v0001/, a body that never ends, one that is not JSON, and a server
// that never answers.
package steamapitest

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
	"github.com/gsq-project/gsq/serverlist"
)

// Defaults of a [Profile] left zero: the real API's.
const (
	DefaultCap   = 10_000
	DefaultLimit = 100
)

// Profile describes how the fake answers.
type Profile struct {
	// Name is the profile's name (for LookupProfile); Description says
	// what it plays.
	Name, Description string
	// Cap is the most servers an answer holds (default DefaultCap).
	Cap int
	// LimitAfter and LimitFor, if positive, throttle the fake in a cycle:
	// it answers LimitAfter requests, then answers the next LimitFor 429
	// with a Retry-After of RetryAfter (whole seconds; none sent when
	// zero), and so on. A cycle of requests, not of time, so that a test
	// knows which request is refused.
	LimitAfter, LimitFor int
	RetryAfter           time.Duration
	// RelayEvery, if positive, lists one server in RelayEvery (by its
	// address) at a Steam Datagram Relay address (169.254.0.0/16), as
	// the real API lists servers behind the relay: the same address in
	// every answer.
	RelayEvery int
	// NumbersAsStrings writes every number as a string ("players":"3").
	NumbersAsStrings bool
	// V0001Only answers 404 at /v1/ and serves the method at /v0001/.
	V0001Only bool
	// EndlessBody answers GetServerList with a body that never ends
	// (server records, written as the client reads), until the client
	// stops reading.
	EndlessBody bool
	// NotJSON answers every request 200 with an HTML page.
	NotJSON bool
	// Hang keeps every request waiting, headers unsent, until the client
	// gives up or the server closes.
	Hang bool
}

// Profiles returns the built-in profiles, in a stable order.
func Profiles() []Profile {
	return []Profile{
		{Name: "steam", Description: "the Web API as the field notes describe it: 10,000 servers an answer, 100 by default, empty fields left out"},
		{Name: "throttled", Description: "every third request answered 429 with Retry-After: 1", LimitAfter: 2, LimitFor: 1, RetryAfter: time.Second},
		{Name: "throttled-silent", Description: "one request answered, then five answered 429 without a Retry-After", LimitAfter: 1, LimitFor: 5},
		{Name: "relays", Description: "one server in 5 listed at a Steam Datagram Relay address (169.254.0.0/16)", RelayEvery: 5},
		{Name: "strings", Description: "every number written as a string", NumbersAsStrings: true},
		{Name: "v0001", Description: "the method answered only at /v0001/, 404 at /v1/", V0001Only: true},
		{Name: "endless", Description: "GetServerList answered with a body that never ends", EndlessBody: true},
		{Name: "html", Description: "every request answered 200 with an HTML page", NotJSON: true},
		{Name: "hang", Description: "every request left waiting, headers unsent", Hang: true},
	}
}

// LookupProfile returns the built-in profile called name. The error
// lists the known names.
func LookupProfile(name string) (Profile, error) {
	return fakeprofile.Lookup("steamapitest", Profiles(), Profile.name, name)
}

// ProfileNames lists the built-in profiles' names.
func ProfileNames() []string { return fakeprofile.Names(Profiles(), Profile.name) }

func (p Profile) name() string { return p.Name }

// Server is a fake Steam Web API on a loopback port.
type Server struct {
	// Profile is what the fake plays; Key the key GetServerList takes
	// (any other gets 403).
	Profile Profile
	Key     string
	// Fleet is the servers the fake lists; it may change while the fake
	// serves.
	Fleet *serverlist.Fleet

	http     *httptest.Server
	stop     chan struct{}
	stopOnce sync.Once
	requests atomic.Int64
	limited  atomic.Int64
	written  atomic.Int64

	mu      sync.Mutex
	nth     int // requests through the throttle
	lan     map[netip.AddrPort]bool
	rejects map[netip.AddrPort]string
	queries []string
}

// NewServer starts a fake playing p, listing fleet, taking key, on
// 127.0.0.1 with a random port. Close it when done.
func NewServer(p Profile, fleet *serverlist.Fleet, key string) *Server {
	s := &Server{Profile: p, Key: key, Fleet: fleet, stop: make(chan struct{}),
		lan: map[netip.AddrPort]bool{}, rejects: map[netip.AddrPort]string{}}
	s.http = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// URL is the base URL to give a steamapi.Client ("http://127.0.0.1:port").
func (s *Server) URL() string { return s.http.URL }

// Addr is the address the fake listens on.
func (s *Server) Addr() netip.AddrPort {
	a, _ := netip.ParseAddrPort(strings.TrimPrefix(s.http.URL, "http://"))
	return a
}

// Close stops the fake, ending hung requests.
func (s *Server) Close() {
	s.stopOnce.Do(func() { close(s.stop) })
	s.http.Close()
}

// Requests returns the requests received; Limited those answered 429;
// Written the bytes of endless bodies written.
func (s *Server) Requests() int64 { return s.requests.Load() }
func (s *Server) Limited() int64  { return s.limited.Load() }
func (s *Server) Written() int64  { return s.written.Load() }

// Queries returns the raw query strings received, in order, the key
// replaced by "KEY" when it is the fake's: a test reads the filters
// asked.
func (s *Server) Queries() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.queries...)
}

// SetLan makes GetServersAtAddress report the server at addr as a LAN
// server; SetReject makes it report why it is rejected.
func (s *Server) SetLan(addr netip.AddrPort, lan bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lan[addr] = lan
}

// SetReject makes GetServersAtAddress report the server at addr rejected
// for why ("" clears it).
func (s *Server) SetReject(addr netip.AddrPort, why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rejects[addr] = why
}

const forbidden = "<html><head><title>Forbidden</title></head><body><h1>Forbidden</h1>Access is denied. Retrying will not help. Please verify your <pre>key=</pre> parameter.</body></html>"

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	s.mu.Lock()
	q := r.URL.RawQuery
	if key := r.URL.Query().Get("key"); key != "" && key == s.Key {
		q = strings.ReplaceAll(q, "key="+key, "key=KEY")
	}
	s.queries = append(s.queries, r.URL.Path+"?"+q)
	s.mu.Unlock()
	p := s.Profile
	switch {
	case p.Hang:
		select {
		case <-r.Context().Done():
		case <-s.stop:
		}
		return
	case !s.allow():
		s.limited.Add(1)
		if p.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int(p.RetryAfter/time.Second)))
		}
		http.Error(w, "Too Many Requests", http.StatusTooManyRequests)
		return
	case p.NotJSON:
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body>Steam is down for maintenance</body></html>")
		return
	}
	switch r.URL.Path {
	case "/IGameServersService/GetServerList/v1/", "/IGameServersService/GetServerList/v0001/":
		if p.V0001Only && strings.Contains(r.URL.Path, "/v1/") {
			http.NotFound(w, r)
			return
		}
		s.serverList(w, r)
	case "/ISteamApps/GetServersAtAddress/v0001/", "/ISteamApps/GetServersAtAddress/v1/":
		s.serversAt(w, r)
	default:
		http.NotFound(w, r)
	}
}

// allow reports whether the throttle's cycle lets this request through.
func (s *Server) allow() bool {
	p := s.Profile
	if p.LimitAfter <= 0 || p.LimitFor <= 0 {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nth++
	return (s.nth-1)%(p.LimitAfter+p.LimitFor) < p.LimitAfter
}

// serverList answers GetServerList.
func (s *Server) serverList(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("key") == "" || q.Get("key") != s.Key {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, forbidden)
		return
	}
	limit := DefaultLimit
	if v, err := strconv.Atoi(q.Get("limit")); err == nil && v > 0 {
		limit = v
	}
	limit = min(limit, s.cap())
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if s.Profile.EndlessBody {
		s.endless(w)
		return
	}
	flt, err := serverlist.Parse(q.Get("filter"))
	var list []serverlist.Server
	if err == nil {
		s.Fleet.Select(flt, serverlist.RegionWorld, limit, func(srv *serverlist.Server) bool {
			list = append(list, *srv)
			return true
		})
	}
	if len(list) == 0 {
		fmt.Fprint(w, `{"response":{}}`)
		return
	}
	b := []byte(`{"response":{"servers":[`)
	for i := range list {
		if i > 0 {
			b = append(b, ',')
		}
		srv := &list[i]
		if n := s.Profile.RelayEvery; n > 0 {
			srv.Addr = relay(srv.Addr, n)
		}
		b = s.appendServer(b, srv, nil)
		if len(b) > 32<<10 {
			if _, err := w.Write(b); err != nil {
				return
			}
			b = b[:0]
		}
	}
	b = append(b, "]}}"...)
	_, _ = w.Write(b)
}

// relay returns the address the fake lists a with: its Steam Datagram
// Relay address for one IPv4 address (and port) in every, by the
// address's value, else a itself. The relay address is the fake's own
// mapping, the same in every answer: 169.254, the address's last two
// bytes, and its port moved by its second byte.
func relay(a netip.AddrPort, every int) netip.AddrPort {
	if !a.Addr().Is4() {
		return a
	}
	ip := a.Addr().As4()
	if (uint64(ip[0])<<24|uint64(ip[1])<<16|uint64(ip[2])<<8|uint64(ip[3])+uint64(a.Port()))%uint64(every) != 0 {
		return a
	}
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{169, 254, ip[2], ip[3]}), a.Port()+uint16(ip[1]))
}

func (s *Server) cap() int {
	if s.Profile.Cap > 0 {
		return s.Profile.Cap
	}
	return DefaultCap
}

// appendServer appends srv as the API writes a record: every zero field
// left out, the steamid a string, and, for GetServersAtAddress, extra's
// members.
func (s *Server) appendServer(b []byte, srv *serverlist.Server, extra func(o *jsonenc.Object)) []byte {
	o := jsonenc.Begin(b, false)
	num := func(k string, v int64) {
		switch {
		case v == 0:
		case s.Profile.NumbersAsStrings:
			o.Str(k, strconv.FormatInt(v, 10))
		default:
			o.Int(k, v)
		}
	}
	str := func(k, v string) {
		if v != "" {
			o.Str(k, v)
		}
	}
	flag := func(k string, v bool) {
		if v {
			o.Bool(k, true)
		}
	}
	o.Str("addr", srv.Addr.String())
	num("gameport", int64(srv.GamePort))
	num("specport", int64(srv.SpecPort))
	if srv.SteamID != 0 {
		o.Str("steamid", strconv.FormatUint(srv.SteamID, 10))
	}
	str("name", srv.Name)
	num("appid", int64(srv.AppID))
	str("gamedir", srv.GameDir)
	str("version", srv.Version)
	str("product", srv.Product)
	num("region", int64(srv.Region))
	num("players", int64(srv.Players))
	num("max_players", int64(srv.MaxPlayers))
	num("bots", int64(srv.Bots))
	str("map", srv.Map)
	flag("secure", srv.Secure)
	flag("dedicated", srv.Dedicated)
	str("os", srv.OS)
	str("gametype", srv.GameType)
	if extra != nil {
		extra(&o)
	}
	return o.End()
}

// endless writes server records until the client stops reading.
func (s *Server) endless(w http.ResponseWriter) {
	srv := serverlist.Server{Name: strings.Repeat("x", 200)}
	chunk := []byte(`{"response":{"servers":[`)
	for i := uint32(0); ; {
		for len(chunk) < 32<<10 {
			i++
			srv.Addr = netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), 27015)
			chunk = append(s.appendServer(chunk, &srv, nil), ',')
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

// serversAt answers GetServersAtAddress: the fleet's servers at the IP.
func (s *Server) serversAt(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	ip, err := netip.ParseAddr(r.URL.Query().Get("addr"))
	if err != nil {
		fmt.Fprint(w, `{"response":{"success":false,"message":"Invalid IP address"}}`)
		return
	}
	ip = ip.Unmap()
	b := []byte(`{"response":{"success":true,"servers":[`)
	n := 0
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, srv := range s.Fleet.Servers() {
		if srv.Addr.Addr() != ip {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		// The fields GetServersAtAddress sends: no name, players or map.
		short := serverlist.Server{Addr: srv.Addr, GamePort: srv.GamePort, SpecPort: srv.SpecPort, SteamID: srv.SteamID,
			AppID: srv.AppID, GameDir: srv.GameDir, Region: srv.Region, Secure: srv.Secure}
		b = s.appendServer(b, &short, func(o *jsonenc.Object) {
			o.Bool("lan", s.lan[srv.Addr])
			o.Int("gmsindex", int64(n))
			if why := s.rejects[srv.Addr]; why != "" {
				o.Str("reject", why)
			}
		})
		n++
	}
	b = append(b, "]}}"...)
	_, _ = w.Write(b)
}
