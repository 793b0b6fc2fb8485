package sim

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/gsq-project/gsq/ogp"
)

// serveOGP serves c's OGP answer in dialect d on a loopback socket until
// the test ends, and returns its address.
func serveOGP(t *testing.T, c Content, d ogp.Dialect) netip.AddrPort {
	t.Helper()
	pc, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:0")))
	if err != nil {
		t.Fatal(err)
	}
	addr := pc.LocalAddr().(*net.UDPAddr).AddrPort()
	s := &ogp.Server{Dialect: d, RateLimit: -1, Handler: ogp.HandlerFunc(func(netip.AddrPort, *ogp.Query) (*ogp.Answer, error) {
		return c.OGP(addr.Port()), nil
	})}
	done := make(chan error, 1)
	go func() { done <- s.Serve(pc) }()
	t.Cleanup(func() {
		s.Shutdown(context.Background())
		<-done
	})
	return addr
}

// A simulated server answers every OGP section and field asked, in both
// dialects: empty where the content has nothing (no teams, no add-ons,
// no limits, no next map), so that "none" reads differently from "not
// supported"; a content that has them fills them.
func TestOGPAnswersEverySection(t *testing.T) {
	t.Parallel()
	left := uint32(600)
	full := Default()
	full.NextMap, full.GameType, full.GameMode, full.ReservedSlots = "cs_office", "defuse", "competitive", 2
	full.Teams = []Team{{Name: "CT", Score: 3, Players: 2}, {Name: "T", Score: 5, Players: 1}}
	full.AddOns = []AddOn{{ShortName: "sm", LongName: "SourceMod", Version: "1.12", Active: true}}
	full.Limits = []Limit{{Type: "time", Limit: 1800, Left: &left}, {Type: "rounds", Limit: 30}}
	if err := full.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, d := range []ogp.Dialect{ogp.V091, ogp.V1} {
		c := &ogp.Client{Dialect: d}
		defer c.Close()
		res, err := c.Query(ctx, serveOGP(t, Default(), d), nil)
		if err != nil {
			t.Fatalf("%v: %v", d, err)
		}
		a := res.Answer
		if a.Request != ogp.RequestAll {
			t.Errorf("%v: sections %v, want every one", d, a.Request)
		}
		want := ogp.InfoAll
		if a.Info.Fields != want || a.Teams.Count != 0 || a.AddOns.Count != 0 || len(a.Limits) != 0 || a.Info.ReservedSlots != 0 {
			t.Errorf("%v: info fields %v (want %v), teams %d, add-ons %d, limits %d", d, a.Info.Fields, want, a.Teams.Count, a.AddOns.Count, len(a.Limits))
		}
		if a.Players.Fields != ogp.PlayerAll || a.Players.Count != 3 || a.Players.Players[0].Team != -1 {
			t.Errorf("%v: players %+v", d, a.Players)
		}

		res, err = c.Query(ctx, serveOGP(t, full, d), nil)
		if err != nil {
			t.Fatalf("%v: %v", d, err)
		}
		a = res.Answer
		switch {
		case string(a.Info.NextMap.Name) != "cs_office" || string(a.Info.GameType) != "defuse" || string(a.Info.GameMode) != "competitive" || a.Info.ReservedSlots != 2:
			t.Errorf("%v: info %+v", d, a.Info)
		case len(a.Teams.Teams) != 2 || string(a.Teams.Teams[1].Name) != "T" || a.Teams.Teams[1].Score != 5 || a.Teams.Teams[0].PlayerCount != 2:
			t.Errorf("%v: teams %+v", d, a.Teams)
		case len(a.AddOns.AddOns) != 1 || string(a.AddOns.AddOns[0].LongName) != "SourceMod" || a.AddOns.AddOns[0].Flags != ogp.AddOnActive:
			t.Errorf("%v: add-ons %+v", d, a.AddOns)
		case len(a.Limits) != 2 || a.Limits[0] != (ogp.Limit{Type: ogp.LimitTime, Limit: 1800, HasLeft: true, Left: 600}) || a.Limits[1].HasLeft:
			t.Errorf("%v: limits %+v", d, a.Limits)
		}
	}
	bad := Default()
	bad.Limits = []Limit{{Type: "laps", Limit: 3}}
	if err := bad.Validate(); err == nil {
		t.Error("a limit of an unknown type validates")
	}
}
