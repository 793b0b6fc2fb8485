package result

import (
	"encoding/json"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/fivem"
	"github.com/gsq-project/gsq/satisfactory"
)

// A Satisfactory reply becomes the info section and a Summary; a failed
// poll the section's error; a name that is not UTF-8 keeps its bytes in
// a base64 twin.
func TestSetSatisfactory(t *testing.T) {
	t.Parallel()
	r := New("sf", netip.MustParseAddrPort("127.0.0.1:7777"), "satisfactory")
	r.SetSatisfactory(&satisfactory.Result{RTT: time.Millisecond, State: &satisfactory.ServerState{
		State: satisfactory.StateLoading, NetCL: 7, Flags: 1, SubStates: []satisfactory.SubState{{ID: 1, Version: 2}}, Name: satisfactory.Text("M\xfcller"),
	}})
	if r.Err != nil || *r.Summary.Name != "Müller" || *r.Summary.Version != "7" || r.Ping != time.Millisecond || r.PlayerList() != nil {
		t.Fatalf("%+v", r)
	}
	var v map[string]any
	if err := json.Unmarshal(r.AppendJSON(nil), &v); err != nil {
		t.Fatal(err)
	}
	info, _ := v["info"].(map[string]any)
	if info["state"] != "loading" || info["state_code"] != 2.0 || info["netcl"] != 7.0 || info["name_b64"] != "TfxsbGVy" || info["sub_states"] == nil {
		t.Errorf("info %v", info)
	}
	r.SetSatisfactory(&satisfactory.Result{Err: satisfactory.ErrTimeout})
	if r.Err == nil || r.Err.Kind != KindTimeout || r.SectionErr(SectionInfo) == nil || r.Summary.Name != nil || r.Detail.Answered() {
		t.Errorf("failed: %+v", r)
	}
	r.SetSatisfactory(&satisfactory.Result{})
	if r.Err == nil {
		t.Error("no state and no error recorded as an answer")
	}
}

// FiveM's endpoints become their sections; the Summary comes from
// dynamic.json, or info.json, or the player list; a disabled players.json
// fails its section alone; the JSON leaves out identifiers and addresses.
func TestSetFiveM(t *testing.T) {
	t.Parallel()
	all := []Section{SectionInfo, SectionDynamic, SectionPlayers}
	info := &fivem.Info{Server: "FXServer", Version: 5, Vars: map[string]string{"sv_maxClients": "32", "sv_projectName": "proj", "b": "2", "a": "1"}}
	players := []fivem.Player{{ID: 1, Name: "Ann", Ping: 9, Endpoint: "203.0.113.9", Identifiers: []string{"license:x"}}}
	r := New("fx", netip.MustParseAddrPort("127.0.0.1:30120"), "fivem")
	r.SetFiveM(&fivem.Result{Info: info, Dynamic: &fivem.Dynamic{Hostname: "host", Clients: 1, MaxClients: 48, MapName: "m", GameType: "g"},
		Players: players, RTT: time.Millisecond}, all)
	if r.Err != nil || *r.Summary.Name != "host" || *r.Summary.Players != 1 || *r.Summary.MaxPlayers != 48 || *r.Summary.Map != "m" ||
		*r.Summary.Game != "g" || *r.Summary.Version != "5" || len(r.PlayerList()) != 1 || r.Ping != time.Millisecond {
		t.Fatalf("%+v", r.Summary)
	}
	js := string(r.AppendJSON(nil))
	for _, want := range []string{`"info":{"server":"FXServer","version":5,"game":"gta5","resources":[],"vars":{"a":"1","b":"2","sv_maxClients":"32","sv_projectName":"proj"}}`,
		`"dynamic":{"hostname":"host","clients":1,"max_clients":48,"game_type":"g","map_name":"m"}`, `"players":[{"id":1,"name":"Ann","ping":9}]`} {
		if !strings.Contains(js, want) {
			t.Errorf("JSON %s\nlacks %s", js, want)
		}
	}
	if strings.Contains(js, "203.0.113.9") || strings.Contains(js, "license:") {
		t.Errorf("JSON %s shows a player's address or identifiers", js)
	}
	disabled := &fivem.StatusError{Code: 404, Path: fivem.PathPlayers}
	r.SetFiveM(&fivem.Result{Info: info, PlayersErr: disabled, DynamicErr: errors.New("x")}, all)
	if r.Err != nil || r.SectionErr(SectionPlayers) == nil || r.SectionErr(SectionDynamic) == nil || *r.Summary.Name != "proj" ||
		*r.Summary.MaxPlayers != 32 || r.Summary.Players != nil || r.PlayerList() != nil {
		t.Errorf("info alone: %+v, %+v", r, r.Summary)
	}
	r.SetFiveM(&fivem.Result{Players: []fivem.Player{}}, []Section{SectionPlayers})
	if r.Err != nil || r.PlayerList() == nil || *r.Summary.Players != 0 {
		t.Errorf("nobody on: %+v", r)
	}
}
