package a2stest

import (
	"fmt"
	"net/netip"
	"sync"

	"github.com/gsq-project/gsq/a2s"
)

// Responder is a profile's server without a socket: it answers the A2S
// datagrams it is handed as NewServer's server does, so that a socket of
// your own can serve the profile, beside other protocols if you like.
type Responder struct {
	// Server answers the requests. Set its fields, if need be, before the
	// first datagram; serve it only through HandlePacket, which applies the
	// quirks it cannot see (a ban needs the request's size).
	Server *a2s.Server
	ban    *banHandler // nil unless the profile bans
}

// NewResponder returns p's server answering with h, through p's reply
// quirks; a nil h answers with p's content. It panics if that content
// does not encode. Add the lossy knobs with WrapWriter on the writer given
// to HandlePacket.
func (p Profile) NewResponder(h a2s.Handler) *Responder {
	if h == nil {
		sh, err := p.handler()
		if err != nil {
			panic(fmt.Sprintf("a2stest: profile %q: %v", p.Name, err))
		}
		h = sh
	}
	r := &Responder{Server: &a2s.Server{
		NoChallenge: p.NoChallenge,
		RateLimit:   p.RateLimit,
		SplitSize:   p.SplitSize,
		GoldSource:  p.Framing == FramingGoldSource,
	}}
	if p.Banned != nil {
		r.ban = &banHandler{text: p.Banned}
		r.Server.Handler, r.Server.NoChallenge = r.ban, true
	} else {
		r.Server.Handler = p.wrap(h)
	}
	return r
}

// HandlePacket answers one datagram b from from, writing the replies to w.
// It is safe for concurrent use and does not retain b.
func (r *Responder) HandlePacket(w a2s.PacketWriter, from netip.AddrPort, b []byte) {
	if r.ban == nil {
		r.Server.HandlePacket(w, from, b)
		return
	}
	if len(b) >= 5 && string(b[:4]) == "\xff\xff\xff\xff" {
		switch b[4] {
		case a2s.TypePingRequest:
			// A bare 'j', as long as the request: the Source payload
			// would make it 20 bytes.
			w.WriteToUDPAddrPort([]byte{0xff, 0xff, 0xff, 0xff, a2s.TypePingReply}, from)
			return
		case a2s.TypeChallengeRequestLegacy:
			return // the profile has no challenge, and no room for an 'l'
		}
	}
	r.ban.mu.Lock()
	defer r.ban.mu.Unlock()
	r.ban.requestLen = len(b)
	r.Server.HandlePacket(w, from, b)
}

// banHandler answers every query with an 'l' reply, no larger than the
// limit on replies to an unproven request: three times the request, and
// at most 32 bytes more.
type banHandler struct {
	text       a2s.Text
	mu         sync.Mutex // held by HandlePacket around the a2s.Server's call
	requestLen int        // the size of the request being answered
}

// banReplyOverhead is the bytes of an 'l' reply around its text: header,
// type and NUL.
const banReplyOverhead = 6

func (h *banHandler) ServeA2S(w a2s.ResponseWriter, _ *a2s.Request) {
	n := max(h.requestLen, 5) // 5 is the shortest request, for a caller who bypassed HandlePacket
	room := min(3*n, n+32) - banReplyOverhead
	text := h.text
	if len(text) > room {
		text = text[:room]
	}
	if b, err := a2s.AppendBanned(nil, text); err == nil {
		_ = w.WriteDatagram(b)
	}
}
