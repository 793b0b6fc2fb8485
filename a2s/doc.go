// Package a2s implements Valve's server query protocol (A2S) for Source and
// GoldSource game servers, client and server side, as the Valve Developer
// Community wiki page "Server queries" describes it. The codec (this file's neighbours: info.go, player.go,
// rules.go, request.go, challenge.go, ping.go, split.go) is pure: it takes
// and returns byte slices and never touches a socket, a clock or a logger.
// It uses the standard library only.
//
// # Messages
//
// Every message starts with a four-byte header: 0xFFFFFFFF for a message in
// one datagram, 0xFFFFFFFE for a fragment of a split reply. The parsers
// ([ParseInfo], [ParsePlayers], [ParseRules], [ParsePing],
// [ParseChallenge], [ParseRequest]) take the whole message, header
// included, of any size up to 64 KiB (Rust and Unreal games send unsplit
// datagrams far above 1400 bytes). Every read is bounds-checked: bad input
// gives a [*ParseError] carrying the offset and wrapping a sentinel such as
// [ErrTruncated], never a panic. Parsed values never alias the input.
// Encoders are append-style (AppendBinary) and allocate nothing when the
// buffer has room. [ParseHeader] routes a datagram without parsing it.
//
// Strings are [Text]: the raw bytes the server sent. Names prefixed with
// 0x01 bytes, invalid UTF-8 and Arma 3/DayZ binary rules all survive; use
// [Text.UTF8] for display.
//
// # Challenge
//
// Since December 2020 a server may answer any query with an S2C_CHALLENGE
// ('A') reply; the client repeats the query with the four challenge bytes
// appended ([Request.Challenge]). A2S_PLAYER and A2S_RULES send
// [AskChallenge] (-1) to ask for one. The deprecated
// A2S_SERVERQUERY_GETCHALLENGE ('W') request is supported for the engines
// that still need it. Challenges are opaque: they are echoed byte for byte.
//
// # Splits
//
// Replies too big for one datagram are split. [ParseFragment] reads one
// fragment and detects its header layout, [Reassembler] puts a reply back
// together and [SplitWriter] cuts one up. Three layouts exist:
// [SplitSource] (ID, total, number, size), [SplitSourceNoSize] (the same
// without size, sent by pre-Orange Box engines and by bzip2-compressing
// ones) and [SplitGoldSource] (ID and one byte number<<4|total). The format
// is not announced, so it is detected from fragment 0: the nested
// 0xFFFFFFFF header at offset 12, 10 or 9, the "BZh" bzip2 signature at
// offset 20 or 18, or a reply type byte where the nested header would be.
// Later fragments are re-read with fragment 0's format. Fragments may
// arrive in any order, twice, or interleaved with another reply's.
// Compressed replies (bit 31 of the ID) are decompressed after checking the
// announced size against a limit, with the output capped while
// decompressing, and their CRC32 checked.
//
// # Quirks handled
//
//   - A2S_INFO: Source 'I' with every EDF field; The Ship's extra fields
//     when the AppID is 2400, from the 16-bit field or from the GameID;
//     [Info.AppID] derived from the 64-bit GameID (the 16-bit field is 0 on
//     most modern games); [Info.PlayerCounts] honours Rust's "cp<N>" and
//     "mp<N>" keywords for servers above 255 slots; server type 0 (Rag Doll
//     Kung Fu, SiN 1); a VAC byte other than 0 or 1 (seen on a DayZ server
//     that left the byte out) is an error rather than a shifted, garbage
//     result.
//   - GoldSource 'm' A2S_INFO: some servers (Sven Co-op, non-Steam builds)
//     set the Mod byte but omit the mod section. The section is read only
//     when more than the two trailing bytes (VAC, bots) remain after the
//     Mod byte; [Info.IsMod] keeps the flag either way, and [Info.Mod] is
//     nil when the section is absent. Server type and environment letters
//     are normalised to lower case.
//   - A2S_PLAYER: entries are read to the end of the packet whatever the
//     count byte says; scores are signed and durations may be negative;
//     The Ship's trailing deaths/money block is found by its exact length
//     (8 bytes per entry, and not readable as more entries), not by AppID.
//   - A2S_RULES: an ordered list keeping duplicates and binary names and
//     values; a reply cut inside an entry returns the entries before it
//     plus an error wrapping [ErrTruncated].
//   - A2A_PING: both the Source ("00000000000000") and GoldSource (empty)
//     replies.
//   - Requests: A2S_INFO with or without challenge and with trailing
//     padding, as Valve's anti-amplification proposal allowed.
//
// # Conversation
//
// [Conversation] is the client side of one exchange with one server, as a
// state machine that does no I/O and reads no clock: its driver sends the
// requests it hands out, feeds it the server's datagrams and calls its Tick
// when the time it asks for comes ([Conversation.Wake]). Every query of
// [Client], and every server of the scan engine (package scan), is one. It
// follows the challenge protocol on every section, one section at a time
// until the challenge is known and then every section left at once; it
// resends unanswered requests ([Options.Timeout], [Options.Retries]) within
// [Options.Deadline]; and it tells the ways a query fails apart: no answer
// ([ErrTimeout]), a closed port ([ErrUnreachable], when the driver learns
// of the ICMP error), an answer that is not A2S ([ErrNotA2S]), a malformed
// reply ([*ParseError], and the split errors such as
// [ErrDecompressedTooLarge]), a refusal ([*BannedError]).
//
// # Client
//
// [Client] queries servers over one UDP socket shared by every query and
// goroutine; one read loop hands each datagram to the queries of the
// server that sent it, and each query runs its conversation on its own
// goroutine, so that one server's decompression bomb costs its own query
// and holds up no one else. [Client.Query] asks for several sections in
// one conversation; Info, Players, Rules and Ping ask for one. The
// challenge is cached per server. With the defaults an unanswered request
// is resent after 1 s and then 1.5 s, and a query takes at most 5 s
// ([Client.Deadline]). On Linux the socket learns of ICMP errors per
// destination (IP_RECVERR), so a closed port fails its query after one
// datagram. A GoldSource server that answers A2S_INFO with both 'm' and
// 'I' has both replies collected within [Client.GoldSourceGrace] and
// exposed in [InfoResult]. Datagrams of up to 64 KiB are read whole.
//
// # Server
//
// [Server] answers A2S for a Go game server through a [Handler], such as
// [StaticHandler], which serializes its content once per change. By default
// it challenges every query with a stateless HMAC of the source address
// and a time bucket, and until a request carries a valid challenge it never
// sends more bytes than the request had. Requests are rate-limited per
// source IP with a token bucket, long replies are split in the Source or
// GoldSource format, and [Server.HandlePacket] lets one socket serve A2S
// beside other protocols (gsq serves OGP on the same port).
package a2s
