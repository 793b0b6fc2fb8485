// Package rcontest provides fake RCON servers for tests, in the manner
// of net/http/httptest, together with a simulated command handler and a
// bare packet-level client.
//
// A [Server] listens on a loopback port and imitates one real server
// ([Profile]: srcds, cs2, minecraft, factorio, palworld, conan, squad,
// ark, rust-legacy, gomc), byte for byte where the quirks are known: the
// Valve Developer Community page "Source RCON Protocol" and wiki.vg's
// "RCON" page for the protocols, and for each game what the projects
// that talk to its servers report (each profile says). [Faults] add
// transport faults on top: segments split anywhere (inside size words
// too), coalesced answers, delays, swallowed commands and connections
// dropped mid-packet. [Server.Received], [Server.Dropped] and
// [Server.Hangups] count what happened.
//
// [SimHandler] implements the built-in commands status, players, list,
// echo, say, big N and help; it serves both this package's Server and
// [rcon.Server]. [RawConn] writes and reads single packets for tests that
// need exact control over the bytes on the wire.
//
// The package uses the standard library only.
package rcontest
