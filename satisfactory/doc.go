// Package satisfactory speaks Satisfactory's Lightweight Query API, the
// UDP query its dedicated servers answer on the game port (7777 by
// default) since version 1.0, on both sides: a [Client] that polls a
// server's state and name, and a [Server] that answers polls.
//
// Satisfactory never had RCON or A2S. Its official routes are this query
// and an HTTPS API (Bearer tokens, a self-signed certificate by default),
// which needs a login even to read the player count; this package does
// the UDP query only. Its layout is the one gamedig's satisfactory.js
// reads and the official "Lightweight Query API" page describes (the
// field notes, section 2.1); every number is little-endian:
//
//	poll:  D5 F6 | 00 PollServerState | 01 version | cookie u64 | 01
//	reply: D5 F6 | 01 ServerStateResponse | 01 version | cookie u64 |
//	       state u8 | NetCL u32 | flags u64 | n u8 | n × (id u8, version u16) |
//	       name length u16 | name (UTF-8) | 01
//
// The reply echoes the poll's cookie, which is how a [Conversation] tells
// the answer to its poll (and to which of its polls) from any other
// datagram. The state is 0 offline, 1 idle (no session loaded), 2
// loading (preparing the world) or 3 playing.
//
// The official text warns against polling a dead server for long ("you
// might end up triggering anti-DDoS measures"): a poll is resent twice
// at most by default, and a Client gives up within 5 seconds.
//
// # Amplification
//
// A 13-byte poll earns a reply of 29 bytes and the name's length, with no
// challenge: the [Server] answers only a well-formed poll, caps a reply at
// MaxReplySize (512 bytes by default), and budgets its replies per source
// and in all, as package master's server does (internal/udpserve's
// Budget).
//
// It uses the standard library and the module's internal helpers only.
package satisfactory
