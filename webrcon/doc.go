// Package webrcon implements Rust's WebRCON, the default remote console of
// Rust servers (+rcon.web 1, rcon.port 28016), as client and as server:
// JSON messages in WebSocket text frames (RFC 6455) at
// ws://host:port/<password>, as Facepunch's reference client
// (Facepunch/webrcon) speaks it, with the traps console-field-notes.md §2
// collects. It uses the standard library only.
//
// # Why its own WebSocket framing
//
// github.com/coder/websocket v1.8.15 would do the framing, and well; it
// was weighed and left out, for three reasons. What WebRCON needs of RFC
// 6455 is small: unextended text frames, fragments, close, ping and pong,
// about 250 lines here, fuzzed ([FuzzReadFrame], [FuzzReadMessage]). What
// a client must do with Rust goes around any library: Rust answers a
// wrong password with a raw close frame where the HTTP response should
// be, which a library reports as a malformed handshake, and a fake that
// plays Rust must never answer pings and must write that frame itself,
// which a library forbids. And the protocol packages use the standard
// library only, so gsq's size caps and typed errors stay in one style.
// The cost avoided: coder/websocket adds about 180 KB to a stripped
// binary that already links net/http's client and server (go 1.26,
// linux/amd64, measured with a two-line program each way).
//
// # Client
//
// [Dial] returns a [Client], a [console.Session]:
//
//   - The password is the URL path, percent-encoded (a "/" or "?" in it
//     stays in the one segment). [PasswordRisk] names the characters
//     Rust admins are told to avoid (Facepunch/webrcon#9), and Dial
//     notes them through Options.Logf.
//   - A wrong password arrives as the close frame 88 02 03 E8 in place
//     of "HTTP/1.1 101": [ErrAuthFailed], never a protocol error. A port
//     that answers otherwise is [ErrNotWebRcon].
//   - Identifiers start at a random base per connection (above
//     Facepunch's 1000 console range) and count up; a reply is matched on
//     its Identifier alone, so Oxide servers, which send every reply to
//     every session, cannot hand one admin another's answer. Messages
//     that answer nothing of ours go to Events: console lines, Chat and
//     Report (JSON inside the JSON, decoded into typed events), players
//     joining and leaving, other sessions' replies.
//   - Rust never answers WebSocket pings, so the client sends none:
//     liveness comes from application traffic. When nothing has come for
//     Options.KeepAlive the client asks "serverinfo"; no reply within
//     Timeout, and it connects again (with backoff; a refused password is
//     never tried again).
//   - A command that prints nothing ("say") gets no reply. After
//     Options.SilentWait the client sends "echo <nonce>": Rust runs
//     console commands in order, so the echo's reply coming first means
//     the command was silent, and Exec returns "" then, not at its
//     deadline; a slow command ("server.save") still answers first.
//   - Frames and messages are capped (Options.MaxMessageSize, 16 MiB by
//     default, room for a 1 MB console.tail) before anything is
//     allocated.
//
// [ParseServerInfo] and [ParsePlayers] decode the JSON of "serverinfo"
// and "playerlist".
//
// # Server
//
// [Server] is an http.Handler that answers as Rust does, for a Go
// program with a [Handler]; package webrcon/webrcontest has fakes that
// play Rust and Oxide for tests.
package webrcon
