package steamapi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/serverlist"
	"github.com/gsq-project/gsq/steamapi/steamapitest"
)

// testKey is a key of the shape Valve gives out; it must never show.
const testKey = "0123456789ABCDEF0123456789ABCDEF"

// fleet is n servers of app 252490 (Rust) whose flags and maps vary with
// their index, so that the partitions split them.
func fleet(n int) *serverlist.Fleet {
	maps := []string{"Procedural Map", "Barren", "Hapis Island", "Custom"}
	servers := make([]serverlist.Server, n)
	for i := range servers {
		servers[i] = serverlist.Server{
			Addr:     netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), 28016),
			GamePort: 28015, SteamID: 90000000000000000 + uint64(i), Name: fmt.Sprintf("rust %d", i), AppID: 252490,
			GameDir: "rust", Region: serverlist.RegionEurope, Players: i % 3, MaxPlayers: 2, Map: maps[i/7%len(maps)],
			Secure: i%2 == 0, Dedicated: i%5 != 0, OS: []string{"l", "w"}[i/3%2], Password: i%11 == 0,
		}
	}
	return serverlist.NewFleet(servers)
}

// client is a Client of the fake srv, pacing and waiting nothing real:
// the waits it asks for are recorded.
func client(srv *steamapitest.Server) (*Client, *[]time.Duration) {
	var mu sync.Mutex
	waits := new([]time.Duration)
	now := time.Unix(1e9, 0)
	c := &Client{Key: testKey, BaseURL: srv.URL(), MinInterval: -1}
	c.clock = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	c.sleep = func(ctx context.Context, d time.Duration) error {
		if d > 0 {
			mu.Lock()
			*waits = append(*waits, d)
			now = now.Add(d)
			mu.Unlock()
		}
		return ctx.Err()
	}
	return c, waits
}

func collect(t *testing.T, call func(each func(*serverlist.Server) bool) (*ListResult, error)) ([]netip.AddrPort, *ListResult, error) {
	t.Helper()
	var got []netip.AddrPort
	res, err := call(func(s *serverlist.Server) bool {
		got = append(got, s.Addr)
		return true
	})
	return got, res, err
}

func selected(f *serverlist.Fleet, filter string, limit int) []netip.AddrPort {
	flt, err := serverlist.Parse(filter)
	if err != nil {
		panic(err)
	}
	var out []netip.AddrPort
	f.Select(flt, serverlist.RegionWorld, limit, func(s *serverlist.Server) bool {
		out = append(out, s.Addr)
		return true
	})
	return out
}

func sorted(a []netip.AddrPort) []netip.AddrPort {
	a = slices.Clone(a)
	slices.SortFunc(a, netip.AddrPort.Compare)
	return a
}

// One request lists what the filter selects, in the fake's order; a
// trailing NUL is trimmed; the limit is sent.
func TestGetServerList(t *testing.T) {
	t.Parallel()
	f := fleet(3000)
	srv := steamapitest.NewServer(steamapitest.Profile{}, f, testKey)
	defer srv.Close()
	c, _ := client(srv)
	filter := `\appid\252490\secure\1\nor\1\map\Barren`
	got, res, err := collect(t, func(each func(*serverlist.Server) bool) (*ListResult, error) {
		return c.GetServerList(testutil.Context(t), filter+"\x00", 0, each)
	})
	want := selected(f, filter, 0)
	if err != nil || !slices.Equal(got, want) || res.Full || res.Requests != 1 || res.Servers != len(want) {
		t.Fatalf("%v: %d servers of %d (%+v)", err, len(got), len(want), res)
	}
	q := srv.Queries()[0]
	if !strings.Contains(q, "limit=10000") || !strings.Contains(q, "filter=%5Cappid%5C252490%5Csecure%5C1%5Cnor%5C1%5Cmap%5CBarren&") {
		t.Errorf("query %q", q)
	}
	// A limit below what matches: the answer is full.
	got, res, err = collect(t, func(each func(*serverlist.Server) bool) (*ListResult, error) {
		return c.GetServerList(testutil.Context(t), filter, 50, each)
	})
	if err != nil || len(got) != 50 || !res.Full {
		t.Errorf("limit 50: %v, %d servers (%+v)", err, len(got), res)
	}
	// Nothing matches: {"response":{}}.
	got, res, err = collect(t, func(each func(*serverlist.Server) bool) (*ListResult, error) {
		return c.GetServerList(testutil.Context(t), `\appid\1`, 0, each)
	})
	if err != nil || len(got) != 0 || res.Full {
		t.Errorf("nothing: %v, %d servers (%+v)", err, len(got), res)
	}
	// A filter that does not read fails before anything is sent.
	before := srv.Requests()
	_, err = c.GetServerList(testutil.Context(t), `appid\1`, 0, func(*serverlist.Server) bool { return true })
	var pe *serverlist.ParseError
	if !errors.As(err, &pe) || srv.Requests() != before {
		t.Errorf("bad filter: %v (%d requests)", err, srv.Requests()-before)
	}
}

