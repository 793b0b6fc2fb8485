package battleye

import (
	"errors"
	"net/netip"
	"reflect"
	"testing"
)

// Rows as DayZ and Arma 3 print them, with the oddities bercon-cli's
// test data collects: a name holding "players in total", non-Latin and
// spaced names, an unverified GUID, a player in the lobby, a row without
// a port and one whose ping is not a number.
const playersDayZ = "Players on server:\n" +
	"[#] [IP Address]:[Port] [Ping] [GUID] [Name]\n" +
	"--------------------------------------------------\n" +
	"0   192.0.2.10:2304       47   0123456789abcdef0123456789abcdef(OK) Survivor\n" +
	"1   198.51.100.7:2304     120  fedcba9876543210fedcba9876543210(?) (3 players in total)\n" +
	"2   203.0.113.5           -    abcdefabcdefabcdefabcdefabcdefab(OK) Влад  Два (Lobby)\n" +
	"(3 players in total)\n"

const playersReforger = "Players on server: [Player#] ; [Player UID] ; [Player Name]\n" +
	"0 ; 4f2c9a1e-0000-4000-8000-000000000001 ; Ranger One\n"

const bansText = "GUID Bans:\n[#] [GUID] [Minutes left] [Reason]\n----------------------------------------\n" +
	"0   0123456789abcdef0123456789abcdef perm Cheating\n" +
	"1   fedcba9876543210fedcba9876543210 42 Spam in chat\n" +
	"\nIP Bans:\n[#] [IP Address] [Minutes left] [Reason]\n----------------------------------------------\n" +
	"2   198.51.100.9 perm VPN\n"

func TestParsePlayers(t *testing.T) {
	t.Parallel()
	got, err := ParsePlayers(playersDayZ)
	if err != nil {
		t.Fatal(err)
	}
	want := []Player{
		{Slot: 0, Addr: netip.MustParseAddrPort("192.0.2.10:2304"), Ping: 47, GUID: "0123456789abcdef0123456789abcdef", Verified: true, Name: "Survivor"},
		{Slot: 1, Addr: netip.MustParseAddrPort("198.51.100.7:2304"), Ping: 120, GUID: "fedcba9876543210fedcba9876543210", Name: "(3 players in total)"},
		{Slot: 2, Addr: netip.MustParseAddrPort("203.0.113.5:0"), Ping: -1, GUID: "abcdefabcdefabcdefabcdefabcdefab", Verified: true, Name: "Влад  Два", Lobby: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParsePlayers:\n got %+v\nwant %+v", got, want)
	}
	rf, err := ParsePlayers(playersReforger)
	if err != nil || len(rf) != 1 || rf[0].Name != "Ranger One" || rf[0].GUID != "4f2c9a1e-0000-4000-8000-000000000001" {
		t.Errorf("Reforger: %+v, %v", rf, err)
	}
	if _, err := ParsePlayers("7 garbage"); !errors.As(err, new(*ParseError)) {
		t.Errorf("unreadable row: %v", err)
	}
}

func TestParseBansAndAdmins(t *testing.T) {
	t.Parallel()
	got, err := ParseBans(bansText)
	if err != nil {
		t.Fatal(err)
	}
	want := []Ban{
		{Index: 0, GUID: "0123456789abcdef0123456789abcdef", MinutesLeft: -1, Reason: "Cheating"},
		{Index: 1, GUID: "fedcba9876543210fedcba9876543210", MinutesLeft: 42, Reason: "Spam in chat"},
		{Index: 2, IP: netip.MustParseAddr("198.51.100.9"), MinutesLeft: -1, Reason: "VPN"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseBans:\n got %+v\nwant %+v", got, want)
	}
	admins, err := ParseAdmins("Connected RCon admins:\n[#] [IP Address]:[Port]\n-----------------------------\n0   127.0.0.1:52413\n1   [::1]:6000\n")
	if err != nil || len(admins) != 2 || admins[1].Addr != netip.MustParseAddrPort("[::1]:6000") {
		t.Errorf("ParseAdmins = %+v, %v", admins, err)
	}
}
