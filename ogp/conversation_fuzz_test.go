package ogp

import (
	"errors"
	"net/netip"
	"testing"
	"time"
)

// FuzzConversation hands arbitrary datagrams to conversations (Default
// Queries in both dialects, and a Ping), with and without a known
// challenge; a datagram that reads as an OGP header with a request ID gets
// the conversation's, so that answers reach it. Nothing may panic, every
// request handed out must parse, the conversation must end by its
// deadline at the latest, and then it holds an answer or an *OpError
// around a *CallError whose Stats add up, and a Ping no answer.
func FuzzConversation(f *testing.F) {
	id := Header{Flags: FlagAnswer | FlagRequestID | FlagChallenge, Challenge: 5}
	seed := func(h Header, body []byte) {
		b, _ := h.AppendBinary(nil)
		f.Add(append(b, body...))
	}
	answer, _ := (&Answer{GameID: 1, Request: RequestServerInfo | RequestRules,
		Info:  ServerInfo{Fields: InfoHostName, HostName: Text("x")},
		Rules: []Rule{{Key: Text("k"), Value: Text("v")}}}).Append(nil, V091)
	def := id
	def.Type = TypeDefault
	seed(def, answer)
	split := def
	split.Flags |= FlagSplit
	split.SplitCount, split.SplitNo = 2, 1
	seed(split, answer[:4])
	e3 := id
	e3.Type = TypeError
	seed(e3, []byte{byte(ErrorInvalidChallenge)})
	seed(e3, []byte{byte(ErrorBanned)})
	seed(Header{Type: TypePing, Flags: FlagAnswer | FlagRequestID}, nil)
	f.Add([]byte("\xFF\xFF\xFF\xFFIgarbage"))
	addr := netip.MustParseAddrPort("127.0.0.1:7776")
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, o := range []*Options{{}, {Dialect: V1}, {Ping: true}} {
			for _, known := range []bool{false, true} {
				opts := *o
				opts.Timeout, opts.Retries, opts.Deadline = time.Second, 1, 10*time.Second
				var c Conversation
				c.Start(&opts, addr, 7, known)
				now := time.Unix(1000, 0)
				send := func() {
					for {
						b, ok := c.AppendRequest(nil, now)
						if !ok {
							return
						}
						if _, _, err := ParseHeader(b); err != nil {
							t.Fatalf("request %x: %v", b, err)
						}
					}
				}
				send()
				d := data
				if h, body, err := ParseHeader(data); err == nil && h.Flags&FlagRequestID != 0 {
					h.RequestID = c.id
					d, _ = h.AppendBinary(nil)
					d = append(d, body...)
				}
				// the datagram twice, then its halves, as if split across reads
				for _, b := range [][]byte{d, d, d[:len(d)/2], d[len(d)/2:]} {
					c.Receive(b, now)
					send()
				}
				for i := 0; !c.Done(); i++ {
					wake := c.Wake()
					if wake.IsZero() || i > 100 {
						t.Fatalf("not done, and wake %v after %d ticks", wake, i)
					}
					now = wake
					c.Tick(now)
					send()
				}
				if now.After(time.Unix(1010, 0)) {
					t.Fatalf("done at %v, after the deadline", now)
				}
				r := c.Result()
				var ce *CallError
				switch {
				case r.Err == nil && r.Answer == nil && !opts.Ping:
					t.Fatalf("no answer and no error: %+v", r)
				case opts.Ping && r.Answer != nil:
					t.Fatalf("a ping with an answer: %+v", r)
				case r.Err != nil && !errors.As(r.Err, &ce):
					t.Fatalf("error %v has no *CallError", r.Err)
				case r.Stats.Sent != 1+r.Stats.Resent+r.Stats.Rechallenged:
					t.Fatalf("stats %+v do not add up", r.Stats)
				}
			}
		}
	})
}