// The 10,000 cap: one request stops there; List partitions the filter
// until every part comes back short, and lists the whole fleet once.
func TestListPastTheCap(t *testing.T) {
	t.Parallel()
	f := fleet(18000)
	srv := steamapitest.NewServer(steamapitest.Profile{}, f, testKey)
	defer srv.Close()
	c, _ := client(srv)
	got, res, err := collect(t, func(each func(*serverlist.Server) bool) (*ListResult, error) {
		return c.GetServerList(testutil.Context(t), `\appid\252490`, 0, each)
	})
	if err != nil || len(got) != MaxLimit || !res.Full {
		t.Fatalf("one request: %v, %d servers (%+v)", err, len(got), res)
	}
	got, res, err = collect(t, func(each func(*serverlist.Server) bool) (*ListResult, error) {
		return c.List(testutil.Context(t), `\appid\252490`, each)
	})
	if err != nil || !res.Complete() || len(got) != 18000 || !slices.Equal(sorted(got), selected(f, "", 0)) {
		t.Fatalf("List: %v, %d servers (%+v)", err, len(got), res)
	}
	want := []string{`\appid\252490`, `\appid\252490\secure\1`, `\appid\252490\nor\1\secure\1`}
	if res.Requests != 3 || !slices.Equal(res.Filters, want) || res.Duplicates != 10000 {
		t.Errorf("requests %d, filters %q, %d duplicates", res.Requests, res.Filters, res.Duplicates)
	}
}

