package satisfactory

import (
	"errors"
	"net"
	"net/netip"
	"sync"
	"testing"

	"github.com/gsq-project/gsq/internal/testutil"
)

// recorder is an in-memory PacketWriter.
type recorder struct {
	mu   sync.Mutex
	sent [][]byte
}

func (r *recorder) WriteToUDPAddrPort(b []byte, _ netip.AddrPort) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = append(r.sent, append([]byte(nil), b...))
	return len(b), nil
}

// Our client polls our server over loopback; the state's cookie is the
// poll's, the rest the handler's; LocalAddr reports the socket; Shutdown
// ends Serve with ErrServerClosed.
func TestServerAnswers(t *testing.T) {
	t.Parallel()
	state := &ServerState{State: StateIdle, NetCL: 7, Flags: 1, SubStates: []SubState{{1, 2}}, Name: Text("factory")}
	s := &Server{Handler: HandlerFunc(func(netip.AddrPort) *ServerState { return state })}
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(pc) }()
	addr := pc.LocalAddr().(*net.UDPAddr).AddrPort()
	c := &Client{}
	defer c.Close()
	r, err := c.State(testutil.Context(t), addr)
	if err != nil || r.State.State != StateIdle || r.State.NetCL != 7 || r.State.Flags != 1 || r.State.Name.String() != "factory" || r.RTT <= 0 {
		t.Fatalf("%v, %+v", err, r)
	}
	if got := s.LocalAddr(); got == nil || got.String() != addr.String() {
		t.Errorf("LocalAddr() = %v", got)
	}
	if err := s.Shutdown(testutil.Context(t)); err != nil {
		t.Fatal(err)
	}
	if err := <-served; !errors.Is(err, ErrServerClosed) {
		t.Errorf("Serve: %v", err)
	}
	if err := s.ListenAndServe(); !errors.Is(err, ErrServerClosed) {
		t.Errorf("ListenAndServe after Shutdown: %v", err)
	}
}

// A state too large for MaxReplySize is not sent, and logged; a source
// past its budget is not answered; a nil state answers nothing.
func TestServerBounds(t *testing.T) {
	t.Parallel()
	var logs []string
	big := &ServerState{Name: make(Text, 600)}
	s := &Server{Handler: HandlerFunc(func(from netip.AddrPort) *ServerState {
		if from.Port() == 1 {
			return nil
		}
		return big
	}), Logf: func(format string, args ...any) { logs = append(logs, format) }, RateLimit: -1}
	poll, _ := Poll{Cookie: 1}.AppendBinary(nil)
	var rec recorder
	s.HandlePacket(&rec, netip.MustParseAddrPort("192.0.2.1:2"), poll)
	s.HandlePacket(&rec, netip.MustParseAddrPort("192.0.2.1:1"), poll)
	if len(rec.sent) != 0 || len(logs) != 1 {
		t.Errorf("%d replies, logs %q", len(rec.sent), logs)
	}
	s2 := &Server{Handler: HandlerFunc(func(netip.AddrPort) *ServerState { return &ServerState{} }), RateLimit: 1, RateBurst: 3}
	s2.init()
	s2.clock = func() int64 { return 1 }
	for range 10 {
		s2.HandlePacket(&rec, netip.MustParseAddrPort("192.0.2.2:5"), poll)
	}
	if len(rec.sent) != 3 {
		t.Errorf("%d replies to one source at once, the burst is 3", len(rec.sent))
	}
}
