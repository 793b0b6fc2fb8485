package palworld

import (
	"encoding/json"
	"testing"
)

// FuzzDecode: whatever a server sends as players or metrics decodes or
// fails without a panic, and an ID read from a number or a string keeps
// its text.
func FuzzDecode(f *testing.F) {
	f.Add(`{"players":[{"name":"Ann","accountName":"a","playerId":"1A2B","userId":"steam_1","ip":"203.0.113.5","ping":31.5,"location_x":-1.5,"location_y":2,"level":12,"building_count":4}]}`)
	f.Add(`{"players":[{"name":"Bo","playerId":-17,"userId":null}]}`)
	f.Add(`{"serverfps":59,"currentplayernum":2,"serverframetime":16.9,"maxplayernum":32,"uptime":3600}`)
	f.Fuzz(func(t *testing.T, body string) {
		var p players
		if json.Unmarshal([]byte(body), &p) == nil {
			for _, pl := range p.Players {
				var again ID
				b, _ := json.Marshal(string(pl.PlayerID))
				if json.Unmarshal(b, &again) != nil || again != pl.PlayerID {
					t.Fatalf("ID %q does not round-trip", pl.PlayerID)
				}
			}
		}
		var m Metrics
		json.Unmarshal([]byte(body), &m)
		var s Settings
		json.Unmarshal([]byte(body), &s)
	})
}

func TestIDReadsStringsAndNumbers(t *testing.T) {
	t.Parallel()
	var p Player
	if err := json.Unmarshal([]byte(`{"playerId":-17,"userId":"steam_1"}`), &p); err != nil || p.PlayerID != "-17" || p.UserID != "steam_1" {
		t.Errorf("%+v, %v", p, err)
	}
	if err := json.Unmarshal([]byte(`{"playerId":{"x":1}}`), &p); err == nil {
		t.Error("an object read as an ID")
	}
}
