// Package slp implements Minecraft Java Edition's Server List Ping, the
// status protocol of the game's server list on the game's TCP port
// (25565), and the legacy pings that servers up to 1.6 answer, as
// wiki.vg's "Server List Ping" page describes them, with what the
// decompiled vanilla server does where the page is silent.
//
// A status exchange is a handshake naming the status state and a status
// request, sent in one write; the server's status response, a String of
// JSON read by its VarInt length prefix across as many reads as it takes;
// and a ping whose pong times the round trip. The vanilla server answers
// one status per connection and closes after the pong; it closes right
// after the handshake when enable-status is off or it is still starting,
// which [Client] reports as [ErrNoStatus]: up, but not answering status.
// Proxies (Velocity, BungeeCord) close after the status; the round trip is
// then the status's.
//
// The JSON is read leniently into a [Status]: the description as a
// string, a chat component or an array ([Description.Text] flattens it,
// § codes through rcon/mctext), counts that are negative or missing, a
// player sample whose made-up entries are marked, the favicon's hash and
// size (the image on request), the chat flags, Forge's modinfo and
// forgeData (its compressed d included) and NeoForge's flag. Bytes after
// the JSON string in the same packet (the Better Compatibility Checker
// mod's) are kept raw, never read as JSON.
//
// The legacy pings (FE, FE 01 and 1.6's FE 01 FA MC|PingHost) are sent
// only when asked ([LegacyOnly]) or when a modern attempt fails the way an
// old server fails ([LegacyFallback], the default); modern servers answer
// them with protocol 127, which [LegacyStatus.Modern] reports.
//
// [Client.StatusHost] follows the _minecraft._tcp SRV record as the
// vanilla client does: only when no port is given, by priority and weight,
// with the SRV target named in the handshake. A PROXY protocol header (v1
// or v2) can go first, for servers behind HAProxy or TCPShield.
//
// [Server] answers as the vanilla server does, with a [Handler], and caps
// connections per source, their life and their packets' size. The package
// uses the standard library and the module's internal helpers only.
package slp
