// Package rcontest provides fake RCON servers for tests, in the manner
// of net/http/httptest, together with a simulated command handler and a
// bare packet-level client.
//
// A [Server] listens on a loopback port and imitates one real server
// ([Profile]: srcds, cs2, minecraft, factorio, palworld, conan, squad,
// ark, rust-legacy), byte for byte where the quirks are known, following
// shared/specs/source-rcon.txt, shared/specs/minecraft-rcon.txt and the
// field notes in shared/notes/rcon-field-notes.md (each profile cites its
// section). [Faults] add transport faults on top: segments split anywhere
// (inside size words too), coalesced answers, delays, swallowed commands
// and connections dropped mid-packet.
//
// [SimHandler] implements the built-in commands status, players, echo,
// say, big N and help; it serves both this package's Server and
// [rcon.Server]. [RawConn] writes and reads single packets for tests that
// need exact control over the bytes on the wire.
//
// The package uses the standard library only.
package rcontest
