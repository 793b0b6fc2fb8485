package a2s

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/gsq-project/gsq/internal/testutil"
)

// The vectors in this file are the hex dumps of the Valve Developer
// Community wiki page "Server queries", byte for byte.

const (
	specInfoRequest = `FF FF FF FF 54 53 6F 75 72 63 65 20 45 6E 67 69
		6E 65 20 51 75 65 72 79 00`
	specInfoChallenge          = `FF FF FF FF 41 0A 08 5E EA`
	specInfoRequestChallenge   = `FF FF FF FF 54 53 6F 75 72 63 65 20 45 6E 67 69 6E 65 20 51 75 65 72 79 00 0A 08 5E EA`
	specPlayerChallengeRequest = `FF FF FF FF 55 FF FF FF FF`
	specChallengeReply         = `FF FF FF FF 41 4B A1 D5 22`
	specPlayerRequest          = `FF FF FF FF 55 4B A1 D5 22`
	specRulesChallengeRequest  = `FF FF FF FF 56 FF FF FF FF`
	specRulesRequest           = `FF FF FF FF 56 4B A1 D5 22`
	specPingRequest            = `FF FF FF FF 69`
	specPingReplyGoldSource    = `FF FF FF FF 6A 00`
	specPingReplySource        = `FF FF FF FF 6A 30 30 30 30 30 30 30 30 30 30 30
		30 30 30 00`
	specLegacyChallengeRequest = `FF FF FF FF 57`

	specInfoCSS = `FF FF FF FF 49 02 67 61 6D 65 32 78 73 2E 63 6F
		6D 20 43 6F 75 6E 74 65 72 2D 53 74 72 69 6B 65
		20 53 6F 75 72 63 65 20 23 31 00 64 65 5F 64 75
		73 74 00 63 73 74 72 69 6B 65 00 43 6F 75 6E 74
		65 72 2D 53 74 72 69 6B 65 3A 20 53 6F 75 72 63
		65 00 F0 00 05 10 04 64 6C 00 00 31 2E 30 2E 30
		2E 32 32 00`
	specInfoShip = `FF FF FF FF 49 07 53 68 69 70 20 53 65 72 76 65
		72 00 62 61 74 61 76 69 65 72 00 73 68 69 70 00
		54 68 65 20 53 68 69 70 00 60 09 01 05 00 6C 77
		00 00 01 03 03 31 2E 30 2E 30 2E 34 00`
	specInfoSiN = `FF FF FF FF 49 2F 53 65 6E 73 65 6D 61 6E 6E 20
		53 69 4E 20 44 4D 00 70 61 72 61 64 6F 78 00 53
		69 4E 20 31 00 53 69 4E 20 31 00 1D 05 00 10 00
		6C 77 00 00 31 2E 30 2E 30 2E 30 00`
	specInfoRDKF = `FF FF FF FF 49 FC 54 68 65 20 44 75 64 65 27 73
		20 64 6F 6A 6F 00 53 6F 63 63 65 72 00 52 44 4B
		46 53 6F 63 63 65 72 00 52 61 67 44 6F 6C 6C 4B
		75 6E 67 46 75 3A 20 53 6F 63 63 65 72 00 EA 03
		01 04 00 00 77 00 00 32 2E 33 2E 30 2E 30 00`
	specInfoGoldSource = `FF FF FF FF 6D 37 37 2E 31 31 31 2E 31 39 34 2E
		31 31 30 3A 32 37 30 31 35 00 46 52 20 2D 20 56
		65 72 79 47 61 6D 65 73 2E 6E 65 74 20 2D 20 44
		65 61 74 6D 61 74 63 68 20 2D 20 6F 6E 6C 79 20
		73 75 72 66 5F 73 6B 69 20 2D 20 6E 67 52 00 73
		75 72 66 5F 73 6B 69 00 63 73 74 72 69 6B 65 00
		43 6F 75 6E 74 65 72 2D 53 74 72 69 6B 65 00 0C
		12 2F 64 6C 00 01 77 77 77 2E 63 6F 75 6E 74 65
		72 2D 73 74 72 69 6B 65 2E 6E 65 74 00 00 00 01
		00 00 00 00 9E F7 0A 00 01 01 00`
	specPlayers = `FF FF FF FF 44 02 01 5B 44 5D 2D 2D 2D 2D 3E 54
		2E 4E 2E 57 3C 2D 2D 2D 2D 00 0E 00 00 00 B4 97
		00 44 02 4B 69 6C 6C 65 72 20 21 21 21 00 05 00
		00 00 69 24 D9 43`
	specPlayersShip = `FF FF FF FF 44 13 00 53 68 69 70 6D 61 74 65 31
		00 00 00 00 00 00 00 80 BF 01 53 68 69 70 6D 61
		74 65 32 00 00 00 00 00 00 00 80 BF 02 53 68 69
		70 6D 61 74 65 33 00 00 00 00 00 00 00 80 BF 03
		53 68 69 70 6D 61 74 65 34 00 00 00 00 00 00 00
		80 BF 04 53 68 69 70 6D 61 74 65 35 00 00 00 00
		00 00 00 80 BF 07 28 31 29 4C 61 6E 64 4C 75 62
		62 65 72 00 00 00 00 00 D3 8E 68 45 00 00 00 00
		C4 09 00 00 00 00 00 00 C4 09 00 00 00 00 00 00
		C4 09 00 00 00 00 00 00 C4 09 00 00 00 00 00 00
		C4 09 00 00 00 00 00 00 C4 09 00 00`
)

