// Package sdtd implements the 7 Days to Die telnet console (the CLI calls
// it "--protocol telnet") as client and as server, from the game's own
// behaviour (the decompiled TelnetConnection and TelnetConsole, in
// console-field-notes.md §4). It uses the standard library only.
//
// The console is plain TCP with no telnet negotiation, no prompt and no
// end-of-answer marker. Lines end in "\r\n"; before the login every log
// line reaches a client as one NUL byte; after it, log lines go to every
// telnet client and answers only to the one that asked.
//
// # Client
//
// [Dial] returns a [Client], a [console.Session]:
//
//   - The login answers "Please enter password:" once. "Password
//     incorrect" is [ErrAuthFailed] and the password is never sent
//     again: 7DTD counts failures per address, blocks the address at
//     TelnetFailedLoginLimit, and a successful login does not reset the
//     count. A connection closed without a word is [ErrLockedOut] (the
//     address is blocked). The banner is kept ([Client.Banner]).
//   - An answer is framed without sleeps: it starts at the server's log
//     line "Executing command '<cmd>' by Telnet from <our address>" and
//     ends at the echo of a sentinel sent right after the command, an
//     unknown command "gsq-sentinel-N" whose number no other client uses.
//     The server runs one connection's commands in order, so nothing of
//     the command's answer comes after the sentinel's echo. (That order
//     is the notes' assumption, §8, not yet checked on a live server.)
//     Log lines in between ("<ISO time> <uptime> INF ...") go to Events,
//     typed where their form says: chat, players joining, leaving and
//     dying, commands others ran.
//   - Lines are cut at Options.MaxLineLength and answers bounded by
//     MaxResponseSize; NULs are dropped wherever they come.
//   - A connection silent for Options.KeepAlive is checked with a
//     sentinel; a lost one is logged into again with backoff, never with
//     a password the server refused.
//
// [ParsePlayers] reads the rows of "listplayers".
//
// # Server
//
// [Server] serves the console as the game does, for a Go program with a
// [Handler]; package sdtd/sdtdtest has fakes for tests.
package sdtd
