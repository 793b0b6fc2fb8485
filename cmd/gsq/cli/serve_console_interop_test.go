//go:build interop

package cli

import (
	"encoding/json"
	"net"
	"net/url"
	"strings"
	"testing"

	"github.com/gsq-project/gsq/internal/peertest"
	"github.com/gsq-project/gsq/sdtd"
)

// Peers nobody here wrote against the consoles of gsq serve, as an admin
// would point them: Debian's telnet at --telnet, npm ws at --webrcon.

// consoleAddr is the address serve gives for scheme's console.
func consoleAddr(t *testing.T, described, scheme string) string {
	t.Helper()
	for _, m := range consoleURLs.FindAllStringSubmatch(described, -1) {
		if strings.HasPrefix(m[1], scheme+"://") {
			return m[2]
		}
	}
	t.Fatalf("no %s console in:\n%s", scheme, described)
	return ""
}

func TestInteropTelnetToServe(t *testing.T) {
	t.Parallel()
	described, _ := serveConsoles(t, "gsq:   telnet", "--rcon-password", testPassword, "--player", "Alice:10:5m", "--telnet", "127.0.0.1:0")
	host, port, _ := net.SplitHostPort(consoleAddr(t, described, "telnet"))
	d := peertest.Talk(t, "telnet", host, port)
	d.Expect(sdtd.PasswordPrompt)
	d.Send(testPassword)
	d.Expect(sdtd.LogonSuccessful)
	d.Send("listplayers")
	d.Expect("Total of 1 in the game")
	d.Send("exit")
	if out := d.End(); !strings.Contains(out, "1. id=171, Alice, ") {
		t.Errorf("telnet's transcript lacks Alice's row:\n%s", out)
	}
}

// wsPlayerlist connects ws to argv[2] and prints the reply to
// "playerlist", or the error.
const wsPlayerlist = `
const WebSocket = require(process.argv[1]);
const ws = new WebSocket(process.argv[2]);
const end = (o) => { console.log(JSON.stringify(o)); process.exit(0); };
ws.on("error", (e) => end({ error: String(e.message) + (e.code ? " " + e.code : "") }));
ws.on("open", () => ws.send(JSON.stringify({ Identifier: 1001, Message: "playerlist", Name: "WebRcon" })));
ws.on("message", (data) => { const m = JSON.parse(String(data)); if (m.Identifier === 1001) end({ reply: m.Message }); });
`

// ws's client, with the password percent-encoded in the path as Rust
// reads it, gets the player list of gsq serve's WebRCON; with a wrong
// password, Node's HTTP parser meets Rust's close frame where the status
// line should be (HPE_INVALID_CONSTANT, as with a real Rust server,
// liamcottle/rustplus.js#49). Rust is right to send it (it is what the
// game does), and gsq reads it as a wrong password (exit 4), which is
// what it means; ws's report is a parse error.
func TestInteropWSToServe(t *testing.T) {
	t.Parallel()
	const password = "pa$$ word"
	described, _ := serveConsoles(t, "gsq:   webrcon", "--rcon-password", password, "--player", "Alice:10:5m", "--webrcon", "127.0.0.1:0")
	addr := consoleAddr(t, described, "webrcon")
	run := func(pw string) (r struct{ Reply, Error string }) {
		t.Helper()
		u := url.URL{Scheme: "ws", Host: addr, Path: "/" + pw}
		out := peertest.Run(t, "node", "-e", wsPlayerlist, peertest.Module(t, "ws"), u.String())
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatalf("ws printed %q: %v", out, err)
		}
		return r
	}
	if r := run(password); r.Error != "" || !strings.Contains(r.Reply, `"DisplayName":"Alice"`) {
		t.Errorf("ws with the password: %+v", r)
	}
	if r := run("wrong"); !strings.Contains(r.Error, "HPE_INVALID_CONSTANT") && !strings.Contains(r.Error, "Parse Error") {
		t.Errorf("ws with a wrong password: %+v, want Node's parse error", r)
	}
	r := gsqCase{vars: map[string]string{"RCON_PASSWORD": "wrong"}}.run(t, "rcon", "webrcon://"+addr, "playerlist")
	if r.code != ExitAuth {
		t.Errorf("gsq rcon with a wrong password: exit %d, want %d: %s", r.code, ExitAuth, r.stderr)
	}
}