func TestSpecInfo(t *testing.T) {
	tests := []struct {
		name  string
		dump  string
		want  Info
		appID uint32
		st    string
		env   string
	}{
		{"counter-strike-source", specInfoCSS, Info{
			Format: 'I', Protocol: 2, Name: Text("game2xs.com Counter-Strike Source #1"), Map: Text("de_dust"),
			Folder: Text("cstrike"), Game: Text("Counter-Strike: Source"), ShortAppID: 240, Players: 5, MaxPlayers: 16,
			Bots: 4, ServerType: 'd', Environment: 'l', Version: Text("1.0.0.22"),
		}, 240, "dedicated", "linux"},
		{"the-ship", specInfoShip, Info{
			Format: 'I', Protocol: 7, Name: Text("Ship Server"), Map: Text("batavier"), Folder: Text("ship"),
			Game: Text("The Ship"), ShortAppID: 2400, Players: 1, MaxPlayers: 5, ServerType: 'l', Environment: 'w',
			Ship: &ShipInfo{Mode: 1, Witnesses: 3, Duration: 3}, Version: Text("1.0.0.4"),
		}, 2400, "non-dedicated", "windows"},
		{"sin-1", specInfoSiN, Info{
			Format: 'I', Protocol: 47, Name: Text("Sensemann SiN DM"), Map: Text("paradox"), Folder: Text("SiN 1"),
			Game: Text("SiN 1"), ShortAppID: 1309, MaxPlayers: 16, ServerType: 'l', Environment: 'w',
			Version: Text("1.0.0.0"),
		}, 1309, "non-dedicated", "windows"},
		{"rag-doll-kung-fu", specInfoRDKF, Info{
			Format: 'I', Protocol: 252, Name: Text("The Dude's dojo"), Map: Text("Soccer"), Folder: Text("RDKFSoccer"),
			Game: Text("RagDollKungFu: Soccer"), ShortAppID: 1002, Players: 1, MaxPlayers: 4, ServerType: 0,
			Environment: 'w', Version: Text("2.3.0.0"),
		}, 1002, "unknown", "windows"},
		{"goldsource-m", specInfoGoldSource, Info{
			Format: 'm', Address: Text("77.111.194.110:27015"), Name: Text("FR - VeryGames.net - Deatmatch - only surf_ski - ngR"),
			Map: Text("surf_ski"), Folder: Text("cstrike"), Game: Text("Counter-Strike"), Players: 12, MaxPlayers: 18,
			Protocol: 47, ServerType: 'd', Environment: 'l', IsMod: true,
			Mod: &ModInfo{Link: Text("www.counter-strike.net"), DownloadLink: Text(""), Version: 1, Size: 0x0AF79E00, DLL: 1},
			VAC: 1,
		}, 0, "dedicated", "linux"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := testutil.Unhex(t, tt.dump)
			got, err := ParseInfo(b)
			if err != nil {
				t.Fatalf("ParseInfo: %v", err)
			}
			if !infoEqual(got, &tt.want) {
				t.Errorf("ParseInfo =\n%+v\nwant\n%+v", *got, tt.want)
			}
			if got.AppID() != tt.appID {
				t.Errorf("AppID = %d, want %d", got.AppID(), tt.appID)
			}
			if s := got.ServerType.String(); s != tt.st {
				t.Errorf("ServerType = %q, want %q", s, tt.st)
			}
			if s := got.Environment.String(); s != tt.env {
				t.Errorf("Environment = %q, want %q", s, tt.env)
			}
			if p, m := got.PlayerCounts(); p != int(tt.want.Players) || m != int(tt.want.MaxPlayers) {
				t.Errorf("PlayerCounts = %d, %d", p, m)
			}
			if enc := mustAppend(t, got); !bytes.Equal(enc, b) {
				t.Errorf("AppendBinary =\n% X\nwant\n% X", enc, b)
			}
		})
	}
}

