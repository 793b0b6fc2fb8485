package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/a2s/a2stest"
	"github.com/gsq-project/gsq/minecraft/mctest"
)

func TestQueryGame(t *testing.T) {
	t.Parallel()
	f := startScanFleet(t, 1)
	addr := f.Addr(0).String()

	// Valheim is A2S: the address's port is asked as written.
	code, stdout, stderr := runGSQ(t, nil, nil, nil, "query", "--game", "valheim", "--json", addr)
	got := decodeOne(t, stdout)
	if code != ExitOK || got["protocol"] != "a2s" || got["address"] != addr {
		t.Errorf("exit %d, %v, %s", code, got, stderr)
	}

	// Onset: A2S, then OGP. An OGP-only server answers the second, and gsq
	// says which answered.
	srv := ogpServer(t, "v0.91")
	code, stdout, stderr = runGSQ(t, nil, nil, nil, "query", "--game", "onset", "--json", "--deadline", "500ms", "--timeout", "200ms", srv.Addr().String())
	got = decodeOne(t, stdout)
	if code != ExitOK || got["protocol"] != "ogp" || !strings.Contains(stderr, "ogp answered at "+srv.Addr().String()+" (a2s at "+srv.Addr().String()+" did not)") {
		t.Errorf("onset: exit %d, protocol %v, stderr %s", code, got["protocol"], stderr)
	}
	// gsq scan --game onset: the fleet server answers A2S; the OGP-only
	// one is asked OGP once the list is done.
	code, stdout, stderr = runGSQ(t, nil, strings.NewReader(addr+"\n"+srv.Addr().String()+"\n"), nil,
		"scan", "--game", "onset", "--deadline", "500ms", "--timeout", "200ms")
	if code != ExitOK || strings.Count(stdout, "\n") != 2 || !strings.Contains(stdout, `"address":"`+addr+`","protocol":"a2s"`) ||
		!strings.Contains(stdout, `"address":"`+srv.Addr().String()+`","protocol":"ogp"`) || !strings.Contains(stderr, "2 answered") {
		t.Errorf("scan --game onset: exit %d\n%s%s", code, stdout, stderr)
	}
	// The table of the protocol that answered.
	code, stdout, _ = runGSQ(t, nil, nil, nil, "query", "--game", "onset", "--deadline", "500ms", "--timeout", "200ms", srv.Addr().String())
	if code != ExitOK || !strings.Contains(stdout, "ogp v0.91") {
		t.Errorf("onset table: exit %d\n%s", code, stdout)
	}
}

func TestGameFlagErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"query", "--game", "valhem", "127.0.0.1:1"}, "did you mean valheim?"},
		{[]string{"query", "--game", "asa", "127.0.0.1:1"}, "--game asa: gsq cannot query it: ARK: Survival Ascended has no A2S"},
		{[]string{"query", "--game", "squad", "127.0.0.1:1"}, "Epic Online Services"},
		{[]string{"query", "--game", "rust", "--protocol", "ogp", "127.0.0.1:1"}, "not both"},
		{[]string{"scan", "--game", "palworld", "127.0.0.1:1"}, "gsq rcon"},
		{[]string{"query", "--game", "a2s", "127.0.0.1"}, "unknown game"},
	} {
		code, stdout, stderr := runGSQ(t, nil, nil, nil, c.args...)
		if code != ExitUsage || !strings.Contains(stderr, c.want) || stdout != "" {
			t.Errorf("%q: exit %d, want 2 and %q in:\n%s%s", c.args, code, c.want, stderr, stdout)
		}
	}
}

func TestGamePortRules(t *testing.T) {
	t.Parallel()
	gc, err := chooseGame("valheim")
	if err != nil {
		t.Fatal(err)
	}
	// No port: the game port plus one. A port: as written.
	for in, want := range map[string]string{"203.0.113.1": "203.0.113.1:2457", "203.0.113.1:2460": "203.0.113.1:2460", "Example.org": "example.org:2457"} {
		hp, attempts, err := gc.attempts(in)
		if err != nil || hp.String() != want || len(attempts) != 1 {
			t.Errorf("attempts(%q) = %v, %d attempts, %v; want %s", in, hp, len(attempts), err, want)
		}
	}
	// The game port written: the hint says where the query port is.
	_, attempts, _ := gc.attempts("203.0.113.1:2456")
	if h := gc.portHint("203.0.113.1", attempts[0]); !strings.Contains(h, "try 203.0.113.1:2457") || !strings.Contains(h, "game port + 1") {
		t.Errorf("hint %q", h)
	}
	if _, attempts, _ := gc.attempts("203.0.113.1:2457"); gc.portHint("203.0.113.1", attempts[0]) != "" {
		t.Error("a hint for the right port")
	}
	// V Rising: two A2S endpoints, +1 and +15; a port written is asked once.
	vr, _ := chooseGame("vrising")
	if _, a, _ := vr.attempts("203.0.113.1"); len(a) != 2 || a[0].port != 27016 || a[1].port != 27030 {
		t.Errorf("vrising attempts %+v", a)
	}
	if _, a, _ := vr.attempts("203.0.113.1:9876"); len(a) != 1 {
		t.Errorf("vrising with a port: %d attempts", len(a))
	}
	// A game with no usual port needs one written.
	for _, g := range []string{"gta5f"} {
		gc, err := chooseGame(g)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := gc.attempts("203.0.113.1"); err != nil && !strings.Contains(err.Error(), "HOST:PORT") {
			t.Errorf("%s without a port: %v", g, err)
		}
	}
}

