package steamapi

import (
	"errors"
	"io"
	"net/netip"
	"strings"
	"testing"

	"github.com/gsq-project/gsq/serverlist"
)

// rustGamedig110 is the shape of the GetServerList answer quoted in
// rust-gamedig#110: a Rust server, and one behind Steam Datagram Relay.
const rustGamedig110 = `{"response":{"servers":[
{"addr":"203.0.113.7:28016","gameport":28015,"steamid":"90201742937453569","name":"[EU] Rust Monthly","appid":252490,
 "gamedir":"rust","version":"2579","product":"rust","region":3,"players":120,"max_players":200,"map":"Procedural Map",
 "secure":true,"dedicated":true,"os":"l","gametype":"monthly,vanilla,cp120,mp200"},
{"addr":"169.254.109.52:24712","gameport":24712,"steamid":"90201742937453570","appid":252490,"gamedir":"rust",
 "region":-1,"max_players":50,"dedicated":true,"os":"w"}
]}}`

func decodeAll(t *testing.T, body string) ([]serverlist.Server, listStats, error) {
	t.Helper()
	var out []serverlist.Server
	st, err := decodeServers(strings.NewReader(body), "GetServerList", nil, func(r *record) bool {
		if s, ok := r.server(); ok {
			out = append(out, s)
		}
		return true
	})
	return out, st, err
}

func TestDecode(t *testing.T) {
	t.Parallel()
	got, st, err := decodeAll(t, rustGamedig110)
	if err != nil || len(got) != 2 || st.records != 2 {
		t.Fatalf("%v, %d servers, %+v", err, len(got), st)
	}
	want := serverlist.Server{
		Addr: netip.MustParseAddrPort("203.0.113.7:28016"), GamePort: 28015, SteamID: 90201742937453569,
		Name: "[EU] Rust Monthly", AppID: 252490, GameDir: "rust", Version: "2579", Product: "rust",
		Region: serverlist.RegionEurope, Players: 120, MaxPlayers: 200, Map: "Procedural Map", Secure: true,
		Dedicated: true, OS: "l", GameType: "monthly,vanilla,cp120,mp200",
	}
	if got[0] != want {
		t.Errorf("first server\n%+v\nwant\n%+v", got[0], want)
	}
	relay := got[1]
	if !relay.Relay() || relay.Region != serverlist.RegionNone || relay.Players != 0 || relay.Name != "" || relay.Secure {
		t.Errorf("relay server, fields left out: %+v", relay)
	}
}

// The tolerant reading: no servers, numbers as strings and strings as
// numbers, a steamid as a number or beyond int64, members it does not
// know, records it cannot read (skipped and counted), nulls.
func TestDecodeTolerant(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		body    string
		servers int
		records int
		check   func(t *testing.T, s []serverlist.Server)
	}{
		{"empty response", `{"response":{}}`, 0, 0, nil},
		{"empty list", `{"response":{"servers":[]}}`, 0, 0, nil},
		{"other members", `{"x":[1,{"y":2}],"response":{"total":5,"servers":[{"addr":"1.2.3.4:5"}],"more":{"a":[]}},"z":null}`, 1, 1, nil},
		{"numbers as strings", `{"response":{"servers":[{"addr":"1.2.3.4:5","players":"7","max_players":"10","appid":"730","secure":"true","dedicated":1,"region":"255"}]}}`, 1, 1,
			func(t *testing.T, s []serverlist.Server) {
				if s[0].Players != 7 || s[0].MaxPlayers != 10 || s[0].AppID != 730 || !s[0].Secure || !s[0].Dedicated || s[0].Region != serverlist.RegionWorld {
					t.Errorf("%+v", s[0])
				}
			}},
		{"strings as numbers", `{"response":{"servers":[{"addr":"1.2.3.4:5","name":12,"version":1.5,"map":null,"gametype":true}]}}`, 1, 1,
			func(t *testing.T, s []serverlist.Server) {
				if s[0].Name != "12" || s[0].Version != "1.5" || s[0].Map != "" || s[0].GameType != "true" {
					t.Errorf("%+v", s[0])
				}
			}},
		{"steamid forms", `{"response":{"servers":[{"addr":"1.2.3.4:5","steamid":90000000000000001},{"addr":"1.2.3.4:6","steamid":"18446744073709551615"},{"addr":"1.2.3.4:7","steamid":"x"}]}}`, 3, 3,
			func(t *testing.T, s []serverlist.Server) {
				if s[0].SteamID != 90000000000000001 || s[1].SteamID != 1<<64-1 || s[2].SteamID != 0 {
					t.Errorf("steamids %d %d %d", s[0].SteamID, s[1].SteamID, s[2].SteamID)
				}
			}},
		{"bad records", `{"response":{"servers":[{"addr":"nowhere"},{},7,"x",[1],{"addr":"1.2.3.4:0"},{"addr":"0.0.0.0:27015"},{"addr":"[::ffff:1.2.3.4]:5","gameport":70000,"players":-3}]}}`, 1, 8,
			func(t *testing.T, s []serverlist.Server) {
				if s[0].Addr != netip.MustParseAddrPort("1.2.3.4:5") || s[0].GamePort != 0 || s[0].Players != 0 {
					t.Errorf("%+v", s[0])
				}
			}},
	} {
		got, st, err := decodeAll(t, tc.body)
		if err != nil || len(got) != tc.servers || st.records != tc.records {
			t.Errorf("%s: %v, %d servers of %d records; want %d of %d", tc.name, err, len(got), st.records, tc.servers, tc.records)
			continue
		}
		if tc.check != nil {
			tc.check(t, got)
		}
	}
}

// What is not the API's JSON is a *ParseError with an offset, matching
// ErrNotAPI; a body cut short is io.ErrUnexpectedEOF.
func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body string
		cause      error
	}{
		{"html", "<html><body>Steam is down</body></html>", nil},
		{"no response", `{"servers":[]}`, nil},
		{"array", `[]`, nil},
		{"cut short", rustGamedig110[:200], io.ErrUnexpectedEOF},
		{"servers not a list", `{"response":{"servers":{"addr":"1.2.3.4:5"}}}`, nil},
		{"empty", ``, io.ErrUnexpectedEOF},
	} {
		_, _, err := decodeAll(t, tc.body)
		var pe *ParseError
		if !errors.As(err, &pe) || !errors.Is(err, ErrNotAPI) || pe.Method != "GetServerList" || pe.Offset < 0 || pe.Offset > int64(len(tc.body)) {
			t.Errorf("%s: %v, want a *ParseError within the body", tc.name, err)
			continue
		}
		if tc.cause != nil && !errors.Is(err, tc.cause) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.cause)
		}
		if !strings.HasPrefix(err.Error(), "steamapi: parse GetServerList at offset ") {
			t.Errorf("%s: message %q", tc.name, err)
		}
	}
	// A stop ends the reading at once.
	n := 0
	st, err := decodeServers(strings.NewReader(rustGamedig110), "GetServerList", nil, func(*record) bool { n++; return false })
	if err != nil || n != 1 || !st.stopped {
		t.Errorf("stopped: %v, %d records", err, n)
	}
}
