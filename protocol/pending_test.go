package protocol_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/fivem"
	"github.com/gsq-project/gsq/fivem/fivemtest"
	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/protocol"
	"github.com/gsq-project/gsq/result"
	"github.com/gsq-project/gsq/satisfactory"
	"github.com/gsq-project/gsq/satisfactory/satisfactorytest"
)

// The Client asks a Satisfactory server through its adapter, on the
// shared socket: the reply is the info section, the Summary its name and
// build; a silent one fails the section with a timeout.
func TestClientAsksSatisfactory(t *testing.T) {
	t.Parallel()
	var c protocol.Client
	defer c.Close()
	q := protocol.Satisfactory.MustPrepare(protocol.Settings{})
	for _, name := range []string{"playing", "silent"} {
		p, _ := satisfactorytest.LookupProfile(name)
		srv := satisfactorytest.NewServer(p)
		r := c.Ask(testutil.Context(t), q, "sf", srv.Addr(), protocol.Waits{Timeout: 100 * time.Millisecond, Retries: -1}, nil)
		srv.Close()
		d, _ := r.Detail.(*result.Satisfactory)
		switch name {
		case "playing":
			if r.Err != nil || d == nil || d.State == nil || *r.Summary.Name != "gsq Satisfactory server" || *r.Summary.Version != "416835" || r.Ping <= 0 {
				t.Errorf("playing: %+v, %v", r, r.Err)
			}
			if js := string(r.AppendJSON(nil)); !strings.Contains(js, `"info":{"state":"playing","state_code":3,"netcl":416835`) {
				t.Errorf("JSON %s", js)
			}
		case "silent":
			if r.Err == nil || r.Err.Kind != result.KindTimeout || !errors.Is(r.Err, satisfactory.ErrTimeout) || d == nil || d.State != nil {
				t.Errorf("silent: %+v, %v", r, r.Err)
			}
		}
	}
}

// The Client asks a FiveM server through its adapter: each endpoint its
// section, a disabled players.json failing alone.
func TestClientAsksFiveM(t *testing.T) {
	t.Parallel()
	var c protocol.Client
	defer c.Close()
	q := protocol.FiveM.MustPrepare(protocol.Settings{})
	p, _ := fivemtest.LookupProfile("players-disabled")
	srv := fivemtest.NewServer(p)
	defer srv.Close()
	var steps int
	r := c.Ask(testutil.Context(t), q, "fx", srv.Addr(), protocol.Waits{}, func([]result.Section, *result.Result) { steps++ })
	d, _ := r.Detail.(*result.FiveM)
	if r.Err != nil || d == nil || d.Info == nil || d.Dynamic == nil || d.Players != nil || steps != 1 {
		t.Fatalf("%+v, %v (%d steps)", r, r.Err, steps)
	}
	if e := r.SectionErr(result.SectionPlayers); e == nil || !errors.Is(e, fivem.ErrNotAvailable) {
		t.Errorf("players: %v", e)
	}
	if *r.Summary.Name != fivemtest.Hostname || *r.Summary.Players != 3 || *r.Summary.MaxPlayers != 48 || r.PlayerList() != nil {
		t.Errorf("summary %+v", r.Summary)
	}
	only := protocol.FiveM.MustPrepare(protocol.Settings{Sections: []result.Section{result.SectionPlayers}})
	fx, _ := fivemtest.LookupProfile("fxserver")
	srv2 := fivemtest.NewServer(fx)
	defer srv2.Close()
	r = c.Ask(testutil.Context(t), only, "fx", srv2.Addr(), protocol.Waits{}, nil)
	d, _ = r.Detail.(*result.FiveM)
	if r.Err != nil || d.Info != nil || d.Dynamic != nil || len(r.PlayerList()) != 3 || *r.Summary.Players != 3 {
		t.Errorf("players alone: %+v, %v", r, r.Err)
	}
}