// infoEqual compares two Infos treating nil and empty Text alike.
func infoEqual(a, b *Info) bool {
	norm := func(in Info) Info {
		for _, p := range []*Text{&in.Address, &in.Name, &in.Map, &in.Folder, &in.Game, &in.Version, &in.SpectatorName, &in.Keywords} {
			if len(*p) == 0 {
				*p = nil
			}
		}
		if in.Mod != nil {
			m := *in.Mod
			if len(m.Link) == 0 {
				m.Link = nil
			}
			if len(m.DownloadLink) == 0 {
				m.DownloadLink = nil
			}
			in.Mod = &m
		}
		return in
	}
	return reflect.DeepEqual(norm(*a), norm(*b))
}

func f32(bits uint32) float32 { return math.Float32frombits(bits) }

func TestSpecPlayers(t *testing.T) {
	tests := []struct {
		name string
		dump string
		want Players
	}{
		{"players", specPlayers, Players{Count: 2, List: []Player{
			{Index: 1, Name: Text("[D]---->T.N.W<----"), Score: 14, Duration: f32(0x440097B4)},
			{Index: 2, Name: Text("Killer !!!"), Score: 5, Duration: f32(0x43D92469)},
		}}},
		{"the-ship", specPlayersShip, Players{Count: 19, Ship: true, List: []Player{
			{Index: 0, Name: Text("Shipmate1"), Duration: -1, Money: 2500},
			{Index: 1, Name: Text("Shipmate2"), Duration: -1, Money: 2500},
			{Index: 2, Name: Text("Shipmate3"), Duration: -1, Money: 2500},
			{Index: 3, Name: Text("Shipmate4"), Duration: -1, Money: 2500},
			{Index: 4, Name: Text("Shipmate5"), Duration: -1, Money: 2500},
			{Index: 7, Name: Text("(1)LandLubber"), Duration: f32(0x45688ED3), Money: 2500},
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := testutil.Unhex(t, tt.dump)
			got, err := ParsePlayers(b)
			if err != nil {
				t.Fatalf("ParsePlayers: %v", err)
			}
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("ParsePlayers =\n%+v\nwant\n%+v", *got, tt.want)
			}
			if enc := mustAppend(t, got); !bytes.Equal(enc, b) {
				t.Errorf("AppendBinary =\n% X\nwant\n% X", enc, b)
			}
		})
	}
	// The durations, decoded by hand from the dumps' IEEE 754 bits.
	if d := f32(0x440097B4); d < 514.37 || d > 514.38 {
		t.Errorf("duration 0x440097B4 = %v", d)
	}
}

