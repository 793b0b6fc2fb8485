package ogp

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// convTest drives a Conversation on a fake clock: no socket, no timer.
type convTest struct {
	t    *testing.T
	c    Conversation
	o    *Options
	now  time.Time
	last Header // the header of the last request sent
	req  []byte // the last request sent
}

var convAddr = netip.MustParseAddrPort("192.0.2.1:7776")

func startConv(t *testing.T, o *Options, chal uint32, known bool) *convTest {
	t.Helper()
	ct := &convTest{t: t, o: o, now: time.Unix(1_000_000, 0)}
	ct.c.Start(o, convAddr, chal, known)
	return ct
}

// send takes the request, if one is ready, and returns "C1234" (the
// challenge it carries) or "" when none was.
func (ct *convTest) send() string {
	ct.t.Helper()
	b, ok := ct.c.AppendRequest(nil, ct.now)
	if !ok {
		return ""
	}
	h, body, err := ParseHeader(b)
	if err != nil {
		ct.t.Fatalf("request %x: %v", b, err)
	}
	if h.Flags&FlagChallenge == 0 || h.Flags&FlagRequestID == 0 || h.RequestID == 0 || h.Flags&FlagAnswer != 0 {
		ct.t.Fatalf("request header %+v", h)
	}
	if h.Type == TypeDefault {
		if _, err := ParseQuery(body, ct.o.Dialect); err != nil {
			ct.t.Fatalf("query body %x: %v", body, err)
		}
	}
	if _, ok := ct.c.AppendRequest(nil, ct.now); ok {
		ct.t.Fatal("two requests at once")
	}
	ct.last, ct.req = h, b
	return fmt.Sprintf("C%x", h.Challenge)
}

func (ct *convTest) expect(want string) {
	ct.t.Helper()
	if got := ct.send(); got != want {
		ct.t.Fatalf("sent %q, want %q", got, want)
	}
}

// wait moves the clock to the conversation's next timer and ticks.
func (ct *convTest) wait() time.Duration {
	ct.t.Helper()
	w := ct.c.Wake()
	if w.IsZero() {
		ct.t.Fatal("no timer to wait for")
	}
	d := w.Sub(ct.now)
	ct.now = w
	ct.c.Tick(ct.now)
	return d
}

// answerHeader is the header of an answer to the last request.
func (ct *convTest) answerHeader(challenge uint32) Header {
	return Header{Type: ct.last.Type, Flags: FlagAnswer | FlagRequestID | FlagChallenge, RequestID: ct.last.RequestID, Challenge: challenge}
}

func packet(t *testing.T, h Header, body []byte) []byte {
	t.Helper()
	b, err := h.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	return append(b, body...)
}

var convAnswer = &Answer{
	GameID:  7,
	Request: RequestServerInfo | RequestRules,
	Info:    ServerInfo{Fields: InfoHostName | InfoPlayerCount, HostName: Text("conv"), PlayerCount: 3},
	Rules: func() []Rule {
		var r []Rule
		for i := range 60 {
			r = append(r, Rule{Key: Text(fmt.Sprintf("rule_%02d", i)), Value: Text(strings.Repeat("v", 20))})
		}
		return r
	}(),
}

