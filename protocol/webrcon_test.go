package protocol_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/console"
	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/protocol"
	"github.com/gsq-project/gsq/result"
	"github.com/gsq-project/gsq/webrcon"
	"github.com/gsq-project/gsq/webrcon/webrcontest"
)

// The Client asks a Rust server over WebRCON: serverinfo is the info
// section and the Summary, playerlist the players; a wrong password fails
// both sections as authentication, not as a protocol error.
func TestClientAsksWebRcon(t *testing.T) {
	t.Parallel()
	srv := webrcontest.NewServer(webrcontest.Rust, "secret", &webrcontest.SimHandler{
		Info:    webrcon.ServerInfo{Hostname: "Rust fake", Map: "Procedural Map", Players: 1, MaxPlayers: 50},
		Players: []webrcon.Player{{SteamID: "76561198000000001", DisplayName: "Alice", ConnectedSeconds: 90}},
	})
	defer srv.Close()
	var c protocol.Client
	defer c.Close()
	w := protocol.Waits{Timeout: 5 * time.Second}
	q := protocol.WebRcon.MustPrepare(protocol.Settings{Options: map[string]string{"password": "secret"}})
	r := c.Ask(testutil.Context(t), q, "rust", srv.Addr(), w, nil)
	d, _ := r.Detail.(*result.WebRcon)
	if r.Err != nil || d == nil || d.Info == nil || *r.Summary.Name != "Rust fake" || *r.Summary.MaxPlayers != 50 || r.Ping <= 0 {
		t.Fatalf("%+v, %v", r, r.Err)
	}
	if ps := d.PlayerList(); len(ps) != 1 || ps[0].Name != "Alice" || ps[0].Duration != 90*time.Second {
		t.Errorf("players %+v", ps)
	}
	if js := string(r.AppendJSON(nil)); !strings.Contains(js, `"players":[{"steam_id":"76561198000000001","name":"Alice","ping":0,"connected_seconds":90,"health":0}]`) {
		t.Errorf("JSON %s", js)
	}
	bad := protocol.WebRcon.MustPrepare(protocol.Settings{Options: map[string]string{"password": "wrong"}})
	r = c.Ask(testutil.Context(t), bad, "rust", srv.Addr(), w, nil)
	if r.Err == nil || r.Err.Kind != result.KindAuth || !errors.Is(r.Err, console.ErrAuthFailed) || len(r.Errors) != 2 {
		t.Errorf("wrong password: %+v, %+v", r.Err, r.Errors)
	}
}
