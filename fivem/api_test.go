package fivem

import (
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
)

// infoFXServer is an /info.json of the shape FXServer sends (gamedig's
// fivem.js reads its "version"; the field notes, section 4).
const infoFXServer = `{"enhancedHostSupport":true,"icon":"iVBORw0KGgo=","requestSteamTicket":"off",
"resources":["mapmanager","chat"],"server":"FXServer-master SERVER v1.0.0.7290 linux",
"vars":{"gamename":"gta5","sv_maxClients":"48","sv_projectName":"^2My ^7server","onesync_enabled":true,"sv_enforceGameBuild":2802},
"version":1234567}`

func TestParseInfo(t *testing.T) {
	t.Parallel()
	i, err := ParseInfo([]byte(infoFXServer))
	if err != nil {
		t.Fatal(err)
	}
	if i.Server != "FXServer-master SERVER v1.0.0.7290 linux" || i.Version != 1234567 || !slices.Equal(i.Resources, []string{"mapmanager", "chat"}) ||
		i.MaxClients() != 48 || i.ProjectName() != "^2My ^7server" || i.Game() != "gta5" || !i.EnhancedHostSupport || i.Icon != "iVBORw0KGgo=" {
		t.Errorf("%+v", i)
	}
	// Convars that are not strings read as text.
	if i.Vars["onesync_enabled"] != "true" || i.Vars["sv_enforceGameBuild"] != "2802" {
		t.Errorf("vars %v", i.Vars)
	}
	// Fields left out, numbers as strings.
	i, err = ParseInfo([]byte(`{"version":"7"}`))
	if err != nil || i.Version != 7 || i.MaxClients() != 0 || i.Game() != "gta5" || i.Vars != nil {
		t.Errorf("sparse: %+v, %v", i, err)
	}
}

func TestParsePlayersAndDynamic(t *testing.T) {
	t.Parallel()
	p, err := ParsePlayers([]byte(`[{"endpoint":"127.0.0.1","id":1,"identifiers":["license:abc","steam:110000100000001"],"name":"Ann","ping":42},{"id":"2","name":"Bob","ping":"17"}]`))
	if err != nil || len(p) != 2 || p[0].Name != "Ann" || p[0].Ping != 42 || len(p[0].Identifiers) != 2 || p[1].ID != 2 || p[1].Ping != 17 {
		t.Errorf("players %+v, %v", p, err)
	}
	if p, err := ParsePlayers([]byte(`[]`)); err != nil || p == nil || len(p) != 0 {
		t.Errorf("nobody on: %#v, %v", p, err)
	}
	d, err := ParseDynamic([]byte(`{"clients":3,"gametype":"Freeroam","hostname":"x","iv":"1","mapname":"fivem-map-skater","sv_maxclients":"48"}`))
	if err != nil || *d != (Dynamic{Hostname: "x", Clients: 3, MaxClients: 48, GameType: "Freeroam", MapName: "fivem-map-skater"}) {
		t.Errorf("dynamic %+v, %v", d, err)
	}
}

// A body that is not the endpoint's JSON is a *ParseError with an offset,
// matching ErrNotFiveM.
func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		parse func([]byte) error
		body  string
		cause error
	}{
		{"info: an array", func(b []byte) error { _, err := ParseInfo(b); return err }, `["a"]`, nil},
		{"info: html", func(b []byte) error { _, err := ParseInfo(b); return err }, `<html>`, nil},
		{"info: cut short", func(b []byte) error { _, err := ParseInfo(b); return err }, infoFXServer[:100], io.ErrUnexpectedEOF},
		{"info: two values", func(b []byte) error { _, err := ParseInfo(b); return err }, `{} {}`, nil},
		{"info: resources not a list", func(b []byte) error { _, err := ParseInfo(b); return err }, `{"resources":"chat"}`, nil},
		{"players: an object", func(b []byte) error { _, err := ParsePlayers(b); return err }, `{"players":[]}`, nil},
		{"dynamic: empty", func(b []byte) error { _, err := ParseDynamic(b); return err }, ``, io.ErrUnexpectedEOF},
	} {
		err := tc.parse([]byte(tc.body))
		var pe *ParseError
		if !errors.As(err, &pe) || !errors.Is(err, ErrNotFiveM) || pe.Offset < 0 || pe.Offset > int64(len(tc.body)) {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if tc.cause != nil && !errors.Is(err, tc.cause) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.cause)
		}
		if !strings.HasPrefix(err.Error(), "fivem: parse /") {
			t.Errorf("%s: message %q", tc.name, err)
		}
	}
}
