//go:build interop

// Interop tests between our rcon server and npm rcon-client 4.2.5
// (installed in .peers/ by .ci/install-peers). The Go peers, gorcon/rcon
// and go-mc, are tested in bench/interop, in the nested module bench/, so
// the root module does not require them. A missing peer is a failure.
// Where a peer has a known bug (reported in its issue tracker, or plain
// from its code), the test asserts that behaviour, so a change on either
// side shows up.
package rcon_test

import (
	"context"
	"encoding/json"
	"net"
	"os"
	execpkg "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/peertest"
	"github.com/gsq-project/gsq/rcon"
	"github.com/gsq-project/gsq/rcon/rcontest"
)

// rconClientScript drives npm rcon-client: argv is host, port, password,
// then commands; it prints {"auth": "ok" or error, "results": [...]}.
const rconClientScript = `
const { Rcon } = require("rcon-client");
const [host, port, password, ...cmds] = process.argv.slice(1);
(async () => {
  const out = { auth: "ok", results: [] };
  let rcon;
  try {
    rcon = await Rcon.connect({ host, port: Number(port), password, timeout: 5000 });
  } catch (e) {
    out.auth = String(e.message);
    console.log(JSON.stringify(out));
    process.exit(0);
  }
  for (const cmd of cmds) {
    try { out.results.push({ out: await rcon.send(cmd) }); }
    catch (e) { out.results.push({ err: String(e.message) }); }
  }
  console.log(JSON.stringify(out));
  process.exit(0);
})();
`

type npmResult struct {
	Auth    string `json:"auth"`
	Results []struct {
		Out string `json:"out"`
		Err string `json:"err"`
	} `json:"results"`
}

func runRconClient(t *testing.T, addr, password string, cmds ...string) npmResult {
	t.Helper()
	modules := filepath.Dir(peertest.Module(t, "rcon-client"))
	host, port, _ := net.SplitHostPort(addr)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := execpkg.CommandContext(ctx, "node", append([]string{"-e", rconClientScript, "--", host, port, password}, cmds...)...)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	var r npmResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("node output %q: %v", out, err)
	}
	return r
}

func TestInteropRconClientAgainstServer(t *testing.T) {
	addr := serve(t, &rcon.Server{Dialect: rcon.DialectMinecraft})
	r := runRconClient(t, addr, testPassword, "echo hello", "say Grüße 😀", "big 4000", "big 100000", "echo after")
	if r.Auth != "ok" || len(r.Results) != 5 {
		t.Fatalf("rcon-client: %+v", r)
	}
	for i, want := range []string{"hello\n", "Console: Grüße 😀\n", rcontest.BigOutput(4000)} {
		if r.Results[i].Out != want || r.Results[i].Err != "" {
			t.Errorf("command %d: %.40q (err %q)", i, r.Results[i].Out, r.Results[i].Err)
		}
	}
	// Known rcon-client bug (janispritzkau/rcon-client#14 and #23): the
	// first packet resolves a request and later fragments are dropped,
	// so 100 KB comes back as its first fragment only.
	big := rcontest.BigOutput(100_000)
	if got := r.Results[3].Out; len(got) >= len(big) || !strings.HasPrefix(big, got) || len(got) == 0 {
		t.Errorf("rcon-client on 100 KB: %d bytes; want only the first fragment", len(got))
	}
	if r.Results[4].Out != "after\n" {
		t.Errorf("command after 100 KB: %.40q", r.Results[4].Out)
	}

	if r := runRconClient(t, addr, "wrong"); r.Auth == "ok" {
		t.Error("rcon-client logged in with a wrong password on the Minecraft dialect")
	}
	// Known rcon-client bug (plain from its code): the first packet resolves
	// the login, so on the Source dialect a wrong password "succeeds" and
	// commands then get the empty unauthenticated answer.
	src := serve(t, &rcon.Server{})
	r = runRconClient(t, src, "wrong", "echo hi")
	if r.Auth != "ok" || len(r.Results) != 1 || r.Results[0].Out != "" {
		t.Errorf("rcon-client on Source with a wrong password: %+v; the known bug is a fake success", r)
	}
	r = runRconClient(t, src, testPassword, "echo hi")
	if r.Auth != "ok" || len(r.Results) != 1 || r.Results[0].Out != "hi\n" {
		t.Errorf("rcon-client on Source: %+v", r)
	}
}
