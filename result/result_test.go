package result

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/a2s/a2stest"
	"github.com/gsq-project/gsq/internal/neterr"
	"github.com/gsq-project/gsq/ogp"
	"github.com/gsq-project/gsq/ogp/ogptest"
)

var testAddr = netip.MustParseAddrPort("127.0.0.1:27015")

// decode parses r's JSON, failing the test when it is not one valid
// object.
func decode(t *testing.T, r *Result) map[string]any {
	t.Helper()
	b := r.AppendJSON(nil)
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil || dec.More() {
		t.Fatalf("not one JSON object (%v): %s", err, b)
	}
	return m
}

func a2sFull(t *testing.T) *Result {
	t.Helper()
	r := New("localhost:27015", testAddr, "a2s")
	r.SetA2SInfo(&a2s.InfoResult{Info: a2stest.DefaultInfo(), RTT: 1234567 * time.Nanosecond}, nil)
	r.SetA2SPlayers(a2stest.DefaultPlayers(), nil)
	r.SetA2SRules(a2stest.DefaultRules(), nil)
	return r
}

func TestA2SAnswered(t *testing.T) {
	t.Parallel()
	r := a2sFull(t)
	if r.Err != nil || len(r.Errors) != 0 {
		t.Fatalf("Err %v, Errors %v", r.Err, r.Errors)
	}
	m := decode(t, r)
	if m["target"] != "localhost:27015" || m["address"] != "127.0.0.1:27015" || m["protocol"] != "a2s" ||
		m["ping_ms"] != json.Number("1.23") || m["error"] != nil {
		t.Errorf("envelope %v", m)
	}
	if errs, ok := m["errors"].(map[string]any); !ok || len(errs) != 0 {
		t.Errorf("errors = %v, want {}", m["errors"])
	}
	want := map[string]any{"name": "gsq test server", "map": "de_dust2", "game": "Counter-Strike: Source",
		"players": json.Number("3"), "max_players": json.Number("24"), "bots": json.Number("1"),
		"password": false, "version": "1.0.0.22", "connect": "127.0.0.1:27015"}
	if got := m["summary"]; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("summary = %v\nwant      %v", got, want)
	}
	if players, _ := m["players"].([]any); len(players) != 3 {
		t.Errorf("players = %v", m["players"])
	}
	if rules, _ := m["rules"].([]any); len(rules) != 100 {
		t.Errorf("%d rules", len(rules))
	}
}

// A failed section is left out and its error goes under errors; the
// top-level error stays null while another section answered.
func TestA2SPartial(t *testing.T) {
	t.Parallel()
	r := New("x", testAddr, "a2s")
	r.SetA2SInfo(&a2s.InfoResult{Info: a2stest.DefaultInfo()}, nil)
	r.SetA2SPlayers(nil, fmt.Errorf("wrapped: %w", a2s.ErrTimeout))
	r.SetA2SRules(nil, &a2s.ParseError{Packet: "rules", Offset: 9, Err: a2s.ErrTruncated})
	if r.Err != nil {
		t.Errorf("Err = %v, want nil with info answered", r.Err)
	}
	m := decode(t, r)
	for _, absent := range []string{"players", "rules", "ping_ms"} {
		if _, ok := m[absent]; ok {
			t.Errorf("%s present: %v", absent, m[absent])
		}
	}
	errs := m["errors"].(map[string]any)
	if k := errs["players"].(map[string]any)["kind"]; k != "timeout" {
		t.Errorf("errors.players.kind = %v", k)
	}
	if k := errs["rules"].(map[string]any)["kind"]; k != "protocol" {
		t.Errorf("errors.rules.kind = %v", k)
	}
	if m["error"] != nil {
		t.Errorf("error = %v", m["error"])
	}
	// An answer that comes later replaces the error.
	r.SetA2SPlayers(a2stest.DefaultPlayers(), nil)
	if r.SectionErr(SectionPlayers) != nil || len(r.Errors) != 1 {
		t.Errorf("players still failed: %v", r.Errors)
	}
}

