package palworld

import (
	"encoding/json"
	"strconv"
)

// Info is the answer of GET /v1/api/info.
type Info struct {
	Version     string `json:"version"`
	ServerName  string `json:"servername"`
	Description string `json:"description"`
	WorldGUID   string `json:"worldguid,omitempty"`
}

// Player is one entry of GET /v1/api/players.
type Player struct {
	Name        string `json:"name"`
	AccountName string `json:"accountName"`
	// PlayerID is empty while a player is still logging in, and may be
	// negative on some servers (pal_api's notes); it reads a JSON string
	// or number.
	PlayerID      ID      `json:"playerId"`
	UserID        ID      `json:"userId"`
	IP            string  `json:"ip"`
	Ping          float64 `json:"ping"`
	LocationX     float64 `json:"location_x"`
	LocationY     float64 `json:"location_y"`
	Level         int     `json:"level"`
	BuildingCount int     `json:"building_count"`
}

// Metrics is the answer of GET /v1/api/metrics.
type Metrics struct {
	ServerFPS        float64 `json:"serverfps"`
	CurrentPlayerNum int     `json:"currentplayernum"`
	ServerFrameTime  float64 `json:"serverframetime"`
	MaxPlayerNum     int     `json:"maxplayernum"`
	Uptime           int64   `json:"uptime"` // seconds
	Days             int     `json:"days,omitempty"`
}

// Settings is the answer of GET /v1/api/settings: PalWorldSettings.ini's
// options, by name, as the server gives them.
type Settings map[string]any

// ID is an identifier the server may send as a JSON string or number.
type ID string

// UnmarshalJSON reads a string, a number or null.
func (id *ID) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*id = ""
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*id = ID(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	if _, err := strconv.ParseFloat(string(n), 64); err != nil {
		return err
	}
	*id = ID(n)
	return nil
}

// players is the body of GET /v1/api/players.
type players struct {
	Players []Player `json:"players"`
}

// Request bodies of the admin actions.
type (
	announceBody struct {
		Message string `json:"message"`
	}
	userBody struct {
		UserID  string `json:"userid"`
		Message string `json:"message,omitempty"`
	}
	shutdownBody struct {
		WaitTime int    `json:"waittime"`
		Message  string `json:"message,omitempty"`
	}
)
