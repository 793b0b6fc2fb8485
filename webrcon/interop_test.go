//go:build interop

// Interop tests of our WebSocket framing against an implementation nobody
// here wrote, npm ws 8.23.0 (installed in .peers/ by .ci/install-peers):
// its client against our server, and our client against its server. A
// missing peer is a failure.
package webrcon_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/console"
	"github.com/gsq-project/gsq/internal/peertest"
	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/webrcon"
	"github.com/gsq-project/gsq/webrcon/webrcontest"
)

// wsClient connects with ws to argv[2] ("ws://..."), sends a WebRCON
// request for each further argument, pings once, and prints
// {"error", "replies", "pong"} after a quiet second.
const wsClient = `
const WebSocket = require(process.argv[1]);
const [url, ...cmds] = process.argv.slice(2);
const out = { error: "", replies: [], pong: false };
const ws = new WebSocket(url);
let quiet;
const done = () => { console.log(JSON.stringify(out)); process.exit(0); };
const later = () => { clearTimeout(quiet); quiet = setTimeout(done, 1000); };
ws.on("error", (e) => { out.error = String(e.message) + (e.code ? " " + e.code : ""); done(); });
ws.on("pong", () => { out.pong = true; });
ws.on("message", (data) => { out.replies.push(JSON.parse(String(data))); later(); });
ws.on("open", () => {
  ws.ping();
  cmds.forEach((c, i) => ws.send(JSON.stringify({ Identifier: 1001 + i, Message: c, Name: "WebRcon" })));
  later();
});
`

type wsResult struct {
	Error   string            `json:"error"`
	Replies []webrcon.Message `json:"replies"`
	Pong    bool              `json:"pong"`
}

func runWSClient(t *testing.T, url string, cmds ...string) wsResult {
	t.Helper()
	args := append([]string{"-e", wsClient, peertest.Module(t, "ws"), url}, cmds...)
	var r wsResult
	out := peertest.Run(t, "node", args...)
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("ws client printed %q: %v", out, err)
	}
	return r
}

// ws's client talks to our server: masked frames read, replies matched,
// and, as on Rust, no pong; a server that answers pings gets ws's pong
// check through.
func TestInteropWSClientToOurServer(t *testing.T) {
	t.Parallel()
	s, _ := start(t, webrcontest.Rust, "pa$$ word")
	r := runWSClient(t, "ws://"+s.Addr().String()+"/pa%24%24%20word", "serverinfo", "echo héllo")
	if r.Error != "" || len(r.Replies) != 2 || r.Replies[1].Identifier != 1002 || r.Replies[1].Message != "héllo" || r.Pong {
		t.Fatalf("ws client: %+v", r)
	}
	var si webrcon.ServerInfo
	if err := json.Unmarshal([]byte(r.Replies[0].Message), &si); err != nil || si.Hostname != "Facepunch Test" {
		t.Errorf("serverinfo through ws: %+v, %v", si, err)
	}
	polite := webrcontest.NewUnstartedServer(webrcontest.Rust, "pw", nil)
	polite.WS.IgnorePings = false
	polite.Start()
	defer polite.Close()
	if r := runWSClient(t, "ws://"+polite.Addr().String()+"/pw", "echo x"); !r.Pong {
		t.Errorf("a server that answers pings: ws saw no pong: %+v", r)
	}
}

// A wrong password: Node's HTTP parser meets the close frame where the
// status line should be and reports HPE_INVALID_CONSTANT, as it does with
// a real Rust server (liamcottle/rustplus.js#49). Our fake sends the same
// bytes Rust does; gsq's client reads them as authentication failed
// (TestWrongPasswordIsAuthFailed), which is what they mean.
func TestInteropWSClientWrongPassword(t *testing.T) {
	t.Parallel()
	s, _ := start(t, webrcontest.Rust, "secret")
	r := runWSClient(t, "ws://"+s.Addr().String()+"/wrong", "serverinfo")
	if !strings.Contains(r.Error, "HPE_INVALID_CONSTANT") && !strings.Contains(r.Error, "Parse Error") {
		t.Errorf("ws on a wrong password: %q, want Node's parse error", r.Error)
	}
}