func TestA2SNothingAnswered(t *testing.T) {
	t.Parallel()
	r := New("x", testAddr, "a2s")
	r.SetA2SInfo(nil, a2s.ErrTimeout)
	r.SetA2SPlayers(nil, a2s.ErrTimeout)
	if r.Err == nil || r.Err.Kind != KindTimeout || r.Err != r.SectionErr(SectionInfo) {
		t.Fatalf("Err = %v, want info's timeout", r.Err)
	}
	m := decode(t, r)
	if len(m["summary"].(map[string]any)) != 0 {
		t.Errorf("summary = %v, want {}", m["summary"])
	}
	if m["error"].(map[string]any)["kind"] != "timeout" || len(m["errors"].(map[string]any)) != 2 {
		t.Errorf("error %v, errors %v", m["error"], m["errors"])
	}
}

// A target that never got queried: no address, no sections, the error.
func TestFail(t *testing.T) {
	t.Parallel()
	r := New("nowhere.invalid", netip.AddrPort{}, "a2s")
	r.Fail(fmt.Errorf("cannot resolve: %w", &net.DNSError{Err: "no such host", Name: "nowhere.invalid", IsNotFound: true}))
	m := decode(t, r)
	if _, ok := m["address"]; ok {
		t.Errorf("address %v", m["address"])
	}
	if m["error"].(map[string]any)["kind"] != "unreachable" || len(m["errors"].(map[string]any)) != 0 {
		t.Errorf("error %v, errors %v", m["error"], m["errors"])
	}
}

// Values a server did not send are left out, never zero-filled or null.
func TestLeftOut(t *testing.T) {
	t.Parallel()
	in := &a2s.Info{Format: a2s.TypeInfoReplyGoldSource, Name: a2s.Text("gold \xe9"), Address: a2s.Text("10.0.0.1:27016"),
		Players: 1, MaxPlayers: 8, NoBots: true, ServerType: 'd', Environment: 'l'}
	r := New("x", testAddr, "a2s")
	r.SetA2SInfo(&a2s.InfoResult{Info: in, GoldSource: in}, nil)
	r.SetA2SPlayers(&a2s.Players{List: []a2s.Player{{Name: a2s.Text("inf"), Duration: float32(math.Inf(1))}}}, nil)
	m := decode(t, r)
	s := m["summary"].(map[string]any)
	for _, absent := range []string{"bots", "version"} {
		if _, ok := s[absent]; ok {
			t.Errorf("summary.%s = %v", absent, s[absent])
		}
	}
	if s["name"] != "gold é" || s["connect"] != "127.0.0.1:27016" {
		t.Errorf("summary = %v", s)
	}
	info := m["info"].(map[string]any)
	if _, ok := info["bots"]; ok {
		t.Errorf("info.bots = %v", info["bots"])
	}
	if _, ok := info["goldsource"]; ok {
		t.Error("a lone 'm' reply nested as goldsource")
	}
	if info["name"] != "gold é" || info["name_b64"] != "Z29sZCDp" {
		t.Errorf("name %v, name_b64 %v", info["name"], info["name_b64"])
	}
	if p := m["players"].([]any)[0].(map[string]any); p["duration"] != nil {
		t.Errorf("infinite duration encoded as %v", p["duration"])
	}
}

// DayZ's binary mod list is decoded from the rules; one that does not
// decode fails the mods section alone.
func TestA2SMods(t *testing.T) {
	t.Parallel()
	p, _ := a2stest.LookupProfile("dayz")
	r := New("x", testAddr, "a2s")
	r.SetA2SRules(p.Rules, nil)
	if r.Detail.(*A2S).Mods == nil || len(r.Detail.(*A2S).Mods.Mods) != 100 || len(r.Errors) != 0 {
		t.Fatalf("mods %v, errors %v", r.Detail.(*A2S).Mods, r.Errors)
	}
	broken := &a2s.Rules{List: append([]a2s.Rule(nil), p.Rules.List...)}
	for i, rule := range broken.List {
		if len(rule.Name) == 2 && rule.Name[0] == rule.Name[1] { // the last binary chunk
			broken.List[i].Value = rule.Value[:len(rule.Value)/2]
			break
		}
	}
	r.SetA2SRules(broken, nil)
	if r.Detail.(*A2S).Mods != nil || r.SectionErr(SectionMods) == nil || r.SectionErr(SectionMods).Kind != KindProtocol || r.Detail.(*A2S).Rules == nil {
		t.Fatalf("broken mods: mods %v, errors %v", r.Detail.(*A2S).Mods, r.Errors)
	}
	m := decode(t, r)
	if _, ok := m["mods"]; ok {
		t.Error("mods present although they did not decode")
	}
	if _, ok := m["errors"].(map[string]any)["mods"]; !ok {
		t.Error("no errors.mods")
	}
	r.SetA2SRules(p.Rules, nil)
	if r.Detail.(*A2S).Mods == nil || len(r.Errors) != 0 {
		t.Errorf("good rules after broken ones: mods %v, errors %v", r.Detail.(*A2S).Mods != nil, r.Errors)
	}
}

