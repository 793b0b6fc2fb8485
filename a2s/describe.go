package a2s

import "fmt"

// typeNames names the message types, for Describe.
var typeNames = map[byte]string{
	TypeInfoRequest:            "A2S_INFO request",
	TypeInfoReply:              "A2S_INFO reply (Source)",
	TypeInfoReplyGoldSource:    "A2S_INFO reply (GoldSource 'm')",
	TypePlayerRequest:          "A2S_PLAYER request",
	TypePlayerReply:            "A2S_PLAYER reply",
	TypeRulesRequest:           "A2S_RULES request",
	TypeRulesReply:             "A2S_RULES reply",
	TypePingRequest:            "A2A_PING request",
	TypePingReply:              "A2A_PING reply",
	TypeChallengeReply:         "S2C_CHALLENGE",
	TypeChallengeRequestLegacy: "A2S_SERVERQUERY_GETCHALLENGE (legacy)",
	TypeBannedReply:            "'l' refusal (banned)",
}

// Describe names datagram b for a person reading a packet dump, from its
// header and type byte: "A2S_INFO request", "split source fragment, id
// 0x1a, 1 of 3", or what is wrong with it ("runt datagram", "unknown
// header"). It reads no further.
func Describe(b []byte) string {
	h, typ, err := ParseHeader(b)
	switch {
	case len(b) < 4:
		return "runt datagram"
	case string(b) == "\xFF\xFF\xFF\xFF":
		return "empty simple packet"
	case err != nil:
		return "unknown header"
	case h == HeaderSplit:
		f, err := ParseFragment(b)
		if err != nil {
			return "malformed split fragment"
		}
		s := fmt.Sprintf("split %s fragment, id %#x, %d of %d", f.Format, f.ID, f.Number+1, f.Total)
		if f.Compressed {
			s += ", bzip2"
		}
		return s
	}
	if n, ok := typeNames[typ]; ok {
		return n
	}
	return fmt.Sprintf("unknown type %#02x", typ)
}