// Partitions split by every flag, then by the maps of the full answer;
// parts that stay full, and those MaxRequests leaves unasked, are named,
// and the error says the list is incomplete.
func TestListCutShort(t *testing.T) {
	t.Parallel()
	f := fleet(2000)
	srv := steamapitest.NewServer(steamapitest.Profile{Cap: 20}, f, testKey)
	defer srv.Close()
	c, _ := client(srv)
	c.Limit = 20
	got, res, err := collect(t, func(each func(*serverlist.Server) bool) (*ListResult, error) {
		return c.List(testutil.Context(t), `\appid\252490\secure\1`, each)
	})
	if !errors.Is(err, ErrCutShort) || res.Complete() || len(res.CutShort) == 0 || len(got) != res.Servers {
		t.Fatalf("%v: %d servers (%+v)", err, len(got), res)
	}
	for _, cut := range res.CutShort {
		if !strings.Contains(cut, `\map\`) || strings.Contains(cut, `\nor\1\secure\1`) {
			t.Errorf("cut short at %q: split by the maps, and never by the filter's own key", cut)
		}
	}
	if res.Requests > DefaultMaxRequests || slices.ContainsFunc(res.Filters, func(f string) bool { return strings.Count(f, `\secure\`) > 1 }) {
		t.Errorf("%d requests; filters %q", res.Requests, res.Filters)
	}
	c.MaxRequests = 3
	_, res, err = collect(t, func(each func(*serverlist.Server) bool) (*ListResult, error) {
		return c.List(testutil.Context(t), ``, each)
	})
	if !errors.Is(err, ErrCutShort) || res.Requests != 3 || len(res.CutShort) != 4 {
		t.Errorf("MaxRequests 3: %v (%+v)", err, res)
	}
	c.MaxRequests, c.MaxServers = 0, 30
	got, res, err = collect(t, func(each func(*serverlist.Server) bool) (*ListResult, error) {
		return c.List(testutil.Context(t), ``, each)
	})
	if !errors.Is(err, ErrCutShort) || len(got) != 30 {
		t.Errorf("MaxServers 30: %v, %d servers (%+v)", err, len(got), res)
	}
}

// The profiles: relays flagged, numbers as strings read, /v0001/ found
// and kept.
func TestProfiles(t *testing.T) {
	t.Parallel()
	f := fleet(500)
	for _, name := range []string{"relays", "strings", "v0001"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p, _ := steamapitest.LookupProfile(name)
			srv := steamapitest.NewServer(p, f, testKey)
			defer srv.Close()
			c, _ := client(srv)
			var relays, players int
			for range 2 {
				relays, players = 0, 0
				res, err := c.GetServerList(testutil.Context(t), "", 0, func(s *serverlist.Server) bool {
					if s.Relay() {
						relays++
					}
					players += s.Players
					return true
				})
				if err != nil || res.Servers != 500 || res.Relays != relays {
					t.Fatalf("%v (%+v)", err, res)
				}
			}
			if want := map[string]int{"relays": 100}[name]; relays != want || players != 499 {
				t.Errorf("%d relays, %d players; want %d and 499", relays, players, want)
			}
			if name == "v0001" {
				qs := srv.Queries()
				if len(qs) != 3 || !strings.Contains(qs[0], "/v1/") || !strings.Contains(qs[2], "/v0001/") {
					t.Errorf("queries %q: the second listing went to /v1/ again", qs)
				}
			}
		})
	}
}

// 429: the Retry-After is waited (all requests held off), then the
// request is made again; without one, MinInterval (at least 5 s) doubled;
// past Retries or MaxRetryAfter, ErrRateLimited.
func TestThrottled(t *testing.T) {
	t.Parallel()
	f := fleet(100)
	p, _ := steamapitest.LookupProfile("throttled")
	srv := steamapitest.NewServer(p, f, testKey)
	defer srv.Close()
	c, waits := client(srv)
	for i := range 3 {
		res, err := c.GetServerList(testutil.Context(t), "", 0, func(*serverlist.Server) bool { return true })
		if err != nil || res.Servers != 100 {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	if srv.Limited() != 1 || !slices.Equal(*waits, []time.Duration{time.Second}) {
		t.Errorf("%d answered 429, waits %v; want one wait of the Retry-After, 1s", srv.Limited(), *waits)
	}

	p, _ = steamapitest.LookupProfile("throttled-silent")
	silent := steamapitest.NewServer(p, f, testKey)
	defer silent.Close()
	c, waits = client(silent)
	c.Retries = 2
	c.MinInterval = 6 * time.Second
	_, _ = c.GetServerList(testutil.Context(t), "", 0, func(*serverlist.Server) bool { return true })
	_, err := c.GetServerList(testutil.Context(t), "", 0, func(*serverlist.Server) bool { return true })
	var se *StatusError
	if !errors.Is(err, ErrRateLimited) || !errors.As(err, &se) || se.Code != 429 || silent.Limited() != 3 {
		t.Fatalf("%v, %d answered 429", err, silent.Limited())
	}
	// MinInterval between the requests, then MinInterval (at least 5 s)
	// doubling before each retry.
	if want := []time.Duration{6 * time.Second, 6 * time.Second, 12 * time.Second}; !slices.Equal(*waits, want) {
		t.Errorf("waits %v, want %v", *waits, want)
	}

	c, _ = client(srv)
	c.MaxRetryAfter = 500 * time.Millisecond
	err = nil
	for i := 0; i < 3 && err == nil; i++ { // the fake refuses every third request
		_, err = c.GetServerList(testutil.Context(t), "", 0, func(*serverlist.Server) bool { return true })
	}
	if !errors.Is(err, ErrRateLimited) || !strings.Contains(err.Error(), "MaxRetryAfter") {
		t.Errorf("a Retry-After beyond MaxRetryAfter: %v", err)
	}
}

// A wrong key is ErrForbidden; a missing one fails before anything is
// sent; an endless body is cut at MaxBodySize after the servers before
// the cut were handed out; an HTML page is not the API; a silent server
// is a timeout.
func TestErrors(t *testing.T) {
	t.Parallel()
	f := fleet(10)
	srv := steamapitest.NewServer(steamapitest.Profile{}, f, testKey)
	defer srv.Close()
	c, _ := client(srv)
	c.Key = "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF"
	_, err := c.GetServerList(testutil.Context(t), "", 0, func(*serverlist.Server) bool { return true })
	var se *StatusError
	if !errors.Is(err, ErrForbidden) || !errors.As(err, &se) || se.Code != 403 || strings.Contains(err.Error(), c.Key) {
		t.Errorf("wrong key: %v", err)
	}
	var oe *OpError
	if !errors.As(err, &oe) || oe.Op != "GetServerList" || oe.Addr != srv.Addr().String() {
		t.Errorf("not an *OpError naming the method and the host: %#v", err)
	}
	for _, key := range []string{"", "has space", "tab\tkey"} {
		c.Key = key
		before := srv.Requests()
		_, err = c.List(testutil.Context(t), "", func(*serverlist.Server) bool { return true })
		if !errors.Is(err, ErrNoKey) && !errors.Is(err, ErrBadKey) || srv.Requests() != before {
			t.Errorf("key %q: %v", key, err)
		}
	}

	p, _ := steamapitest.LookupProfile("endless")
	endless := steamapitest.NewServer(p, f, testKey)
	defer endless.Close()
	c, _ = client(endless)
	c.MaxBodySize = 1 << 20
	n := 0
	_, err = c.GetServerList(testutil.Context(t), "", 0, func(*serverlist.Server) bool { n++; return true })
	if !errors.Is(err, ErrResponseTooLarge) || n < 1000 || endless.Written() > 64<<20 {
		t.Errorf("endless: %v after %d servers, %d bytes written", err, n, endless.Written())
	}

	p, _ = steamapitest.LookupProfile("html")
	html := steamapitest.NewServer(p, f, testKey)
	defer html.Close()
	c, _ = client(html)
	_, err = c.GetServerList(testutil.Context(t), "", 0, func(*serverlist.Server) bool { return true })
	var pe *ParseError
	if !errors.Is(err, ErrNotAPI) || !errors.As(err, &pe) {
		t.Errorf("html: %v", err)
	}

	p, _ = steamapitest.LookupProfile("hang")
	hang := steamapitest.NewServer(p, f, testKey)
	defer hang.Close()
	c, _ = client(hang)
	c.Timeout = 100 * time.Millisecond
	_, err = c.GetServerList(testutil.Context(t), "", 0, func(*serverlist.Server) bool { return true })
	var ne net.Error
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("hang: %v", err)
	}
	ctx, cancel := context.WithCancel(testutil.Context(t))
	cancel()
	if _, err = c.GetServerList(ctx, "", 0, func(*serverlist.Server) bool { return true }); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}
}

// The key never shows: not in an error (a refused connection's *url.Error
// included), not in Debug, not in Logf, whatever the fake does.
func TestKeyNeverShows(t *testing.T) {
	t.Parallel()
	f := fleet(50)
	var mu sync.Mutex
	var seen []string
	record := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, s)
	}
	check := func(t *testing.T, what string, err error) {
		t.Helper()
		for e := err; e != nil; e = errors.Unwrap(e) {
			record(e.Error())
		}
		mu.Lock()
		defer mu.Unlock()
		for _, s := range seen {
			if strings.Contains(s, testKey) || strings.Contains(s, testKey[:16]) {
				t.Errorf("%s: the key shows in %q", what, s)
			}
		}
		seen = seen[:0]
	}
	hook := func(c *Client) {
		c.Debug = func(dir string, _ netip.AddrPort, b []byte) { record(dir + " " + string(b)) }
		c.Logf = func(format string, args ...any) { record(fmt.Sprintf(format, args...)) }
	}
	for _, name := range steamapitest.ProfileNames() {
		p, _ := steamapitest.LookupProfile(name)
		srv := steamapitest.NewServer(p, f, testKey)
		c, _ := client(srv)
		hook(c)
		c.Timeout, c.MaxBodySize, c.Retries = 50*time.Millisecond, 64<<10, 1
		var err error
		for range 3 {
			_, err = c.List(testutil.Context(t), `\appid\252490`, func(*serverlist.Server) bool { return true })
		}
		srv.Close()
		check(t, name, err)
	}
	// A closed port: net/http's *url.Error carries the URL.
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := "http://" + l.Addr().String()
	l.Close()
	c := &Client{Key: testKey, BaseURL: closed, MinInterval: -1}
	hook(c)
	_, err := c.List(testutil.Context(t), "", func(*serverlist.Server) bool { return true })
	if err == nil || !strings.Contains(err.Error(), "key="+redacted) {
		t.Errorf("closed port: %v, want the URL with the key redacted", err)
	}
	check(t, "closed port", err)
	// A redirect is not followed: it would carry the key elsewhere.
	var followed bool
	elsewhere := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { followed = true }))
	defer elsewhere.Close()
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+r.URL.RequestURI(), http.StatusFound)
	}))
	defer redirect.Close()
	c = &Client{Key: testKey, BaseURL: redirect.URL, MinInterval: -1, HTTPClient: &http.Client{}}
	hook(c)
	_, err = c.List(testutil.Context(t), "", func(*serverlist.Server) bool { return true })
	if !errors.Is(err, ErrStatus) || followed {
		t.Errorf("redirect: %v (followed %v)", err, followed)
	}
	check(t, "redirect", err)
}

// The answer streams: the first server is handed out while the rest of
// the body has not been sent.
func TestStreams(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"response":{"servers":[{"addr":"10.0.0.1:27015"},`)
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		fmt.Fprint(w, `{"addr":"10.0.0.2:27015"}]}}`)
	}))
	defer srv.Close()
	c := &Client{Key: testKey, BaseURL: srv.URL, MinInterval: -1}
	var got []string
	res, err := c.GetServerList(testutil.Context(t), "", 0, func(s *serverlist.Server) bool {
		got = append(got, s.Addr.String())
		if len(got) == 1 {
			close(release) // the second is sent only now
		}
		return true
	})
	if err != nil || res.Servers != 2 || !slices.Equal(got, []string{"10.0.0.1:27015", "10.0.0.2:27015"}) {
		t.Errorf("%v, %v (%+v)", err, got, res)
	}
}