func answerBody(t *testing.T, d Dialect) []byte {
	t.Helper()
	b, err := convAnswer.Append(nil, d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// answer is the whole answer to the last request, unsplit.
func (ct *convTest) answer(challenge uint32) []byte {
	return packet(ct.t, ct.answerHeader(challenge), answerBody(ct.t, ct.o.Dialect))
}

// fragments cuts the answer to the last request into n fragments.
func (ct *convTest) fragments(challenge uint32, n int) [][]byte {
	body := answerBody(ct.t, ct.o.Dialect)
	size := (len(body) + n - 1) / n
	var out [][]byte
	for i := range n {
		h := ct.answerHeader(challenge)
		h.Flags |= FlagSplit
		if i > 0 {
			h.Flags &^= FlagChallenge
		}
		h.SplitCount, h.SplitNo = uint8(n), uint8(i)
		part := body[min(i*size, len(body)):min((i+1)*size, len(body))]
		out = append(out, packet(ct.t, h, part))
	}
	return out
}

// error3 is an error 3 answer to the last request: the new challenge in
// the outer header (inHeader), in the request copy (inCopy), or neither.
func (ct *convTest) error3(challenge uint32, inHeader, inCopy bool) []byte {
	ct.t.Helper()
	h := Header{Type: TypeError, Flags: FlagAnswer | FlagRequestID, RequestID: ct.last.RequestID}
	if inHeader {
		h.Flags |= FlagChallenge
		h.Challenge = challenge
	}
	e := ErrorAnswer{Code: ErrorInvalidChallenge}
	if inCopy {
		cp, err := appendRequestCopy(nil, ct.req, challenge)
		if err != nil {
			ct.t.Fatal(err)
		}
		e.Request = cp
	}
	body, _ := e.AppendBinary(nil)
	return packet(ct.t, h, body)
}

func (ct *convTest) errorAnswer(code ErrorCode) []byte {
	h := Header{Type: TypeError, Flags: FlagAnswer | FlagRequestID, RequestID: ct.last.RequestID}
	return packet(ct.t, h, []byte{byte(code)})
}

func (ct *convTest) recv(b ...[]byte) {
	for _, d := range b {
		ct.c.Receive(d, ct.now)
	}
}

func (ct *convTest) checkAnswered() {
	ct.t.Helper()
	r := ct.c.Result()
	if !ct.c.Done() || r.Err != nil || r.Answer == nil {
		ct.t.Fatalf("done %v, %+v", ct.c.Done(), r)
	}
	if string(r.Answer.Info.HostName) != "conv" || len(r.Answer.Rules) != 60 || r.Answer.GameID != 7 {
		ct.t.Fatalf("answer %+v", r.Answer)
	}
}

// checkErr checks the conversation ended with an *OpError around a
// *CallError whose cause matches target, and returns it.
func (ct *convTest) checkErr(target error) error {
	ct.t.Helper()
	err := ct.c.Result().Err
	var ce *CallError
	var oe *OpError
	switch {
	case !ct.c.Done():
		ct.t.Fatal("not done")
	case !errors.As(err, &oe) || oe.Addr != convAddr.String() || !errors.As(err, &ce):
		ct.t.Fatalf("error %#v is not an *OpError naming the server around a *CallError", err)
	case target != nil && !errors.Is(err, target):
		ct.t.Fatalf("error %v does not match %v", err, target)
	}
	return err
}

// The challenge flow: a request with challenge 0 earns error 3 with the
// new challenge (in the header, in the copy, or in both), sent again at
// once, not as a retry; the answer ends the conversation, which keeps the
// challenge for the next one, whose single request is answered.
func TestConversationChallengeFlow(t *testing.T) {
	t.Parallel()
	for _, form := range []struct {
		name             string
		inHeader, inCopy bool
	}{{"both", true, true}, {"header only", true, false}, {"copy only", false, true}} {
		t.Run(form.name, func(t *testing.T) {
			t.Parallel()
			ct := startConv(t, &Options{}, 0, false)
			ct.expect("C0")
			ct.recv(ct.error3(0xBEEF, form.inHeader, form.inCopy))
			if ct.c.Done() || !ct.c.Heard() || ct.c.Resending() {
				t.Fatalf("after error 3: done %v, heard %v, resending %v", ct.c.Done(), ct.c.Heard(), ct.c.Resending())
			}
			ct.expect("Cbeef")
			ct.recv(ct.answer(0xBEEF))
			ct.checkAnswered()
			if r := ct.c.Result(); r.Stats != (Stats{Sent: 2, Rechallenged: 1}) {
				t.Errorf("stats %+v", r.Stats)
			}
			if c, ok := ct.c.Challenge(); !ok || c != 0xBEEF {
				t.Errorf("Challenge() = %x, %v", c, ok)
			}
			// The next conversation starts with it: one request, answered.
			next := startConv(t, &Options{}, 0xBEEF, true)
			next.expect("Cbeef")
			next.recv(next.answer(0xBEEF))
			next.checkAnswered()
			if next.c.Result().Stats != (Stats{Sent: 1}) {
				t.Errorf("second conversation: %+v", next.c.Result().Stats)
			}
		})
	}
}

// A resend that crosses the re-challenge earns a second error 3 carrying
// the challenge already in use: it rejects the earlier send, and changes
// nothing: no new request, no re-challenge counted.
func TestConversationStaleError3(t *testing.T) {
	t.Parallel()
	ct := startConv(t, &Options{MaxChallenges: 1}, 0, false)
	ct.expect("C0")
	ct.wait() // no answer in time: the same request again
	ct.expect("C0")
	ct.recv(ct.error3(0xAB, true, true)) // to the first send
	ct.expect("Cab")
	ct.recv(ct.error3(0xAB, true, true)) // to the resend, late
	if ct.c.Done() || ct.c.Pending() {
		t.Fatalf("a stale error 3: done %v, pending %v", ct.c.Done(), ct.c.Pending())
	}
	ct.recv(ct.answer(0xAB))
	ct.checkAnswered()
	if st := ct.c.Result().Stats; st != (Stats{Sent: 3, Resent: 1, Rechallenged: 1}) {
		t.Errorf("stats %+v", st)
	}
}

// An error 3 that carries no challenge anywhere ends the conversation; a
// server that keeps rejecting costs 1 + MaxChallenges requests.
func TestConversationChallengeErrors(t *testing.T) {
	t.Parallel()
	ct := startConv(t, &Options{}, 0, false)
	ct.expect("C0")
	ct.recv(ct.error3(1, false, false))
	if err := ct.checkErr(nil); !strings.Contains(err.Error(), "without a new challenge") {
		t.Errorf("error 3 without a challenge: %v", err)
	}

	ct = startConv(t, &Options{}, 0, false)
	for i := range 4 {
		ct.expect(fmt.Sprintf("C%x", i))
		ct.recv(ct.error3(uint32(i+1), true, true))
	}
	ct.checkErr(ErrTooManyChallenges)
	if st := ct.c.Result().Stats; st != (Stats{Sent: 4, Rechallenged: 3}) {
		t.Errorf("stats %+v", st)
	}
	// A negative MaxChallenges is read as the default, 3.
	ct = startConv(t, &Options{MaxChallenges: -1}, 0, false)
	ct.expect("C0")
	ct.recv(ct.error3(5, true, true))
	ct.expect("C5")
	ct.recv(ct.error3(6, true, true))
	ct.expect("C6")
	ct.recv(ct.error3(7, true, true))
	ct.expect("C7")
	ct.recv(ct.error3(8, true, true))
	ct.checkErr(ErrTooManyChallenges)
}

// Only answers to this conversation's request count: another request ID,
// no request ID, a query instead of an answer, another type, or an answer
// before anything was sent, are ignored; every conversation draws a new
// non-zero ID.
func TestConversationRequestIDs(t *testing.T) {
	t.Parallel()
	ids := map[uint32]bool{}
	for range 100 {
		ct := startConv(t, &Options{}, 9, true)
		if ct.c.Pending() && ct.c.id == 0 || ids[ct.c.id] {
			t.Fatalf("request id %x again or zero", ct.c.id)
		}
		ids[ct.c.id] = true
	}
	ct := startConv(t, &Options{}, 9, true)
	early := packet(t, Header{Type: TypeDefault, Flags: FlagAnswer | FlagRequestID, RequestID: ct.c.id}, answerBody(t, V091))
	ct.recv(early)
	ct.expect("C9")
	h := ct.answerHeader(9)
	other, noID, query, ping := h, h, h, h
	other.RequestID++
	noID.Flags &^= FlagRequestID
	query.Flags &^= FlagAnswer
	ping.Type = TypePing
	body := answerBody(t, V091)
	for _, hh := range []Header{other, noID, query, ping} {
		ct.recv(packet(t, hh, body))
	}
	if ct.c.Done() || ct.c.Heard() {
		t.Fatalf("done %v, heard %v after answers to other requests", ct.c.Done(), ct.c.Heard())
	}
	ct.recv(ct.answer(9))
	ct.checkAnswered()
}

// Split answers are reassembled in any order, duplicates ignored; only
// fragment 0 carries the challenge, and the answer's header is its.
func TestConversationSplit(t *testing.T) {
	t.Parallel()
	ct := startConv(t, &Options{}, 3, true)
	ct.expect("C3")
	f := ct.fragments(3, 4)
	ct.recv(f[2], f[0], f[2], f[3])
	if ct.c.Done() {
		t.Fatal("done with a fragment missing")
	}
	ct.recv(f[1])
	ct.checkAnswered()
	if h := ct.c.Result().Header; h.SplitNo != 0 || h.Flags&FlagChallenge == 0 {
		t.Errorf("answer header %+v, want fragment 0's", h)
	}

	// Fragments that disagree, or number beyond their count, fail it.
	ct = startConv(t, &Options{}, 3, true)
	ct.expect("C3")
	f = ct.fragments(3, 3)
	g := ct.fragments(3, 4)
	ct.recv(f[0], g[1])
	ct.checkErr(ErrBadFragment)

	// A split answer over MaxAnswerSize fails it, before it is whole.
	ct = startConv(t, &Options{MaxAnswerSize: 100}, 3, true)
	ct.expect("C3")
	ct.recv(ct.fragments(3, 4)[:2]...)
	ct.checkErr(ErrTooLarge)

	// Part of an answer and then silence: a timeout that says so.
	ct = startConv(t, &Options{Retries: -1}, 3, true)
	ct.expect("C3")
	ct.recv(ct.fragments(3, 3)[1])
	ct.wait()
	err := ct.checkErr(ErrIncomplete)
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "got 1 of 3 fragments") {
		t.Errorf("incomplete: %v", err)
	}
}

// Error answers other than 3 end the conversation with a *ServerError; an
// error 4 to a query whose layout differs between the dialects suggests
// the other dialect, and an answer that parses only in the other dialect
// says so for sure.
func TestConversationErrorAnswers(t *testing.T) {
	t.Parallel()
	for _, code := range []ErrorCode{ErrorBanned, ErrorInvalidType, ErrorInvalidValue} {
		ct := startConv(t, &Options{}, 1, true)
		ct.expect("C1")
		ct.recv(ct.errorAnswer(code))
		var se *ServerError
		if err := ct.checkErr(nil); !errors.As(err, &se) || se.Code != code {
			t.Errorf("error %d: %v", code, err)
		}
	}
	ct := startConv(t, &Options{}, 1, true) // QueryAll: the layouts differ
	ct.expect("C1")
	ct.recv(ct.errorAnswer(ErrorInvalidQuery))
	var de *DialectError
	if err := ct.checkErr(nil); !errors.As(err, &de) || de.Sure || de.Server != V1 {
		t.Errorf("error 4: %v", err)
	}
	q := Query{Request: RequestRules}
	ct = startConv(t, &Options{Query: &q}, 1, true) // the same bytes in both
	ct.expect("C1")
	ct.recv(ct.errorAnswer(ErrorInvalidQuery))
	if err := ct.checkErr(nil); errors.As(err, &de) {
		t.Errorf("error 4 to a query the dialects agree on: %v", err)
	}

	// v1's host name bit is v0.91's mod bit, which v0.91 answers with
	// two strings: a v1 conversation reads one, and one is left.
	v091 := &Answer{GameID: 1, Request: RequestServerInfo, Info: ServerInfo{Fields: InfoMod, Mod: ModInfo{Name: Text("m"), Dir: Text("ctf")}}}
	body, err := v091.Append(nil, V091)
	if err != nil {
		t.Fatal(err)
	}
	hostName := Query{Request: RequestServerInfo, Info: InfoHostName}
	ct = startConv(t, &Options{Dialect: V1, Query: &hostName}, 1, true)
	ct.expect("C1")
	ct.recv(packet(t, ct.answerHeader(1), body))
	if err := ct.checkErr(nil); !errors.As(err, &de) || !de.Sure || de.Server != V091 || !strings.Contains(err.Error(), "4 bytes left") {
		t.Errorf("a v0.91 answer to a v1 conversation: %v", err)
	}
}

// An answer cut short by a field this package does not know keeps the
// sections before it, with the error.
func TestConversationUnknownField(t *testing.T) {
	t.Parallel()
	ct := startConv(t, &Options{}, 1, true)
	ct.expect("C1")
	// Good server info ("A"), then a player list whose field mask sets
	// bit 3.1, which no version knows.
	body := []byte{0, 0, 0x05, 0x01, 'A', 0, 0x01, 0x80, 0x80, 0x80, 0x02}
	ct.recv(packet(t, ct.answerHeader(1), body))
	if err := ct.checkErr(ErrUnknownField); err == nil {
		t.Fatal("no error")
	}
	if r := ct.c.Result(); r.Answer == nil || string(r.Answer.Info.GameName) != "A" || r.Answer.Request != RequestServerInfo {
		t.Errorf("the sections before the unknown field are lost: %+v", r.Answer)
	}
}

// Unanswered requests are sent again after 1 s, 1.5 s, 2.25 s...,
// Retries times, as resends; then the conversation fails with a timeout
// that names the attempts. MaxTimeout caps a wait, and the Deadline ends
// the conversation whatever the retries.
func TestConversationTimeouts(t *testing.T) {
	t.Parallel()
	ct := startConv(t, &Options{Ping: true}, 0, false)
	ct.expect("C0")
	var waits []time.Duration
	for !ct.c.Done() {
		waits = append(waits, ct.wait())
		if ct.c.Pending() && !ct.c.Resending() {
			t.Fatal("a resend not marked as one")
		}
		ct.send()
	}
	if fmt.Sprint(waits) != "[1s 1.5s 2.25s]" {
		t.Errorf("waits %v", waits)
	}
	err := ct.checkErr(ErrTimeout)
	var ne interface{ Timeout() bool }
	if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) || err.Error() != "ogp: ping 192.0.2.1:7776: timeout after 3 attempts" {
		t.Errorf("timeout: %v", err)
	}
	if st := ct.c.Result().Stats; st != (Stats{Sent: 3, Resent: 2}) {
		t.Errorf("stats %+v", st)
	}

	ct = startConv(t, &Options{Ping: true, Timeout: time.Second, MaxTimeout: 1200 * time.Millisecond, Retries: 10, Deadline: 3 * time.Second}, 0, false)
	ct.expect("C0")
	waits = nil
	for !ct.c.Done() {
		waits = append(waits, ct.wait())
		ct.send()
	}
	if fmt.Sprint(waits) != "[1s 1.2s 800ms]" {
		t.Errorf("capped waits and deadline: %v", waits)
	}
	ct.checkErr(ErrTimeout)
}

