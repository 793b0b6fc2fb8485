//go:build interop

// Interop tests of our telnet console fake against programs nobody here
// wrote: Debian's telnet, and gamedig 5.3.3's sdtd type (installed in
// .peers/ by .ci/install-peers). A missing peer is a failure.
package sdtd_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/gsq-project/gsq/a2s/a2stest"
	"github.com/gsq-project/gsq/internal/peertest"
	"github.com/gsq-project/gsq/sdtd"
)

// Debian's telnet, driven as a person would: it sends no option
// negotiation to a port other than 23, so the console sees plain lines,
// as it does with a real client (the game does no IAC at all).
func TestInteropDebianTelnet(t *testing.T) {
	t.Parallel()
	s := start(t, nil, nil)
	d := peertest.Talk(t, "telnet", "127.0.0.1", strconv.Itoa(int(s.Addr().Port())))
	d.Expect(sdtd.PasswordPrompt)
	d.Send("secret")
	d.Expect("Press 'help'")
	d.Send("version")
	d.Expect("Game version: V 1.0")
	d.Send("exit")
	out := d.End()
	for _, want := range []string{sdtd.LogonSuccessful, "*** Connected with 7DTD server.", "INF Executing command 'version' by Telnet from 127.0.0.1:"} {
		if !strings.Contains(out, want) {
			t.Errorf("the transcript lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\xff") {
		t.Errorf("telnet negotiation bytes in the transcript: %q", out)
	}
}

// gamedigSdtd has gamedig query the sdtd type: A2S on argv[2], then the
// telnet console on argv[3] with the password argv[4] for player names.
const gamedigSdtd = `
const { GameDig } = await import(process.argv[1] + '/lib/index.js');
try {
  const state = await GameDig.query({type: 'sdtd', host: '127.0.0.1', port: Number(process.argv[2]), givenPortOnly: true,
    telnetPort: Number(process.argv[3]), telnetPassword: process.argv[4], maxRetries: 1, socketTimeout: 3000, attemptTimeout: 10000});
  console.log(JSON.stringify({players: state.players.map(p => p.name), raw: state.raw.telnetPlayersResponse || ''}));
} catch (e) {
  console.error('gamedig: ' + e.message);
  process.exit(1);
}
`

// gamedig's sdtd type logs in over telnet and reads listplayers. Its
// row pattern (a name ends at the first comma) cuts "Bo, the builder" to
// "Bo"; gsq's ParsePlayers ends a name at ", pos=(", the field 7DTD
// writes after it, and keeps the comma. Both are guesses at an
// unquoted field; gsq's loses nothing on the names 7DTD allows.
func TestInteropGamedigSdtd(t *testing.T) {
	t.Parallel()
	query := a2stest.NewServer(a2stest.Profile{})
	defer query.Close()
	// One write per answer: gamedig's telnet client takes an answer to
	// end at the first read that ends in "\r\n" (shellPrompt /\r\n$/), a
	// heuristic 7DTD's 64-byte writes can break (console-field-notes.md §4.3).
	s := start(t, func(s *sdtd.Server) { s.ChunkSize = -1 }, nil)
	out := peertest.Run(t, "node", "--input-type=module", "-e", gamedigSdtd, peertest.Module(t, "gamedig"),
		strconv.Itoa(int(query.Addr().Port())), strconv.Itoa(int(s.Addr().Port())), "secret")
	var r struct {
		Players []string `json:"players"`
		Raw     string   `json:"raw"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("gamedig printed %q: %v", out, err)
	}
	if strings.Join(r.Players, "|") != "Ann|Bo" {
		t.Errorf("gamedig's players %q, want Ann and Bo (its cut at the comma)", r.Players)
	}
	ours, err := sdtd.ParsePlayers(r.Raw)
	if err != nil || len(ours) != 2 || ours[1].Name != "Bo, the builder" {
		t.Errorf("gsq on the same answer: %+v, %v", ours, err)
	}
}