func TestSpecRequests(t *testing.T) {
	tests := []struct {
		name string
		dump string
		want Request
	}{
		{"info", specInfoRequest, Request{Type: 'T'}},
		{"info-challenge", specInfoRequestChallenge, Request{Type: 'T', Challenge: 0xEA5E080A, HasChallenge: true}},
		{"player-ask-challenge", specPlayerChallengeRequest, Request{Type: 'U'}},
		{"player", specPlayerRequest, Request{Type: 'U', Challenge: 0x22D5A14B, HasChallenge: true}},
		{"rules-ask-challenge", specRulesChallengeRequest, Request{Type: 'V'}},
		{"rules", specRulesRequest, Request{Type: 'V', Challenge: 0x22D5A14B, HasChallenge: true}},
		{"ping", specPingRequest, Request{Type: 'i'}},
		{"legacy-challenge", specLegacyChallengeRequest, Request{Type: 'W'}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := testutil.Unhex(t, tt.dump)
			got, err := ParseRequest(b)
			if err != nil {
				t.Fatalf("ParseRequest: %v", err)
			}
			if got != tt.want {
				t.Errorf("ParseRequest = %+v, want %+v", got, tt.want)
			}
			if enc := mustAppend(t, tt.want); !bytes.Equal(enc, b) {
				t.Errorf("AppendBinary =\n% X\nwant\n% X", enc, b)
			}
		})
	}
}

func TestSpecChallenge(t *testing.T) {
	for _, tt := range []struct {
		dump string
		want uint32
	}{
		{specInfoChallenge, 0xEA5E080A},
		{specChallengeReply, 0x22D5A14B},
	} {
		b := testutil.Unhex(t, tt.dump)
		got, err := ParseChallenge(b)
		if err != nil || got != tt.want {
			t.Errorf("ParseChallenge(% X) = %#x, %v; want %#x", b, got, err, tt.want)
		}
		if enc := AppendChallenge(nil, got); !bytes.Equal(enc, b) {
			t.Errorf("AppendChallenge = % X, want % X", enc, b)
		}
		// The challenge is echoed byte for byte in the next request.
		req, _ := Request{Type: TypePlayerRequest, Challenge: got, HasChallenge: true}.AppendBinary(nil)
		if !bytes.Equal(req[5:], b[5:]) {
			t.Errorf("echoed challenge % X, want % X", req[5:], b[5:])
		}
	}
	if _, err := ParseChallenge(testutil.Unhex(t, specPingReplyGoldSource)); !errors.Is(err, ErrUnexpectedType) {
		t.Errorf("ParseChallenge(ping reply) err = %v, want ErrUnexpectedType", err)
	}
}

func TestSpecPing(t *testing.T) {
	for _, tt := range []struct {
		name, dump, want string
	}{
		{"goldsource", specPingReplyGoldSource, ""},
		{"source", specPingReplySource, SourcePingPayload},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := testutil.Unhex(t, tt.dump)
			got, err := ParsePing(b)
			if err != nil || got.Payload.String() != tt.want {
				t.Fatalf("ParsePing = %q, %v; want %q", got.Payload, err, tt.want)
			}
			if enc := mustAppend(t, got); !bytes.Equal(enc, b) {
				t.Errorf("AppendBinary = % X, want % X", enc, b)
			}
		})
	}
	// Some GoldSource servers send nothing after the type byte.
	if got, err := ParsePing([]byte{0xFF, 0xFF, 0xFF, 0xFF, 'j'}); err != nil || len(got.Payload) != 0 {
		t.Errorf("ParsePing(bare j) = %q, %v", got.Payload, err)
	}
}
