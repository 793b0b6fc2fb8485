// Package ogp implements the Open Game Protocol (OGP) v0.91 over UDP, the
// binary query protocol that Timo Stripf and Tobias Oetzel specified in
// 2003-2004 (section numbers such as "spec 3.4" refer to the OGP v0.91
// specification): the codec for every structure of the spec (header, Ping, Default Query v1 request and answer with SERVERINFO,
// TEAMLIST, PLAYERLIST, RULELIST, ADDONLIST and LIMITLIST, StringColorInfo,
// the VarBitArray, VarUINT8-32 and VarSINT8-32 types, error answers 0-4 and
// the Master Server Uplink answer), a [Conversation] and a [Client], and a
// [Server] with a [Handler]. The ogptest package holds a fake server for
// tests.
//
// The package uses the standard library only. Decoders take a []byte,
// check every length a peer sends before allocating, never panic, and
// report malformed input as a [*ParseError]; encoders append to a []byte.
//
// # Dialects
//
// v0.91 is the project's contract and the default ([V091]). The servers
// still deployed (Onset, the Mount & Blade: Warband WSE plugin) run the
// later official SDK, whose layout differs; [V1] speaks it:
//   - VarUINT8-32: literal 0..0xFD, 0xFE then UINT16, 0xFF then UINT32
//     (v0.91: literal 0..0xFE, 0xFF then UINT16, and 0xFFFF in that UINT16
//     then UINT32). VarSINT8-32: literal -0x7E..0x7F, 0x80 then SINT16,
//     0x81 then SINT32 (v0.91: literal -0x7F..0x7F, 0x80 then SINT16,
//     -0x8000 in it then SINT32).
//   - ServerInfoFields: 0.2 is HostName and 1.0 Mod, 1.1 GameType, 1.2
//     GameMode, 1.3 Map, 1.4 NextMap. [InfoFields] values are always the
//     v0.91 positions; the codec moves the bits.
//   - SERVERINFO order: GameName, ServerFlags, HostName [+colour],
//     ConnectPort, ModName [+ ModFields and its fields when ModName is not
//     empty], GameType, GameMode, [MapFields, then the map, then the next
//     map when bNextMap, both with the MapFields fields], the counts. The
//     query carries [ModFields] after ServerInfoFields when bMod is asked
//     and [MapFields] when bMap is. Bit x of those masks is the x-th field
//     of the order above, and MapName is always sent in the map block.
//   - ServerFlags: bits 0.0-0.1 server type (1 listen, 2 dedicated), 0.2
//     password, 0.3 proxy, 0.4-0.6 OS (v0.91: 0.0 dedicated, 0.1 proxy,
//     0.2-0.5 OS).
//   - HeadFlags bit 0.4 is bUTF8: the V1 client sets it and the V1 server
//     then answers in UTF-8 and otherwise transcodes to Latin-1 ('?' for
//     what Latin-1 cannot hold). In v0.91 the bit is "(bPassword)" with no
//     field; this package never sets it there and reads no field for it.
//   - PlayerFields 3.0 is PlayerAddress, a VarUINT length and that many raw
//     bytes ([Player.Address]), instead of the UINT32 PlayerIPv4.
//
// # How this package reads the ambiguous parts of v0.91
//
// The specification leaves some points open; the SDK and the clients that
// followed it agree on these readings:
//
// HeadSize counts from the HeadSize byte itself to the first body byte, in
// queries and answers alike, without the 8-byte FF FF FF FF "OGP\0"
// prefix: the body starts at 8+HeadSize. A parser requires HeadSize >= 3,
// fails when the fields the flags announce run past it, and skips any
// extra header bytes (that is what HeadSize is for).
//
// VarBitArray bit "n.x" is bit x (value 1<<x) of byte n; bit 7 of a byte
// says another byte follows, and absent bytes are zero. Writers emit the
// shortest form; readers accept padding up to 16 bytes. Multi-bit fields
// (the OS, LimitType) are read LSB-first within their byte. Here bit n.x is
// bit n*7+x of a uint64.
//
// The answer's own masks drive the parse: its RequestFlags, and within a
// section the echoed ServerInfoFields, TeamFields, PlayerFields and
// AddOnFields, never what the client asked for. A list's field mask is
// present only when its count is not 0. A bit whose layout is unknown
// stops the parse with [ErrUnknownField] and keeps the sections before
// it. A list whose mask is empty has entries of zero bytes: its count is
// kept (up to 65535) and no entries are built.
//
// StringColorInfo: ColorValue16 (RGB565) follows a ColorValue iff
// 0x90 <= ColorValue <= 0x9F (the spec's "OR" would be always true).
// ColorSize is a byte length; the entries are parsed inside exactly that
// many bytes, and a malformed colour list is dropped for that one string
// while parsing continues after it. Codes 0x20..0x2F select background
// colour ColorValue&0x0F (the spec's "ColorValue-16" is read so).
// DeltaPosition counts characters of the decoded string.
//
// Split answers: each datagram has its own header; fragment 0 alone
// carries the challenge. SplitPacketCount and SplitPacketNo (INT8 in the
// spec) are read unsigned; the body is the concatenation of the fragment
// bodies in SplitPacketNo order, cut at any byte, so it is parsed only
// once complete. The client keys fragments by RequestID, ignores
// duplicates (first wins), rejects a count of 0, a number not below the
// count, and fragments that disagree on the count, and caps the total.
// The server splits only what does not fit the client's MaxBytesPerPacket
// (1400, the spec's default, when the query has no bSplit) and always
// sends a RequestID with a split answer.
//
// Error 3 (invalid challenge): the body after the ErrorValue is a complete
// query datagram (prefix, header holding the new challenge, original
// body), the "copy of the request" the client must send back; the outer
// header holds the new challenge too. A server that omits either is still
// understood: the client takes the challenge from the outer header or,
// failing that, from the copy, but rebuilds the query itself, so it never
// transmits bytes the peer chose, and sends it only to the address the
// error came from. Other error values carry exactly one body byte.
//
// Challenge: a challenge flag in any answer means "this is the current
// challenge" (the SDK sets it on every answer to a query that had the
// flag); only error 3 means it was rejected. Clients ask with challenge 0,
// in a Ping or in the query itself; a query without the challenge field
// is answered with error 3 as well ("if the number is wrong or you don't
// specify one, you'll get one").
//
// # Client
//
// A query is a [Conversation], the sans-IO state machine that package a2s
// has too: [Client] drives one per call on its shared socket, and the
// scan engine thousands at once, paced, on its own. The request always
// carries the challenge flag (0 until the challenge is known; the client
// caches it per server), a random non-zero RequestID, and in Default
// Queries bSplit with MaxBytesPerPacket 1400. The conversation accepts
// only answers from the target address with its RequestID and the
// query's type or 0xFF, re-challenges on error 3 at most three times,
// resends an unanswered request after 1 s, then 1.5 s and 2.25 s (Retries
// 2 by default), within a 5 s Deadline, and caps reassembled answers.
//
// Every error of a call is an [*OpError] ("ogp: query 127.0.0.1:7776:
// timeout after 3 attempts") wrapping a [*CallError], whose [Stats] say
// how many datagrams the call sent, resent and re-challenged; a [Result]
// carries the same Stats. A timeout is a [net.Error] matching
// [ErrTimeout] and [os.ErrDeadlineExceeded]. When the answer parses only
// in the other dialect, or the server rejects with error 4 a query whose
// layout differs between the dialects, the error wraps a [*DialectError]
// that names the dialect the server seems to speak.
//
// # Server
//
// The [Server] answers exactly the fields both the query and the [Handler]
// name, echoing the masks. It answers Ping without a challenge and needs
// a valid challenge for Default Queries: a query with none or a wrong one
// gets error 3 with the copy of the request, as the specification says,
// so a client written from the specification alone can send the copy back
// and get its answer. It answers error 0 to banned addresses, error 1 to
// unknown types (0x02 Rcon included), error 2 to a MaxBytesPerPacket
// outside 500..1500 (V1: below 500) and error 4 to a Default Query whose
// body does not parse, whatever its challenge. Answer-only types and
// answers are ignored.
//
// Amplification: before a request proves its challenge, the server never
// answers with more than the request plus 32 bytes, nor with more than
// three times the request (QUIC's anti-amplification limit, RFC 9000
// section 8), and always in one datagram. Error 3 fits by construction:
// it is the request, 4 bytes of challenge if the request had none, and a
// header of at most 20 bytes. Each source address is rate limited.
//
// Other readings: PlayerIPv4 is a little-endian UINT32 like every UINTx, so
// a.b.c.d is the number a<<24|b<<16|c<<8|d; an empty MapFile means "same
// as the map name"; OS and LimitType values outside the listed ones are
// kept as numbers; a Ping has no body and its answer's body is ignored.
package ogp
