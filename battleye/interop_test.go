//go:build interop

// Interop tests between our BattlEye server and Debian's python3-rcon 2.3.9
// (conqp/rcon's BattlEye client, installed by .ci/install-peers). It is a
// known-buggy client, which makes it a useful bad client: each test
// asserts what it does, cites the bug, and says from the protocol who is
// right. A missing peer is a failure.
package battleye_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/battleye"
	"github.com/gsq-project/gsq/battleye/betest"
	"github.com/gsq-project/gsq/internal/peertest"
)

// pythonRcon drives rcon.battleye.Client: argv is host, port, password,
// then commands; "@listen" reads server messages until the socket is
// quiet for a second. It prints {"auth", "results", "messages"}. -P keeps
// the working directory (which may hold gsq's own rcon folder) off the
// module path.
const pythonRcon = `
import json, socket, sys
from rcon.battleye import Client
host, port, pw, cmds = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
out = {"auth": "ok", "results": [], "messages": []}
c = Client(host, port, timeout=2, message_handler=lambda m: out["messages"].append(m.payload.decode("latin-1")))
c.connect()
try:
    c.login(pw)
except Exception as e:
    out["auth"] = type(e).__name__
    print(json.dumps(out)); sys.exit(0)
for cmd in cmds:
    if cmd == "@listen":
        c.timeout = 1
        try:
            while True:
                r = c._receive(4096)
                out["messages"].append(r.payload.decode("latin-1"))
        except (socket.timeout, TimeoutError):
            pass
        continue
    try:
        out["results"].append({"out": c.run(cmd)})
    except Exception as e:
        out["results"].append({"err": type(e).__name__ + ": " + str(e)})
print(json.dumps(out))
`

type pyResult struct {
	Auth    string `json:"auth"`
	Results []struct {
		Out string `json:"out"`
		Err string `json:"err"`
	} `json:"results"`
	Messages []string `json:"messages"`
}

func runPython(t *testing.T, s *betest.Server, password string, cmds ...string) pyResult {
	t.Helper()
	args := append([]string{"-P", "-c", pythonRcon, "127.0.0.1", s.Addr().String()[strings.LastIndex(s.Addr().String(), ":")+1:], password}, cmds...)
	var r pyResult
	out := peertest.Run(t, "/usr/bin/python3", args...) // Debian's, which python3-rcon is installed for
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("python3-rcon printed %q: %v", out, err)
	}
	return r
}

func TestInteropPythonRconLogin(t *testing.T) {
	t.Parallel()
	s := startFake(t, betest.DayZ, betest.Faults{})
	if r := runPython(t, s, "wrong"); r.Auth != "WrongPassword" {
		t.Errorf("wrong password: %+v", r)
	}
	r := runPython(t, s, "secret", "version")
	if r.Auth != "ok" || len(r.Results) != 1 || r.Results[0].Out != "2.240" {
		t.Errorf("version: %+v", r)
	}
}

// python3-rcon sends every command with sequence number 0
// (CommandRequest.from_string; conqp/rcon#42: "seq not rotated", which
// froze it on Reforger). BERConProtocol.txt has the client count 0 to 255;
// a repeated number is how a client asks for an answer again, so our
// server sends the first command's answer again and does not run the
// second. The client is wrong; gsq's client counts (TestSequenceWrapsPast256).
func TestInteropPythonRconRepeatsSequenceZero(t *testing.T) {
	t.Parallel()
	s := startFake(t, betest.DayZ, betest.Faults{})
	r := runPython(t, s, "secret", "echo first", "echo second")
	if len(r.Results) != 2 || r.Results[0].Out != "first" || r.Results[1].Out != "first" {
		t.Fatalf("results %+v: want the first answer twice", r.Results)
	}
	if seqs := s.Seqs(); len(seqs) != 1 || seqs[0] != 2 {
		t.Errorf("sequence numbers used %v, want only 0, twice", seqs)
	}
}

// python3-rcon never acknowledges server messages (its receive loop hands
// them to the handler and sends nothing back; conqp/rcon#41, stuck in
// repeated messages after a say). BERConProtocol.txt: the server sends a
// message again until acknowledged, 5 times over 10 s, then forgets the
// client. Our server does exactly that; the client is wrong.
func TestInteropPythonRconNeverAcknowledges(t *testing.T) {
	t.Parallel()
	s := startFake(t, betest.DayZ, betest.Faults{}, func(s *battleye.Server) { s.ResendInterval = 100 * time.Millisecond })
	r := runPython(t, s, "secret", "say -1 hello", "@listen")
	n := 0
	for _, m := range r.Messages {
		if m == "RCon admin #0: (Global) hello" {
			n++
		}
	}
	if n != 1+battleye.DefaultResends || s.Acks() != 0 {
		t.Errorf("the message came %d times (want 1 and %d re-sends), %d acks: %q", n, battleye.DefaultResends, s.Acks(), r.Messages)
	}
	if c := s.BE.Clients(); c != 0 {
		t.Errorf("%d clients: the deaf client was not forgotten", c)
	}
}

// python3-rcon reads one datagram per command (Client.receive), so of a
// multi-part answer it returns the first part that arrives, header bytes
// and all. BERConProtocol.txt has the client join the parts by index; gsq
// does (TestMultiPartFaults).
func TestInteropPythonRconReadsOnePart(t *testing.T) {
	t.Parallel()
	s := startFake(t, betest.DayZ, betest.Faults{})
	r := runPython(t, s, "secret", "big 250")
	if len(r.Results) != 1 || r.Results[0].Err != "" {
		t.Fatalf("results %+v", r.Results)
	}
	out := r.Results[0].Out
	if !strings.HasPrefix(out, "\x00\x03") || len(out) != 3+100 {
		t.Errorf("python3-rcon's answer to a 3-part reply: %q, want part 1 of 3 with its header", out)
	}
}
