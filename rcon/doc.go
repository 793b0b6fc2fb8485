// Package rcon implements the Source RCON protocol (Valve, SRCDS and the
// many games that reuse it) and its Minecraft variant, as described in
// shared/specs/source-rcon.txt and shared/specs/minecraft-rcon.txt, with
// the real-server quirks collected in shared/notes/rcon-field-notes.md.
// It uses the standard library only.
//
// # Codec
//
// [Packet], [ParsePacket] and [Reader] encode and frame packets. Every
// size field is checked against a limit ([DefaultMaxPacketSize] unless
// configured) before anything is allocated; bodies keep embedded NULs and
// bad padding is tolerated.
//
// # Client
//
// [Dial] and [NewClient] log in and return a goroutine-safe [Client] whose
// [Client.Exec] runs one command and returns its whole output, however many
// packets it spans. How the end of an answer is detected depends on the
// [Dialect] and the game [Profile] (see [Terminator]): SRCDS gets an empty
// probe packet after each command, Minecraft stops at a short fragment and
// probes only after a full one, CS2 and Factorio answer with one packet,
// and unknown servers can be read until a quiet period passes. Unsolicited
// packets (Squad chat, Rust console lines) go to [Client.Events].
//
// Commands are serial by default: each waits for the previous one, and
// reads its own answer from the socket in its own goroutine, so a round
// trip costs no goroutine hand-over. A connection left idle is read in
// the background, so events still arrive and a dropped connection is
// noticed. [Options].Pipeline keeps several Source commands in flight on
// one connection instead, with a reader goroutine matching answers by id.
//
// Output text is returned raw: UTF-8, or Latin-1 when the bytes are not
// valid UTF-8 (old CraftBukkit sends a bare 0xA7 for §). Package
// rcon/mctext renders or strips Minecraft § colour codes.
package rcon