func TestOGP(t *testing.T) {
	t.Parallel()
	a := ogptest.SampleAnswer(ogp.V1, 2)
	r := New("x", testAddr, "ogp")
	r.SetOGP(ogp.V1, a.Request, &ogp.Result{Answer: a, RTT: time.Millisecond}, nil)
	m := decode(t, r)
	if m["dialect"] != "v1" || m["error"] != nil || len(m["errors"].(map[string]any)) != 0 {
		t.Fatalf("envelope %v", m)
	}
	s := m["summary"].(map[string]any)
	if s["name"] != "gsq ogptest server" || s["password"] != true || s["connect"] != "127.0.0.1:7777" {
		t.Errorf("summary %v", s)
	}

	// An answer cut short at an unknown field keeps the sections before
	// it; those after fail.
	cut := *a
	cut.Request &^= ogp.RequestRules | ogp.RequestAddOns | ogp.RequestLimits
	err := &ogp.ParseError{Offset: 99, Err: ogp.ErrUnknownField}
	r.SetOGP(ogp.V1, a.Request, &ogp.Result{Answer: &cut}, err)
	if r.Err != nil || r.SectionErr(SectionRules) == nil || r.SectionErr(SectionLimits) == nil || r.SectionErr(SectionInfo) != nil {
		t.Errorf("cut answer: Err %v, Errors %v", r.Err, r.Errors)
	}

	// A ban is a refusal, for every section asked.
	r.SetOGP(ogp.V091, ogp.RequestServerInfo|ogp.RequestPlayers, nil, &ogp.ServerError{Code: ogp.ErrorBanned})
	if r.Err == nil || r.Err.Kind != KindRefused || len(r.Errors) != 2 {
		t.Errorf("banned: Err %v, Errors %v", r.Err, r.Errors)
	}
	if m := decode(t, r); len(m["summary"].(map[string]any)) != 0 {
		t.Errorf("banned summary %v", m["summary"])
	}
}

// The player list reads the same whatever the protocol: nil without a
// player section, empty when no one is on.
func TestPlayerList(t *testing.T) {
	t.Parallel()
	r := New("x", testAddr, "a2s")
	if r.PlayerList() != nil {
		t.Error("a result with no detail has players")
	}
	r.SetA2SInfo(&a2s.InfoResult{Info: a2stest.DefaultInfo()}, nil)
	if r.PlayerList() != nil {
		t.Error("info alone has players")
	}
	r.SetA2SPlayers(&a2s.Players{List: []a2s.Player{{Name: a2s.Text("Zo\xeb"), Score: -2, Duration: 61.5}}}, nil)
	if got := r.PlayerList(); len(got) != 1 || got[0] != (Player{Name: "Zoë", Score: -2, Duration: 61500 * time.Millisecond}) {
		t.Errorf("A2S players %+v", got)
	}
	r.SetA2SPlayers(&a2s.Players{}, nil)
	if got := r.PlayerList(); got == nil || len(got) != 0 {
		t.Errorf("an empty A2S server: %#v", got)
	}

	o := New("x", testAddr, "ogp")
	a := &ogp.Answer{Request: ogp.RequestServerInfo | ogp.RequestPlayers, Players: ogp.PlayerList{Count: 1, Fields: ogp.PlayerName | ogp.PlayerScore | ogp.PlayerTime,
		Players: []ogp.Player{{Name: ogp.Text("al"), Score: 7, Time: 90}}}}
	o.SetOGP(ogp.V091, a.Request, &ogp.Result{Answer: a}, nil)
	if got := o.PlayerList(); len(got) != 1 || got[0] != (Player{Name: "al", Score: 7, Duration: 90 * time.Second}) {
		t.Errorf("OGP players %+v", got)
	}
	a.Players = ogp.PlayerList{}
	if got := o.PlayerList(); got == nil || len(got) != 0 {
		t.Errorf("an empty OGP server: %#v", got)
	}
	a.Players = ogp.PlayerList{Count: 3} // entries with no field: not sent
	if got := o.PlayerList(); got != nil {
		t.Errorf("entries not sent: %#v", got)
	}
	a.Request = ogp.RequestServerInfo
	if got := o.PlayerList(); got != nil {
		t.Errorf("no player section: %#v", got)
	}
}

