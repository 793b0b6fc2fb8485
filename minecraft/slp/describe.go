package slp

import (
	"fmt"
	"strings"
)

// Describe names the packets of a Server List Ping write or read in a few
// words, for gsq's --debug hex dumps: a handshake and a status request
// sent in one write read "handshake (...); status request". It reads the
// bytes alone, without the direction, so it tells a handshake from a
// status response by their fields.
func Describe(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	var parts []string
	if _, n, err := ParseProxyHeader(b); err == nil {
		parts = append(parts, "PROXY header")
		b = b[n:]
	}
	switch {
	case len(b) > 0 && b[0] == 0xFE:
		if p, _, err := ParseLegacyPing(b); err == nil {
			return strings.Join(append(parts, "legacy ping ("+p.Variant.String()+")"), "; ")
		}
		return strings.Join(append(parts, "legacy ping (malformed)"), "; ")
	case len(b) > 0 && b[0] == 0xFF:
		if s, err := ParseLegacyReply(b); err == nil {
			what := "legacy reply"
			if s.Modern() {
				what += ", protocol 127 (a 1.7+ server)"
			}
			return strings.Join(append(parts, what), "; ")
		}
		return strings.Join(append(parts, "legacy reply (malformed)"), "; ")
	}
	for len(b) > 0 && len(parts) < 8 {
		p, n, err := ParsePacket(b, len(b))
		if err != nil {
			parts = append(parts, fmt.Sprintf("%d bytes that are not a whole packet", len(b)))
			break
		}
		parts = append(parts, describePacket(p))
		b = b[n:]
	}
	return strings.Join(parts, "; ")
}

// describePacket names one framed packet by its id and fields.
func describePacket(p Packet) string {
	switch p.ID {
	case IDHandshake: // the status request and response share the id
		if len(p.Data) == 0 {
			return "status request"
		}
		if h, err := ParseHandshake(p.Data); err == nil && h.NextState >= NextStatus && h.NextState <= NextTransfer {
			return fmt.Sprintf("handshake (protocol %d, %s:%d, next state %d)", h.Protocol, h.Host, h.Port, h.NextState)
		}
		if l, n, err := ConsumeVarInt(p.Data); err == nil && int(l) <= len(p.Data)-n {
			what := fmt.Sprintf("status response, %d bytes of JSON", l)
			if rest := len(p.Data) - n - int(l); rest > 0 {
				what += fmt.Sprintf(" and %d after it", rest)
			}
			return what
		}
	case IDPing: // and IDPong
		if v, err := ParsePing(p.Data); err == nil {
			return fmt.Sprintf("ping or pong, payload %d", v)
		}
	}
	return fmt.Sprintf("packet 0x%02x, %d bytes", p.ID, len(p.Data))
}
