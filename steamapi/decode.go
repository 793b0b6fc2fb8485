package steamapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/netip"
	"strings"

	"github.com/gsq-project/gsq/internal/flexjson"
	"github.com/gsq-project/gsq/serverlist"
)

// record is one server of a GetServerList or GetServersAtAddress answer,
// read leniently: every field may be missing, and a number may come as a
// string (steamid always does) or a string as a number.
type record struct {
	Addr       flexjson.String `json:"addr"`
	GamePort   flexjson.Int    `json:"gameport"`
	SpecPort   flexjson.Int    `json:"specport"`
	SteamID    flexjson.Int    `json:"steamid"`
	Name       flexjson.String `json:"name"`
	AppID      flexjson.Int    `json:"appid"`
	GameDir    flexjson.String `json:"gamedir"`
	Version    flexjson.String `json:"version"`
	Product    flexjson.String `json:"product"`
	Region     flexjson.Int    `json:"region"`
	Players    flexjson.Int    `json:"players"`
	MaxPlayers flexjson.Int    `json:"max_players"`
	Bots       flexjson.Int    `json:"bots"`
	Map        flexjson.String `json:"map"`
	Secure     flexjson.Bool   `json:"secure"`
	Dedicated  flexjson.Bool   `json:"dedicated"`
	OS         flexjson.String `json:"os"`
	GameType   flexjson.String `json:"gametype"`
	// GetServersAtAddress's own fields.
	Lan      flexjson.Bool   `json:"lan"`
	GMSIndex flexjson.Int    `json:"gmsindex"`
	Reject   flexjson.String `json:"reject"`
}

// server describes r as serverlist does; ok is false when r has no
// readable address, or one no query could reach (port 0, 0.0.0.0).
func (r *record) server() (s serverlist.Server, ok bool) {
	addr, err := netip.ParseAddrPort(strings.TrimSpace(string(r.Addr)))
	if err != nil || addr.Port() == 0 || addr.Addr().IsUnspecified() {
		return s, false
	}
	addr = netip.AddrPortFrom(addr.Addr().Unmap(), addr.Port())
	s = serverlist.Server{
		Addr: addr, GamePort: port(r.GamePort), SpecPort: port(r.SpecPort), SteamID: uint64(r.SteamID),
		Name: string(r.Name), AppID: uint32(min(max(r.AppID, 0), math.MaxUint32)), GameDir: string(r.GameDir),
		Version: string(r.Version), Product: string(r.Product), Region: serverlist.Region(max(min(r.Region, 0xFF), -1)),
		Players: count(r.Players), MaxPlayers: count(r.MaxPlayers), Bots: count(r.Bots), Map: string(r.Map),
		Secure: bool(r.Secure), Dedicated: bool(r.Dedicated), OS: string(r.OS), GameType: string(r.GameType),
	}
	return s, true
}

func port(v flexjson.Int) uint16 {
	if v < 0 || v > math.MaxUint16 {
		return 0
	}
	return uint16(v)
}

func count(v flexjson.Int) int { return int(min(max(v, 0), math.MaxInt32)) }

// listStats counts what one answer held.
type listStats struct {
	records   int // every element of "servers"
	malformed int // those without a readable address
	stopped   bool
}

// decodeServers reads the body of a GetServerList or GetServersAtAddress
// answer, {"response":{..., "servers":[...]}}, calling each with every
// record as it is read, and head with each other member of "response"
// (GetServersAtAddress's success and message), and returns what it saw.
// each returns false to stop reading. A body that is not the API's JSON
// is a *ParseError naming method.
func decodeServers(r io.Reader, method string, head func(key string, v json.RawMessage), each func(*record) bool) (listStats, error) {
	var st listStats
	dec := json.NewDecoder(r)
	dec.UseNumber()
	fail := func(err error) (listStats, error) {
		if errors.Is(err, ErrResponseTooLarge) {
			return st, err
		}
		var se *json.SyntaxError
		off := dec.InputOffset()
		if errors.As(err, &se) {
			off = se.Offset
		}
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return st, &ParseError{Method: method, Offset: off, Err: err}
	}
	if err := expectDelim(dec, '{'); err != nil {
		return fail(err)
	}
	sawResponse := false
	for dec.More() {
		key, err := objectKey(dec)
		if err != nil {
			return fail(err)
		}
		if key != "response" {
			if err := skip(dec); err != nil {
				return fail(err)
			}
			continue
		}
		sawResponse = true
		if err := expectDelim(dec, '{'); err != nil {
			return fail(err)
		}
		for dec.More() {
			key, err := objectKey(dec)
			if err != nil {
				return fail(err)
			}
			if key != "servers" {
				var v json.RawMessage
				if err := dec.Decode(&v); err != nil {
					return fail(err)
				}
				if head != nil {
					head(key, v)
				}
				continue
			}
			if err := expectDelim(dec, '['); err != nil {
				return fail(err)
			}
			for dec.More() {
				var rec record
				if err := dec.Decode(&rec); err != nil {
					var te *json.UnmarshalTypeError
					if !errors.As(err, &te) {
						return fail(err)
					}
					st.records++
					st.malformed++ // an object that is no record: skipped
					continue
				}
				st.records++
				if !each(&rec) {
					st.stopped = true
					return st, nil
				}
			}
			if _, err := dec.Token(); err != nil { // ]
				return fail(err)
			}
		}
		if _, err := dec.Token(); err != nil { // }
			return fail(err)
		}
	}
	if _, err := dec.Token(); err != nil { // }
		return fail(err)
	}
	if !sawResponse {
		return fail(errors.New(`no "response" object`))
	}
	return st, nil
}

// expectDelim reads the delimiter d.
func expectDelim(dec *json.Decoder, d json.Delim) error {
	t, err := dec.Token()
	if err != nil {
		return err
	}
	if got, ok := t.(json.Delim); !ok || got != d {
		return fmt.Errorf("found %v where %q was due", t, rune(d))
	}
	return nil
}

// objectKey reads a key of an object.
func objectKey(dec *json.Decoder) (string, error) {
	t, err := dec.Token()
	if err != nil {
		return "", err
	}
	k, ok := t.(string)
	if !ok {
		return "", fmt.Errorf("found %v where a key was due", t)
	}
	return k, nil
}

// skip reads one value, whatever it is, without keeping it.
func skip(dec *json.Decoder) error {
	depth := 0
	for {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}
