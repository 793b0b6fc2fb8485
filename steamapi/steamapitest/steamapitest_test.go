package steamapitest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/gsq-project/gsq/serverlist"
)

func TestLookupProfile(t *testing.T) {
	t.Parallel()
	for _, n := range ProfileNames() {
		if p, err := LookupProfile(n); err != nil || p.Name != n || p.Description == "" {
			t.Errorf("LookupProfile(%q) = %+v, %v", n, p, err)
		}
	}
	if _, err := LookupProfile("valve"); err == nil || !strings.Contains(err.Error(), "steam, throttled") {
		t.Errorf("unknown profile: %v", err)
	}
}

// get fetches path with query q from the fake, read as plain HTTP.
func get(t *testing.T, s *Server, path string, q url.Values) (int, string) {
	t.Helper()
	resp, err := http.Get(s.URL() + path + "?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// The fake answers as the field notes describe the API, read here with
// encoding/json rather than package steamapi: 100 servers without a
// limit, the cap, {"response":{}}, empty fields left out, the steamid as
// a string, 403 for a wrong key.
func TestFakeAnswers(t *testing.T) {
	t.Parallel()
	servers := make([]serverlist.Server, 300)
	for i := range servers {
		servers[i] = serverlist.Server{Addr: netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}), 27015),
			AppID: 730, SteamID: 90000000000000000 + uint64(i), Players: i % 2, Name: "cs2"}
	}
	s := NewServer(Profile{Cap: 250}, serverlist.NewFleet(servers), "k")
	defer s.Close()
	const path = "/IGameServersService/GetServerList/v1/"
	type answer struct {
		Response struct {
			Servers []map[string]any `json:"servers"`
		} `json:"response"`
	}
	read := func(q url.Values) (answer, string) {
		code, body := get(t, s, path, q)
		var a answer
		if code != 200 {
			t.Fatalf("%v: HTTP %d %s", q, code, body)
		}
		if err := json.Unmarshal([]byte(body), &a); err != nil {
			t.Fatalf("%v: %v in %.100s", q, err, body)
		}
		return a, body
	}
	if a, _ := read(url.Values{"key": {"k"}}); len(a.Response.Servers) != DefaultLimit {
		t.Errorf("no limit: %d servers", len(a.Response.Servers))
	}
	if a, _ := read(url.Values{"key": {"k"}, "limit": {"10000"}}); len(a.Response.Servers) != 250 {
		t.Errorf("past the cap: %d servers", len(a.Response.Servers))
	}
	if _, body := read(url.Values{"key": {"k"}, "filter": {`\appid\1`}}); body != `{"response":{}}` {
		t.Errorf("nothing matches: %s", body)
	}
	a, _ := read(url.Values{"key": {"k"}, "filter": {`\noplayers\1`}, "limit": {"1"}})
	first := a.Response.Servers[0]
	if _, ok := first["players"]; ok || first["steamid"] != "90000000000000000" || first["name"] != "cs2" {
		t.Errorf("an empty server: %v", first)
	}
	for _, key := range []string{"", "x"} {
		if code, body := get(t, s, path, url.Values{"key": {key}}); code != 403 || !strings.Contains(body, "key=") {
			t.Errorf("key %q: HTTP %d", key, code)
		}
	}
	if code, _ := get(t, s, "/ISteamUser/GetPlayerSummaries/v2/", nil); code != 404 {
		t.Errorf("another method: HTTP %d", code)
	}
	qs := s.Queries()
	if len(qs) != 7 || !strings.Contains(qs[0], "key=KEY") || slices.ContainsFunc(qs, func(q string) bool { return strings.Contains(q, "key=k&") }) {
		t.Errorf("queries %q", qs)
	}
}
