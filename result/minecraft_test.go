package result_test

import (
	"encoding/json"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/minecraft/bedrock"
	"github.com/gsq-project/gsq/minecraft/mcquery"
	"github.com/gsq-project/gsq/minecraft/slp"
	"github.com/gsq-project/gsq/result"
)

func i32(v int32) *int32 { return &v }

var mcAddr = netip.MustParseAddrPort("127.0.0.1:25565")

// The neutral player list of a status is its sample when the sample
// lists everyone online; otherwise the list is unknown (nil), and a
// server that says players are on and lists none of them hides them.
func TestMinecraftPlayerList(t *testing.T) {
	t.Parallel()
	real := func(names ...string) []slp.Player {
		var out []slp.Player
		for _, n := range names {
			out = append(out, slp.Player{Name: n, ID: "4566e69f-c907-48ee-8d71-d7ba5aa00d20"})
		}
		return out
	}
	fake := slp.Player{Name: "§7Welcome!", ID: "00000000-0000-0000-0000-000000000000", Fake: true}
	for _, tc := range []struct {
		name    string
		players *slp.Players
		legacy  bool
		list    []string // nil: no list
		hidden  bool
	}{
		{"complete", &slp.Players{Online: i32(2), Max: i32(20), Sample: real("a", "b")}, false, []string{"a", "b"}, false},
		{"partial", &slp.Players{Online: i32(30), Max: i32(50), Sample: real("a", "b")}, false, nil, false},
		{"hidden", &slp.Players{Online: i32(3), Max: i32(20)}, false, nil, true},
		{"hover text", &slp.Players{Online: i32(5), Max: i32(20), Sample: []slp.Player{fake, fake}}, false, nil, true},
		{"hover text and a player", &slp.Players{Online: i32(1), Max: i32(20), Sample: append(real("a"), fake)}, false, []string{"a"}, false},
		{"empty", &slp.Players{Online: i32(0), Max: i32(20)}, false, []string{}, false},
		{"no count", &slp.Players{Sample: real("a")}, false, []string{"a"}, false},
		{"negative", &slp.Players{Online: i32(-1), Max: i32(-1)}, false, nil, false},
		{"legacy", nil, true, nil, false},
	} {
		r := result.New("mc", mcAddr, "minecraft")
		resp := &slp.Response{Status: &slp.Status{Players: tc.players}, RTT: time.Millisecond}
		if tc.legacy {
			resp = &slp.Response{Legacy: &slp.LegacyStatus{Version: "1.6.4", MOTD: "old", Online: 2, Max: 20}}
		}
		r.SetMinecraft(resp, nil)
		list := r.PlayerList()
		var names []string
		if list != nil {
			names = []string{}
		}
		for _, p := range list {
			names = append(names, p.Name)
		}
		if (names == nil) != (tc.list == nil) || strings.Join(names, ",") != strings.Join(tc.list, ",") || r.PlayersHidden() != tc.hidden {
			t.Errorf("%s: list %q (nil %v), hidden %v; want %q (nil %v), %v", tc.name, names, names == nil, r.PlayersHidden(), tc.list, tc.list == nil, tc.hidden)
		}
	}
}

// A server up but not answering status says so in the JSON head; an
// answer afterwards in the same result clears it.
func TestMinecraftNoStatus(t *testing.T) {
	t.Parallel()
	r := result.New("mc", mcAddr, "minecraft")
	r.SetMinecraft(nil, &slp.OpError{Pkg: "slp", Op: "status", Addr: mcAddr.String(), Err: slp.ErrNoStatus})
	js := string(r.AppendJSON(nil))
	if !strings.Contains(js, `"protocol":"minecraft","no_status":true,`) || r.Err == nil || r.Err.Kind != result.KindProtocol || !errors.Is(r.Err, slp.ErrNoStatus) {
		t.Errorf("%s", js)
	}
	r.SetMinecraft(&slp.Response{Status: &slp.Status{Description: slp.TextDescription("§ahi")}}, nil)
	if js := string(r.AppendJSON(nil)); strings.Contains(js, "no_status") || r.Err != nil || *r.Summary.Name != "hi" {
		t.Errorf("after an answer: %s", js)
	}
}

// The JSON of every Minecraft detail is valid with hostile content: text
// that is not UTF-8 gets its base64 twin, quotes and codes survive.
func TestMinecraftJSONHostile(t *testing.T) {
	t.Parallel()
	bad := "bad\xff\"<§k>"
	r := result.New("mc", mcAddr, "minecraft")
	r.SetMinecraft(&slp.Response{Status: &slp.Status{
		Version: &slp.Version{Name: bad}, Players: &slp.Players{Online: i32(1), Sample: []slp.Player{{Name: bad, ID: bad, Fake: true}}},
		Description: slp.TextDescription(bad), Favicon: &slp.Favicon{MIME: bad, Malformed: true},
		Mods: &slp.Mods{Kind: "forgeData", Err: errors.New(bad), Mods: []slp.Mod{{ID: bad}}},
	}, Trailer: []byte{0, 0xff}, Target: slp.Target{Host: "play.example.com", Port: 25565, SRV: true}}, nil)
	q := result.New("mc", mcAddr, "mcquery")
	fs := &mcquery.FullStat{Players: []mcquery.Text{mcquery.Text(bad)}}
	fs.Set("hostname", mcquery.Text("M\x00OTD\xe9"))
	q.SetMCQuery(&mcquery.Result{Full: fs}, []result.Section{result.SectionInfo, result.SectionPlayers})
	b := result.New("be", mcAddr, "bedrock")
	b.SetBedrock(&bedrock.Result{Status: &bedrock.Status{MOTD: bedrock.Text(bad), Extra: []bedrock.Text{bedrock.Text(bad)}}, Transport: bedrock.TransportRakNet})
	for _, r := range []*result.Result{r, q, b} {
		js := r.AppendJSON(nil)
		var v map[string]any
		if err := json.Unmarshal(js, &v); err != nil {
			t.Errorf("%s: %v\n%s", r.Protocol, err, js)
		}
	}
	if js := string(q.AppendJSON(nil)); !strings.Contains(js, `"motd_b64":"TQBPVETp"`) || *q.Summary.Name != "M\x00OTDé" || len(q.PlayerList()) != 1 {
		t.Errorf("mcquery: %s", js)
	}
}