// gsq query --game asks the game's protocols at once, each on a socket
// of its own, within one --deadline, and prints the first in the
// catalogue's order that answered as soon as it and those before it are
// done: Onset's A2S and OGP of one server that speaks both on one port
// each get their own reply (A2S printed, OGP said to have answered too,
// or not waited for); of a server that speaks A2S alone, A2S is printed
// without waiting for OGP's silence (the time logged, not asserted).
func TestQueryGameAtOnce(t *testing.T) {
	t.Parallel()
	// others is the hint's account of the attempt not printed: what it
	// got, or that the answer came first.
	others := func(stderr, proto, addr, got string) bool {
		return strings.Contains(stderr, "("+proto+" at "+addr+" "+got) ||
			strings.Contains(stderr, "("+proto+" at "+addr+" was not waited for)")
	}
	both := startScanFleet(t, 1).Addr(0).String()
	code, stdout, stderr := runGSQ(t, nil, nil, nil, "query", "--game", "onset", "--json", "--deadline", "2s", both)
	got := decodeOne(t, stdout)
	if code != ExitOK || got["protocol"] != "a2s" || got["error"] != nil || strings.Count(stdout, "\n") != 1 ||
		!strings.Contains(stderr, "a2s answered at "+both) || !others(stderr, "ogp", both, "answered too)") {
		t.Errorf("a2s and ogp on one port: exit %d, %v\n%s", code, got, stderr)
	}

	a2sOnly := a2stest.NewServer(a2stest.Profile{})
	t.Cleanup(a2sOnly.Close)
	addr := a2sOnly.Addr().String()
	start := time.Now()
	code, stdout, stderr = runGSQ(t, nil, nil, nil, "query", "--game", "onset", "--json", "--deadline", "1s", "--timeout", "200ms", addr)
	t.Logf("a2s answered, ogp silent: %v for a --deadline of 1s", time.Since(start))
	got = decodeOne(t, stdout)
	if code != ExitOK || got["protocol"] != "a2s" || got["error"] != nil ||
		!strings.Contains(stderr, "a2s answered at "+addr+" (ogp at "+addr+" was not waited for)") {
		t.Errorf("ogp silent: exit %d, %v\n%s", code, got, stderr)
	}

	// Minecraft: Server List Ping over TCP and Query over UDP at once; a
	// proxy answers the first and has no Query port (which the network
	// says: unreachable reads as no answer).
	proxy := mctest.Start(t, "velocity").Addr().String()
	code, stdout, stderr = runGSQ(t, nil, nil, nil, "query", "--game", "minecraft", "--json", "--deadline", "2s", proxy)
	got = decodeOne(t, stdout)
	if code != ExitOK || got["protocol"] != "minecraft" || got["error"] != nil ||
		!strings.Contains(stderr, "minecraft answered at "+proxy) || !others(stderr, "mcquery", proxy, "did not)") {
		t.Errorf("minecraft: exit %d, %v\n%s", code, got, stderr)
	}

	// A server that answers everything with a broken OGP header answers
	// neither protocol: the first in the catalogue's order is printed,
	// and the other's failure said when it came first.
	broken := newFakeA2S(t, func(byte) []byte { return []byte("\xff\xff\xff\xffOGP\x00\x01") })
	addr = broken.addr()
	code, stdout, stderr = runGSQ(t, nil, nil, nil, "query", "--game", "onset", "--json", "--deadline", "500ms", "--timeout", "200ms", addr)
	got = decodeOne(t, stdout)
	if code != ExitFailure || got["protocol"] != "a2s" || !strings.Contains(stderr, "a2s answered at "+addr) || !others(stderr, "ogp", addr, "failed: ogp: ") {
		t.Errorf("broken: exit %d, %v\n%s", code, got, stderr)
	}
}