func TestKindOf(t *testing.T) {
	t.Parallel()
	refused := &net.OpError{Op: "read", Net: "udp", Err: os.NewSyscallError("recvfrom", syscall.ECONNREFUSED)}
	for _, tt := range []struct {
		err  error
		want Kind
	}{
		{nil, ""},
		{a2s.ErrTimeout, KindTimeout},
		{fmt.Errorf("a2s: info: %w", os.ErrDeadlineExceeded), KindTimeout},
		{fmt.Errorf("%w", context.DeadlineExceeded), KindTimeout},
		{fmt.Errorf("a2s: info 127.0.0.1:1: %w", refused), KindUnreachable},
		{&net.DNSError{Err: "no such host", Name: "x", IsNotFound: true}, KindUnreachable},
		{&net.DNSError{Err: "i/o timeout", Name: "x", IsTimeout: true}, KindUnreachable},
		{syscall.EHOSTUNREACH, KindUnreachable},
		{fmt.Errorf("ogp: query: %w", &neterr.Unreachable{Sentinel: ogp.ErrUnreachable, Err: syscall.EACCES}), KindUnreachable},
		{context.Canceled, KindCanceled},
		{&a2s.BannedError{Message: a2s.Text("go away")}, KindRefused},
		{&ogp.ServerError{Code: ogp.ErrorBanned}, KindRefused},
		{&ogp.ServerError{Code: ogp.ErrorInvalidValue}, KindProtocol},
		{&a2s.ParseError{Packet: "info", Err: a2s.ErrTruncated}, KindProtocol},
		{a2s.ErrTooManyChallenges, KindProtocol},
		{fmt.Errorf("x: %w", &Error{Kind: KindAuth, Message: "no"}), KindAuth},
	} {
		if got := KindOf(tt.err); got != tt.want {
			t.Errorf("KindOf(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
	e := NewError(fmt.Errorf("a2s: info: %w", a2s.ErrTimeout))
	if !errors.Is(e, a2s.ErrTimeout) || e.Error() != "a2s: info: a2s: timeout" || NewError(e) != e || NewError(nil) != nil {
		t.Errorf("NewError: %#v", e)
	}
}

func BenchmarkAppendJSON(b *testing.B) {
	r := New("localhost:27015", testAddr, "a2s")
	r.SetA2SInfo(&a2s.InfoResult{Info: a2stest.DefaultInfo(), RTT: time.Millisecond}, nil)
	r.SetA2SPlayers(a2stest.DefaultPlayers(), nil)
	r.SetA2SRules(a2stest.DefaultRules(), nil)
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = r.AppendJSON(buf[:0])
	}
}

// TestAppendJSONAllocs holds the encoder to its budget: no allocation
// into a buffer that has room.
func TestAppendJSONAllocs(t *testing.T) {
	r := New("localhost:27015", testAddr, "a2s")
	r.SetA2SInfo(&a2s.InfoResult{Info: a2stest.DefaultInfo(), RTT: time.Millisecond}, nil)
	r.SetA2SPlayers(a2stest.DefaultPlayers(), nil)
	r.SetA2SRules(a2stest.DefaultRules(), nil)
	buf := r.AppendJSON(nil)
	if n := testing.AllocsPerRun(100, func() { buf = r.AppendJSON(buf[:0]) }); n != 0 {
		t.Errorf("AppendJSON allocates %v times into a buffer that has room", n)
	}
}
