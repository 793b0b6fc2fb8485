// Package rcon implements the Source RCON protocol (Valve's, spoken by
// SRCDS and the many games that reuse it, as the Valve Developer Community
// page "Source RCON Protocol" describes it) and its Minecraft variant
// (wiki.vg, "RCON"), as client and as server. It uses the standard
// library only.
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
// [Dial] and [NewClient] log in and return a goroutine-safe [Client], a
// console.Session: [Client.Exec] runs one command and returns its whole
// output, however many packets it spans; [Client.Do] also says how many
// packets it took and the round-trip time; [Client.Send] writes a command
// and does not wait for its answer; and [Client.Events] delivers what the
// server says unasked. Errors are [*OpError]s naming the operation and the
// server; a timeout is a net.Error matching [ErrTimeout] and
// os.ErrDeadlineExceeded; [ErrAuthFailed], [ErrTimeout] and
// [ErrClientClosed] also match console.ErrAuthFailed, console.ErrTimeout
// and console.ErrClosed, as every console's errors do.
//
// # One mechanism
//
// Every command takes one path (Client.run), into one of two modes:
// serial (the default), where each command reads its own answer, and
// pipelined ([Options].Pipeline), where a reader goroutine routes answers
// to the commands in flight by id. Both find the end of an answer with a
// console.Terminator, which they consult at each packet, at each quiet
// period it asks for, at the reply to its end marker (the probe below)
// and at a connection lost between packets. The client's own Terminator
// is what finds out how the server behaves (below): a [Profile] or the
// [Dialect] seeds what it knows; [Options].Terminator replaces it with
// another, such as console.QuietPeriod for a server nothing else works
// with.
//
// # Right without being told
//
// Game servers bend the protocol in ways a client cannot know in
// advance, and a wrong guess hangs or garbles. With zero [Options] the
// client finds out from what the server does, and adapts for the rest of
// the client's life (reconnections meet the same server); Options.Logf
// receives a note for each thing it finds out. A [Profile] says the same
// in advance, which spares the first commands of a connection the tests
// below.
//
//   - The login. A reply of id -1 is a wrong password ([ErrAuthFailed]),
//     and so is a connection closed before the login is answered (Squad
//     closes it about 250 ms after a wrong password; the error then also
//     matches [ErrConnClosed]). A server that stays silent (ARK, for a
//     wrong password) costs Options.Timeout, 5 s by default, then
//     [ErrNoAuthResponse]. A login reply carrying an id other than the
//     request's (Palworld answers 0, old Conan Exiles 42, and so does
//     gorcon's test server) means that the server puts that id on its
//     replies: from then on such a reply belongs to the one command in
//     flight, and commands are serial.
//   - The end of an answer. SRCDS splits long output into several packets
//     and says nothing of where it ends, so Valve's workaround is a probe:
//     an empty RESPONSE_VALUE sent after the command, which SRCDS mirrors
//     after the answer's last packet, followed by an extra packet. The
//     first command of a connection goes out alone, and the probe only
//     once its answer's first packet has arrived, when the server has
//     read the command: servers that drop a request arriving while they
//     handle one (ARK) or that read only the first packet of each read
//     (legacy Rust) lose nothing. A probe that is not answered within the
//     probe wait, max(250 ms, 4 login round trips) after the last byte,
//     means the server ignores probes (Factorio, Palworld, legacy Rust),
//     which all answer with one packet: the answer ends at its first
//     packet from then on. A full SRCDS fragment (4086 bytes of output)
//     is always followed by more, so after one the client waits on; and a
//     reply to a probe it gave up on, should one come late, puts probes
//     back. A server that mirrored the probe gets its next
//     probe in the command's segment, one write for both, which saves a
//     round trip per command; if that probe goes unanswered (ARK drops
//     it), probes follow the answer's first packet from then on. A probe
//     answered "Unknown request 0" is a Minecraft server on another port:
//     Minecraft's rules apply.
//   - Minecraft. Vanilla cuts output every 4096 UTF-16 units, servers
//     built on go-mc every 4096 bytes (even inside a UTF-8 sequence): a
//     packet shorter than 4096 bytes is an answer's last. After a longer
//     one the client sends an empty command, which vanilla answers
//     harmlessly ("Unknown or incomplete command") and go-mc passes to its
//     handler, where a type-0 probe makes go-mc hang up; the answer ends
//     at its reply, waited for until the command's deadline. Two packets
//     are never written back to back, as vanilla drops the connection
//     when two arrive in one read. A Source-dialect connection whose
//     server hangs up on the probe after answering gets the answer whole,
//     and Minecraft's rules with the empty command from then on.
//   - Squad sends the probe's extra packet with a size field of 10 where
//     17 bytes follow; the 7 stray bytes are recognised and skipped (the
//     client's ids never begin a packet with them), so the stream stays
//     in step. Its type-1 packets go to [Client.Events]: chat lines as
//     console.KindChat events, with the channel, the player's name and
//     id; an admin's camera, warnings, kicks and bans as
//     console.KindAdmin; the others as console.KindLog.
//   - Legacy Rust (+rcon.web 0) is recognised by its type-4 console
//     lines, which go to Events as console.KindLog. Its answers end with an empty packet of
//     id -1, and its "say" is answered with id -1. It sends text as
//     single bytes, each UTF-16 unit cut to its low byte, until it gets a
//     packet of type 5: the client sends one, alone, before its next
//     command, and waits the probe wait before that command. The answer
//     during which the server was recognised may already have come in
//     single bytes; characters up to U+00FF survive that (as Latin-1),
//     others are lost on the server; Response.SingleByte marks that
//     answer. The rust-legacy profile sends the type-5 packet before the
//     first command.
//   - rcon++ sends an empty packet of id -1 every 30 s; from a server that
//     is not legacy Rust it is a console.KindHeartbeat event.
//   - A lost connection is dialled again and logged in to, in the
//     background, whatever the callers are doing (unless
//     Options.NoReconnect), with a console.Redialer: at once if the
//     connection had served, else after a pause that starts at 1 s and
//     doubles up to 30 s, and not again after a refused password until a
//     command asks. The idle reader notices a close, a keep-alive
//     ([Options].KeepAlive, on a timer no caller can block) a silent
//     peer, and a command that follows a pause first peeks at the socket
//     (on Unix); a command waits for the replacement within its deadline.
//     Commands in flight when it dropped fail and are never resent, as
//     they may have run.
//
// Commands are serial by default: each waits for the previous one, and
// reads its own answer from the socket in its own goroutine, so a round
// trip costs no goroutine hand-over. A connection left idle is read in
// the background, so events still arrive and a dropped connection is
// noticed. [Options].Pipeline keeps several Source commands in flight on
// one connection instead, with a reader goroutine matching answers by id;
// it takes the server to handle requests in order, as SRCDS does, so each
// command goes out with its probe.
//
// What the server says unasked never reaches a command: it goes to
// Events, which holds [Options].EventBuffer events for a reader that falls
// behind; beyond that events are lost, never waited for, and the next one
// delivered counts them (console.Event.Missed).
//
// A command's output is held once, in a buffer that never grows past
// Options.MaxResponseSize, so that limit bounds the memory an answer
// takes. Output is returned raw; [DecodeText] reads it as UTF-8, and the
// bytes that are not as Latin-1 (old CraftBukkit sends a bare 0xA7 for
// §). Package rcon/mctext renders or strips Minecraft § colour codes.
//
// # Server
//
// [Server] serves RCON in the Source, CS2 or Minecraft dialect; package
// rcon/rcontest has fake servers that imitate the quirks of real ones,
// for tests. The server's limits on connections follow the process's
// file descriptor limit (see [Server]).
package rcon