// What a conversation that got no answer reports: a server that sent only
// what is not OGP, the network's unreachable report, a context's deadline
// (a timeout that matches context.DeadlineExceeded too) or its
// cancellation.
func TestConversationFailures(t *testing.T) {
	t.Parallel()
	ct := startConv(t, &Options{Retries: -1}, 0, false)
	ct.expect("C0")
	ct.recv([]byte("\xFF\xFF\xFF\xFFIsomething else"))
	ct.wait()
	err := ct.checkErr(ErrNotOGP)
	var pe *ParseError
	if errors.Is(err, ErrTimeout) || !errors.As(err, &pe) {
		t.Errorf("garbage: %v", err)
	}

	ct = startConv(t, &Options{}, 0, false)
	ct.expect("C0")
	ct.c.Unreachable(syscall.ECONNREFUSED)
	if err := ct.checkErr(ErrUnreachable); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("unreachable: %v", err)
	}

	ct = startConv(t, &Options{}, 0, false)
	ct.expect("C0")
	ct.c.Fail(context.DeadlineExceeded)
	if err := ct.checkErr(ErrTimeout); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("context deadline: %v", err)
	}

	ct = startConv(t, &Options{}, 0, false)
	ct.expect("C0")
	ct.c.Fail(context.Canceled)
	if err := ct.checkErr(context.Canceled); errors.Is(err, ErrTimeout) {
		t.Errorf("canceled: %v", err)
	}
	// Done is final: a late answer changes nothing.
	ct.recv(ct.answer(0))
	if ct.c.Result().Answer != nil {
		t.Error("an answer after the end was taken")
	}
}