// wsServer is a WebRCON server written with ws: it accepts the path
// "/secret" only (any other gets Rust's close frame), answers each request
// with its Identifier, broadcasts a chat message after the first, pings
// the client and reports its pong. It prints its port, then, at its end,
// {"pongs", "requests"}.
const wsServer = `
const WebSocket = require(process.argv[1]);
const http = require("http");
const server = http.createServer();
const wss = new WebSocket.WebSocketServer({ noServer: true, maxPayload: 1 << 20 });
const stats = { pongs: 0, requests: [] };
server.on("upgrade", (req, socket, head) => {
  if (req.url !== "/secret") { socket.end(Buffer.from([0x88, 0x02, 0x03, 0xe8])); return; }
  wss.handleUpgrade(req, socket, head, (ws) => {
    ws.on("pong", () => { stats.pongs++; });
    ws.ping();
    ws.on("message", (data, isBinary) => {
      const req = JSON.parse(String(data));
      stats.requests.push(req);
      const big = req.Message.startsWith("big ") ? "x".repeat(Number(req.Message.slice(4))) : "";
      ws.send(JSON.stringify({ Message: big || "ok: " + req.Message, Identifier: req.Identifier, Type: "Generic", Stacktrace: "" }));
      if (stats.requests.length === 1) {
        ws.send(JSON.stringify({ Message: JSON.stringify({ Channel: 1, Message: "gg", UserId: "7656", Username: "Ann", Color: "#fff", Time: 1 }), Identifier: 0, Type: "Chat" }));
      }
    });
  });
});
server.listen(0, "127.0.0.1", () => console.log(server.address().port));
process.stdin.on("end", () => { console.log(JSON.stringify(stats)); process.exit(0); });
process.stdin.resume();
`

// Our client against ws's server: ws checks that every client frame is
// masked and well formed (it closes with 1002 otherwise), our client reads
// its unmasked frames, answers its ping, and takes the chat as an event.
func TestInteropOurClientToWSServer(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("node", "-e", wsServer, peertest.Module(t, "ws"))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() {
		t.Fatalf("the ws server printed no port: %v", cmd.Wait())
	}
	addr := "127.0.0.1:" + strings.TrimSpace(lines.Text())

	if _, err := webrcon.Dial(testutil.Context(t), addr, "wrong", nil); !errors.Is(err, webrcon.ErrAuthFailed) {
		t.Errorf("wrong password against ws: %v", err)
	}
	c, err := webrcon.Dial(testutil.Context(t), addr, "secret", &webrcon.Options{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"serverinfo", "say héllo"} {
		if out, err := c.Exec(testutil.Context(t), m); err != nil || out != "ok: "+m {
			t.Errorf("Exec(%q) = %q, %v", m, out, err)
		}
	}
	if out, err := c.Exec(testutil.Context(t), "big 200000"); err != nil || len(out) != 200000 {
		t.Errorf("a 200 kB reply (64-bit length) from ws: %d bytes, %v", len(out), err)
	}
	select {
	case e := <-c.Events():
		if e.Kind != console.KindChat || e.Player != "Ann" || e.Channel != "team" {
			t.Errorf("event %+v", e)
		}
	case <-testutil.Context(t).Done():
		t.Fatal("no chat event")
	}
	c.Close()
	stdin.Close()
	var stats struct {
		Pongs    int               `json:"pongs"`
		Requests []webrcon.Request `json:"requests"`
	}
	if !lines.Scan() || json.Unmarshal(lines.Bytes(), &stats) != nil {
		t.Fatalf("the ws server's stats: %q", lines.Text())
	}
	if stats.Pongs < 1 || len(stats.Requests) != 3 || stats.Requests[1].Message != "say héllo" || stats.Requests[1].Name != "WebRcon" {
		t.Errorf("ws server saw %+v", stats)
	}
	cmd.Wait()
}