// Requests are paced: each waits MinInterval after the previous one.
func TestPacing(t *testing.T) {
	t.Parallel()
	srv := steamapitest.NewServer(steamapitest.Profile{}, fleet(10), testKey)
	defer srv.Close()
	c, waits := client(srv)
	c.MinInterval = 0 // the default: a second
	for range 3 {
		if _, err := c.GetServerList(testutil.Context(t), "", 0, func(*serverlist.Server) bool { return true }); err != nil {
			t.Fatal(err)
		}
	}
	if len(*waits) != 2 {
		t.Fatalf("waits %v, want two", *waits)
	}
	for _, w := range *waits {
		if w != DefaultMinInterval {
			t.Errorf("wait %v, want %v", w, DefaultMinInterval)
		}
	}
}

// "Is my server listed, and if not, why": listed, a LAN server, a
// rejected one, other ports only, nothing at the address; and not twice
// in ten minutes.
func TestListed(t *testing.T) {
	t.Parallel()
	f := fleet(20)
	srv := steamapitest.NewServer(steamapitest.Profile{}, f, "")
	defer srv.Close()
	servers := f.Servers()
	srv.SetLan(servers[1].Addr, true)
	srv.SetReject(servers[2].Addr, "banned appid")
	c, _ := client(srv)
	c.AddressInterval = -1
	game := netip.AddrPortFrom(servers[0].Addr.Addr(), servers[0].GamePort)
	for _, tc := range []struct {
		addr   netip.AddrPort
		listed bool
		why    string
	}{
		{servers[0].Addr, true, "listed: app 252490"},
		{game, true, "query port 28016, game port 28015"},
		{servers[1].Addr, false, "LAN server"},
		{servers[2].Addr, false, "rejects it: banned appid"},
		{netip.AddrPortFrom(servers[3].Addr.Addr(), 1), false, "no server on port 1"},
		{netip.MustParseAddrPort("192.0.2.1:27015"), false, "knows no server at 192.0.2.1"},
	} {
		l, err := c.Listed(testutil.Context(t), tc.addr)
		if err != nil || l.Listed != tc.listed || !strings.Contains(l.Why, tc.why) {
			t.Errorf("%v: %v, %+v; want listed %v, %q", tc.addr, err, l, tc.listed, tc.why)
		}
	}
	if q := srv.Queries()[0]; strings.Contains(q, "key=") || !strings.Contains(q, "addr=10.0.0.0") {
		t.Errorf("query %q: GetServersAtAddress takes the address and no key", q)
	}
	c.AddressInterval = 0
	if _, err := c.Listed(testutil.Context(t), servers[5].Addr); err != nil {
		t.Fatal(err)
	}
	before := srv.Requests()
	if _, err := c.Listed(testutil.Context(t), servers[5].Addr); !errors.Is(err, ErrTooFrequent) || srv.Requests() != before {
		t.Errorf("again at once: %v", err)
	}
}
