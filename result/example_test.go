package result_test

import (
	"fmt"
	"net/netip"
	"os"
	"time"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/result"
)

// A Result is built from the answers as they come, then read or encoded.
// Here a server answered A2S_INFO and then fell silent.
func Example() {
	addr := netip.MustParseAddrPort("127.0.0.1:27015")
	r := result.New("localhost:27015", addr, "a2s")

	info := &a2s.Info{Name: a2s.Text("My server"), Map: a2s.Text("de_dust2"), Folder: a2s.Text("cstrike"),
		Game: a2s.Text("Counter-Strike: Source"), Players: 5, MaxPlayers: 24, ServerType: 'd',
		Environment: 'l', Version: a2s.Text("1.0.0.22"), EDF: a2s.EDFPort, Port: 27015}
	r.SetA2SInfo(&a2s.InfoResult{Info: info, RTT: 410 * time.Microsecond}, nil)
	r.SetA2SPlayers(nil, fmt.Errorf("a2s: players %v: %w", addr, a2s.ErrTimeout))

	fmt.Println(*r.Summary.Name, *r.Summary.Players, "of", *r.Summary.MaxPlayers)
	fmt.Println("players:", r.SectionErr(result.SectionPlayers).Kind)
	fmt.Println("server failed:", r.Err != nil)
	os.Stdout.Write(r.AppendJSON(nil))
	// Output:
	// My server 5 of 24
	// players: timeout
	// server failed: false
	// {"target":"localhost:27015","address":"127.0.0.1:27015","protocol":"a2s","ping_ms":0.41,"summary":{"name":"My server","map":"de_dust2","game":"Counter-Strike: Source","players":5,"max_players":24,"bots":0,"password":false,"version":"1.0.0.22","connect":"127.0.0.1:27015"},"info":{"format":"source","protocol":0,"name":"My server","map":"de_dust2","folder":"cstrike","game":"Counter-Strike: Source","app_id":0,"players":5,"max_players":24,"bots":0,"server_type":"dedicated","environment":"linux","visibility":"public","vac":false,"version":"1.0.0.22","port":27015},"errors":{"players":{"kind":"timeout","message":"a2s: players 127.0.0.1:27015: a2s: timeout"}},"error":null}
}
