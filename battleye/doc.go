// Package battleye implements BattlEye RCon, the remote console of DayZ,
// Arma 2 and 3 and Arma Reforger, as client and as server, from
// BattlEye's "BERConProtocol.txt" (v2, © 2011 BattlEye; a copy is in
// WoozyMasta/bercon-cli, pkg/bercon/spec) and the traps other clients
// fell into (console-field-notes.md §3). It uses the standard library
// only.
//
// # Codec
//
// Every datagram is 'B' 'E', a CRC32 (IEEE, little-endian) of everything
// from the following 0xFF on, 0xFF and a payload: [Packet],
// [ParsePacket] and [Packet.AppendBinary]. A [Reassembler] puts a
// multi-part answer back together, in any order, duplicates ignored,
// within [MaxParts] parts and a byte limit. [ParsePlayers], [ParseBans]
// and [ParseAdmins] read the tables of the usual commands.
//
// # Client
//
// [Dial] logs in and returns a [Client], a [console.Session]:
//
//   - The login is sent again every second while unanswered (a datagram
//     may be lost). A 0 is a wrong password, [ErrAuthFailed], never tried
//     again; silence until Options.Timeout is [ErrNoResponse] with
//     [ErrTimeout] (RCon disabled, or the server still loading its
//     mission); an ICMP port unreachable is [ErrUnreachable].
//   - Commands carry sequence numbers 0 to 255, wrapping, up to 256 in
//     flight; a number is reused only once its command is answered or
//     given up. A multi-part answer whose parts stop coming is asked for
//     again once (same sequence number; [Server] answers it again without
//     running the command twice) before [ErrIncomplete].
//   - Every server message is acknowledged at once by the reader, and
//     the server's re-sends of it (5 over 10 s until acknowledged) are
//     dropped by sequence number. Messages go to Events, typed: chat (with
//     its channel), players connecting and leaving, admins logging in.
//   - A keep-alive (an empty command) goes out whenever no command was
//     sent for Options.KeepAlive (30 s; the server forgets a client after
//     45 s), from a timer of the client's own that no caller can hold up.
//     A keep-alive unanswered, or a command that got no answer at all,
//     makes the client log in again, with backoff, on a new socket.
//   - Arma Reforger acknowledges a command with an empty reply and sends
//     the output later as server messages, after "Processing Command:".
//     The client finds this out by itself (a table command such as
//     "players" acknowledged empty, or that echo after an empty reply)
//     and then collects the messages following each command until
//     Options.AsyncQuiet passes without one; such commands run one at a
//     time, since only order tells their output from events.
//
// # Server
//
// [Server] answers the protocol for a Go program with a [Handler], as a
// real server does (Reforger's way too), with per-source rate limits,
// lockouts after wrong passwords, and no answer larger than the request
// (plus one byte) to a source that has not logged in. Package
// battleye/betest has fakes that add the faults of real networks and
// servers, for tests.
package battleye