// A Ping's answer gives the round trip, clean when it answers a first
// send, and the current challenge.
func TestConversationPing(t *testing.T) {
	t.Parallel()
	ct := startConv(t, &Options{Ping: true}, 0, false)
	ct.expect("C0")
	ct.now = ct.now.Add(30 * time.Millisecond)
	ct.recv(packet(t, ct.answerHeader(0x42), nil))
	if rtt, clean := ct.c.RoundTrip(); !ct.c.Done() || ct.c.Result().Err != nil || rtt != 30*time.Millisecond || !clean {
		t.Fatalf("ping: done %v, %v, rtt %v clean %v", ct.c.Done(), ct.c.Result().Err, rtt, clean)
	}
	if c, ok := ct.c.Challenge(); !ok || c != 0x42 {
		t.Errorf("challenge %x, %v", c, ok)
	}
	// Answered after a resend: the round trip cannot be matched to a send.
	ct = startConv(t, &Options{Ping: true}, 0, false)
	ct.expect("C0")
	ct.wait()
	ct.expect("C0")
	ct.recv(packet(t, ct.answerHeader(0x42), nil))
	if _, clean := ct.c.RoundTrip(); clean {
		t.Error("the round trip of a resent request is clean")
	}
}

// A conversation in the other dialect asks in it, and reads its answers.
func TestConversationV1(t *testing.T) {
	t.Parallel()
	ct := startConv(t, &Options{Dialect: V1}, 1, true)
	ct.expect("C1")
	if ct.last.Flags&FlagUTF8 == 0 || ct.last.Flags&FlagSplit == 0 || ct.last.MaxBytesPerPacket != DefaultPacketSize {
		t.Errorf("v1 request header %+v", ct.last)
	}
	ct.recv(ct.answer(1))
	ct.checkAnswered()
}
