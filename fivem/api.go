package fivem

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/gsq-project/gsq/internal/flexjson"
)

// The endpoints.
const (
	PathInfo    = "/info.json"
	PathPlayers = "/players.json"
	PathDynamic = "/dynamic.json"
)

// Info is /info.json: what the server runs.
type Info struct {
	// Server is the build string ("FXServer-master SERVER v1.0.0.7290
	// linux").
	Server string
	// Version is the server's version number.
	Version int64
	// Resources are the resources it runs.
	Resources []string
	// Vars are its public convars, as text: sv_projectName,
	// sv_projectDesc, sv_maxClients, tags, locale, gamename...
	Vars map[string]string
	// Icon is the server's icon, base64 as sent (a 96×96 PNG), empty
	// when it has none.
	Icon string
	// EnhancedHostSupport and RequestSteamTicket are as sent.
	EnhancedHostSupport bool
	RequestSteamTicket  string
}

// MaxClients is the sv_maxClients convar, 0 when absent or not a number.
func (i *Info) MaxClients() int {
	n, _ := strconv.Atoi(strings.TrimSpace(i.Vars["sv_maxClients"]))
	return max(n, 0)
}

// ProjectName is the sv_projectName convar: the name the server list
// shows (with ^ colour codes, as sent).
func (i *Info) ProjectName() string { return i.Vars["sv_projectName"] }

// Game is the gamename convar ("gta5", "rdr3"), "gta5" when absent.
func (i *Info) Game() string {
	if g := i.Vars["gamename"]; g != "" {
		return g
	}
	return "gta5"
}

// Player is an entry of /players.json.
type Player struct {
	ID   int64
	Name string
	Ping int64
	// Endpoint is the player's address, as the server shows it (servers
	// often hide it).
	Endpoint string
	// Identifiers are the player's ids (license:, steam:, discord:...),
	// empty when sv_exposePlayerIdentifiersInHttpEndpoint is off.
	Identifiers []string
}

// Dynamic is /dynamic.json: what changes while the server runs.
type Dynamic struct {
	Hostname   string // with ^ colour codes, as sent
	Clients    int
	MaxClients int // sv_maxclients
	GameType   string
	MapName    string
}

type infoJSON struct {
	Server              flexjson.String            `json:"server"`
	Version             flexjson.Int               `json:"version"`
	Resources           []flexjson.String          `json:"resources"`
	Vars                map[string]flexjson.String `json:"vars"`
	Icon                flexjson.String            `json:"icon"`
	EnhancedHostSupport flexjson.Bool              `json:"enhancedHostSupport"`
	RequestSteamTicket  flexjson.String            `json:"requestSteamTicket"`
}

type playerJSON struct {
	ID          flexjson.Int      `json:"id"`
	Name        flexjson.String   `json:"name"`
	Ping        flexjson.Int      `json:"ping"`
	Endpoint    flexjson.String   `json:"endpoint"`
	Identifiers []flexjson.String `json:"identifiers"`
}

type dynamicJSON struct {
	Hostname   flexjson.String `json:"hostname"`
	Clients    flexjson.Int    `json:"clients"`
	MaxClients flexjson.Int    `json:"sv_maxclients"`
	GameType   flexjson.String `json:"gametype"`
	MapName    flexjson.String `json:"mapname"`
}

// ParseInfo reads an /info.json body. A body that is not a JSON object,
// or whose fields have the wrong shape (resources not a list), is a
// *ParseError.
func ParseInfo(b []byte) (*Info, error) {
	var v infoJSON
	if err := decode(b, PathInfo, &v); err != nil {
		return nil, err
	}
	i := &Info{Server: string(v.Server), Version: int64(v.Version), Icon: string(v.Icon),
		EnhancedHostSupport: bool(v.EnhancedHostSupport), RequestSteamTicket: string(v.RequestSteamTicket)}
	for _, r := range v.Resources {
		i.Resources = append(i.Resources, string(r))
	}
	if v.Vars != nil {
		i.Vars = make(map[string]string, len(v.Vars))
		for k, val := range v.Vars {
			i.Vars[k] = string(val)
		}
	}
	return i, nil
}

// ParsePlayers reads a /players.json body: a JSON array of players.
func ParsePlayers(b []byte) ([]Player, error) {
	var v []playerJSON
	if err := decode(b, PathPlayers, &v); err != nil {
		return nil, err
	}
	out := make([]Player, 0, len(v))
	for _, p := range v {
		pl := Player{ID: int64(p.ID), Name: string(p.Name), Ping: int64(p.Ping), Endpoint: string(p.Endpoint)}
		for _, id := range p.Identifiers {
			pl.Identifiers = append(pl.Identifiers, string(id))
		}
		out = append(out, pl)
	}
	return out, nil
}

// ParseDynamic reads a /dynamic.json body.
func ParseDynamic(b []byte) (*Dynamic, error) {
	var v dynamicJSON
	if err := decode(b, PathDynamic, &v); err != nil {
		return nil, err
	}
	return &Dynamic{Hostname: string(v.Hostname), Clients: count(v.Clients), MaxClients: count(v.MaxClients),
		GameType: string(v.GameType), MapName: string(v.MapName)}, nil
}

func count(v flexjson.Int) int { return int(min(max(v, 0), math.MaxInt32)) }

// decode unmarshals one JSON value of b into v, which must be the whole
// body, as a *ParseError when it does not read.
func decode(b []byte, path string, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	err := dec.Decode(v)
	if err == nil {
		if _, more := dec.Token(); more != io.EOF {
			err = errors.New("data after the JSON value")
		}
	}
	if err == nil {
		return nil
	}
	off := dec.InputOffset()
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	case err == io.EOF:
		err = io.ErrUnexpectedEOF
	}
	return &ParseError{Path: path, Offset: off, Err: err}
}
