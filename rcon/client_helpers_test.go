package rcon_test

import (
	"context"
	"io"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gsq-project/gsq/console/consoletest"
	"github.com/gsq-project/gsq/rcon"
	"github.com/gsq-project/gsq/rcon/rcontest"
)

// The client's tests talk to package rcontest's fake servers. Most run in
// a testing/synctest bubble on console/consoletest's in-memory network,
// where every wait (a probe's, a login's, a keep-alive's, a server's
// stall) takes no real time and happens exactly when it should; the few
// that need real sockets (a peek at a closed socket, our own Server's
// TLS, an outside peer) use loopback.

// pw is the fake servers' password.
const pw = "pw"

// ran answers every command "ran <cmd>".
var ran = rcon.HandlerFunc(func(_ context.Context, w rcon.ResponseWriter, cmd string) {
	io.WriteString(w, "ran "+cmd)
})

// answer answers every command out, and an empty one (a Minecraft
// client's probe) nothing.
func answer(out string) rcon.Handler {
	return rcon.HandlerFunc(func(_ context.Context, w rcon.ResponseWriter, cmd string) {
		if cmd != "" {
			io.WriteString(w, out)
		}
	})
}

// bubble runs f in a synctest bubble with an in-memory network.
func bubble(t *testing.T, f func(t *testing.T, n *consoletest.Network)) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		var n consoletest.Network
		f(t, &n)
	})
}

// fake starts, on n, a fake server imitating p with password pw and
// handler h (nil: rcontest's SimHandler); set, if not nil, changes the
// server before it starts.
func fake(t *testing.T, n *consoletest.Network, p rcontest.Profile, h rcon.Handler, set func(s *rcontest.Server)) *rcontest.Server {
	t.Helper()
	s := &rcontest.Server{Profile: p, Password: pw, Handler: h, Listener: n.MustListen(t, "127.0.0.1:0")}
	if set != nil {
		set(s)
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// script starts, on n, a fake server imitating p whose connections run f.
func script(t *testing.T, n *consoletest.Network, p rcontest.Profile, h rcon.Handler, f func(c *rcontest.Conn)) *rcontest.Server {
	t.Helper()
	return fake(t, n, p, h, func(s *rcontest.Server) { s.Script = f })
}

// answerOneThen is a script whose first connection logs in, answers one
// command out (and its probe, if one comes) and then runs then; the later
// connections are served as the profile does.
func answerOneThen(out string, then func(c *rcontest.Conn)) func(c *rcontest.Conn) {
	return func(c *rcontest.Conn) {
		if c.Index() > 1 {
			c.Serve()
			return
		}
		if !c.Login() {
			return
		}
		p, _ := c.ReadPacket()
		c.Send(rcon.Packet{ID: p.ID, Body: []byte(out)})
		probe, _ := c.ReadPacket()
		c.Answer(probe)
		then(c)
	}
}

// tryDial logs in to s over n with password and opts (nil: zero
// Options).
func tryDial(t *testing.T, n *consoletest.Network, s *rcontest.Server, password string, opts *rcon.Options) (*rcon.Client, error) {
	t.Helper()
	var o rcon.Options
	if opts != nil {
		o = *opts
	}
	o.DialContext = n.DialContext
	c, err := rcon.Dial(bounded(t), s.Addr().String(), password, &o)
	if err == nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, err
}

// dialOn logs in to s over n with opts and fails the test if it cannot.
func dialOn(t *testing.T, n *consoletest.Network, s *rcontest.Server, opts *rcon.Options) *rcon.Client {
	t.Helper()
	c, err := tryDial(t, n, s, pw, opts)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	return c
}

// bounded is the context of a test's calls: 20 s, which in a bubble is
// time on its clock.
func bounded(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// mustExec runs cmd and fails the test unless it answers want.
func mustExec(t *testing.T, c *rcon.Client, cmd, want string) {
	t.Helper()
	got, err := c.Exec(bounded(t), cmd)
	if err != nil || got != want {
		t.Fatalf("Exec(%q) = %d bytes %.60q, %v; want %d bytes %.60q", cmd, len(got), got, err, len(want), want)
	}
}

// mirror is SRCDS's answer to a probe of id: the empty mirror and the
// extra packet.
func mirror(id int32) []rcon.Packet {
	return []rcon.Packet{{ID: id}, {ID: id, Body: []byte{0, 0, 0, 1, 0, 0, 0}}}
}

// vanilla is what a client gets of out from vanilla Minecraft, whose
// fragments turn a surrogate pair they cut into "??".
func vanilla(out string) string {
	var b []byte
	for _, f := range rcontest.VanillaFragments([]byte(out)) {
		b = append(b, f...)
	}
	return string(b)
}
