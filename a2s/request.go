package a2s

import (
	"fmt"
	"strings"

	"github.com/gsq-project/gsq/internal/wire"
)

// Request is a client query: A2S_INFO ('T'), A2S_PLAYER ('U'), A2S_RULES
// ('V'), A2A_PING ('i') or the legacy A2S_SERVERQUERY_GETCHALLENGE ('W').
type Request struct {
	Type byte // TypeInfoRequest, TypePlayerRequest, TypeRulesRequest, TypePingRequest or TypeChallengeRequestLegacy
	// Challenge is the challenge number echoed back to the server; it is
	// only meaningful when HasChallenge is set.
	Challenge    uint32
	HasChallenge bool
	// Padding is the number of extra bytes after the request. Valve
	// proposed padding A2S_INFO to 1200 bytes as an anti-amplification
	// alternative to the challenge, and the spec says servers must accept
	// appended data.
	Padding int
}

// PaddedInfoSize is the size to which Valve's 2020 proposal pads an
// A2S_INFO request, as the alternative to the challenge: a server may answer
// such a request at once when its reply is no larger, since that amplifies
// nothing (see [Client.PadInfo] and [Server.AcceptPaddedInfo]).
const PaddedInfoSize = 1200

// PadTo returns r with Padding set so that it encodes to size bytes, or to
// its bare size when that is larger. An A2S_INFO request without a
// challenge that is padded gains the 4-byte AskChallenge field first (see
// [Request.AppendBinary]), so it can only grow by 5 bytes or more: sizes
// 1 to 4 bytes above its bare size give 5.
func (r Request) PadTo(size int) Request {
	n := 5 // header and type
	switch r.Type {
	case TypeInfoRequest:
		n += len(infoQuery) + 1
		if r.HasChallenge {
			n += 4
		} else if size > n {
			r.Padding = max(size-n-4, 1)
			return r
		}
	case TypePlayerRequest, TypeRulesRequest:
		n += 4
	}
	r.Padding = max(size-n, 0)
	return r
}

// AppendBinary appends the request, header included. An A2S_INFO request
// carries "Source Engine Query\0" and then the challenge if HasChallenge
// is set; A2S_PLAYER and A2S_RULES always carry four bytes, AskChallenge
// (-1) when HasChallenge is not set. Padding zero bytes follow; the whole
// request must fit in MaxPacketSize.
//
// The four bytes after the A2S_INFO payload are its challenge whenever
// they are there, so an A2S_INFO request without a challenge but with
// Padding puts AskChallenge in that place before the padding, as
// A2S_PLAYER does: zeros there would read as challenge 0.
func (r Request) AppendBinary(b []byte) ([]byte, error) {
	if r.Padding < 0 || r.Padding > MaxPacketSize-len(infoQuery)-10 {
		return b, fmt.Errorf("%w: padding %d", ErrTooLarge, r.Padding)
	}
	out := wire.AppendUint32(b, HeaderSimple)
	out = append(out, r.Type)
	switch r.Type {
	case TypeInfoRequest:
		out = wire.AppendString(out, infoQuery)
		if r.HasChallenge {
			out = wire.AppendUint32(out, r.Challenge)
		} else if r.Padding > 0 {
			out = wire.AppendUint32(out, AskChallenge)
		}
	case TypePlayerRequest, TypeRulesRequest:
		c := AskChallenge
		if r.HasChallenge {
			c = r.Challenge
		}
		out = wire.AppendUint32(out, c)
	case TypePingRequest, TypeChallengeRequestLegacy:
	default:
		return b, fmt.Errorf("%w 0x%02x for a request", ErrUnexpectedType, r.Type)
	}
	for range r.Padding {
		out = append(out, 0)
	}
	return out, nil
}

// ParseRequest parses a client query, for servers. Bytes after the known
// fields are counted in Padding, never rejected (Valve's protocol page
// warns that data may be appended to requests in the future). The four
// bytes after an A2S_INFO payload, or after an A2S_PLAYER/A2S_RULES type
// byte, are the challenge, as the protocol lays them out; HasChallenge is
// false when they are missing or are AskChallenge (-1). Fewer than four
// bytes after the A2S_INFO payload are Padding. An A2S_INFO request must
// carry "Source Engine Query" (its NUL may be missing at the very end of
// the packet).
//
// The result re-encodes with [Request.AppendBinary] to a request that
// parses the same, though not always to the same bytes.
func ParseRequest(b []byte) (Request, error) {
	r, t, err := openSimple(b, "request", "TUViW")
	if err != nil {
		return Request{}, err
	}
	req := Request{Type: t}
	if t == TypeInfoRequest {
		rest := r.Rest()
		if !strings.HasPrefix(string(rest), infoQuery) {
			return Request{}, parseErr("request", r.Offset(), fmt.Errorf("%w: A2S_INFO payload is not %q", ErrMalformed, infoQuery))
		}
		_ = r.Skip(len(infoQuery))
		if r.Len() > 0 {
			if c, _ := r.Uint8(); c != 0 {
				return Request{}, parseErr("request", r.Offset()-1, fmt.Errorf("%w: A2S_INFO payload is not %q", ErrMalformed, infoQuery))
			}
		}
	}
	if t != TypePingRequest && t != TypeChallengeRequestLegacy {
		if c, err := r.Uint32(); err == nil && c != AskChallenge {
			req.Challenge, req.HasChallenge = c, true
		}
	}
	req.Padding = r.Len()
	return req, nil
}
