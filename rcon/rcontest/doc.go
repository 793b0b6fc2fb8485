// Package rcontest provides fake RCON servers for tests, in the manner
// of net/http/httptest, together with a simulated command handler and a
// bare packet-level client.
//
// A [Server] listens on a loopback port and imitates one real server
// ([Profile]: srcds, cs2, minecraft, factorio, palworld, conan, squad,
// ark, rust-legacy, gomc), byte for byte where the quirks are known: the
// Valve Developer Community page "Source RCON Protocol" and wiki.vg's
// "RCON" page for the protocols, and for each game what the projects
// that talk to its servers report (each profile says). A profile stands
// for data, a [Behaviour] (how requests are read, how output is split,
// how probes and wrong passwords are answered, which ids replies
// carry...), which a test may change to compose a server no profile
// imitates. [Faults] add transport faults on top: segments split anywhere
// (inside size words too), coalesced answers, delays, swallowed commands
// and connections dropped mid-packet. A [Server.Script] drives each
// connection packet by packet through a [Conn] for what no behaviour
// says, and may hand it back to the behaviour. [Server.Received],
// [Server.Dropped], [Server.Hangups] and [Server.Accepted] count what
// happened. A Server serves any net.Listener, such as the in-memory ones
// of package console/consoletest, on which tests of timing run in a
// testing/synctest bubble.
//
// [SimHandler] implements the built-in commands status, players, list,
// echo, say, big N and help; it serves both this package's Server and
// [rcon.Server]. [RawConn] writes and reads single packets for tests that
// need exact control over the bytes on the wire.
//
// This package ships inside the gsq binary: `gsq serve` and `gsq demo`
// answer RCON commands with its SimHandler, so it is held to the same
// standards as the library (no panics, bounded memory), and it uses the
// standard library only.
package rcontest
