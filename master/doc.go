// Package master speaks Valve's master server query protocol over UDP, as
// the Valve Developer Community wiki page "Master Server Query Protocol"
// describes it, on both sides: a [Client] that lists a master's servers
// and a [Server] that lists a fleet's.
//
// A query is one datagram: 0x31, a region byte, a seed address as text
// ("IP:port") and a filter in the language of package serverlist, each
// string ended by a NUL:
//
//	31 FF "0.0.0.0:0" 00 "\appid\730\empty\1" 00
//
// A reply is FF FF FF FF 66 0A and then 6-byte entries, an IPv4 address
// and a big-endian port each, about 231 to a datagram. The first query
// carries the seed 0.0.0.0:0; each next one carries the last address of
// the previous reply, on the same socket ("whenever you open a new
// socket… the Master Server will always send you the first batch"), until
// a reply ends with the entry 0.0.0.0:0. [Page] is the one paging rule of
// this package's server and of the fake master.
//
// Valve's own masters (hl2master.steampowered.com:27011, and the GoldSrc
// one on 27010 before it) no longer answer: the name stopped resolving in
// February 2026, and the Steam Web API (package steamapi) is how Steam
// games are listed today. Community masters for GoldSource and Xash3D
// speak this protocol still, and a gsq master lists a private fleet the
// way a public one is listed.
//
// # Conversation
//
// A listing is a [Conversation] with a2s.Conversation's surface, run on
// the shared UDP client transport (internal/udpclient): one request in
// the air at a time, each reply making the next request due at once,
// built from the reply's last address: many replies may answer one
// request (a master that sends its whole list at once), and each moves
// the listing on. The replies carry no request id, so a late reply is
// told by its last address, and two listings of one master must not
// share a socket at once: [Client] runs one listing per master at a
// time. A listing is bounded by pages
// (MaxPages), addresses (MaxAddresses) and time (Deadline); repeated
// addresses are dropped, and a master that pages without progress is
// given up on ([ErrStalled]).
//
// # Amplification
//
// A query of 13 bytes and more earns a reply of up to 1,392 bytes, and
// the protocol has no challenge: a spoofed query would make a master
// reflect a hundred times its size at its victim. The [Server] answers
// only well-formed queries, pages at most PageSize entries, and budgets
// the pages it sends per source address (30 a minute by default, the
// budget Valve's master kept) and in all, so what any one address can be
// sent, spoofed or not, has a ceiling whatever the queries: 41,760 bytes
// at once (30 pages, for 390 bytes of queries: 107 times), then 696
// bytes a second, 83,520 bytes in the first minute; a flood earns no
// more (0.11 times what it sends, at a thousand queries a second). The
// global budget caps the server at 139 KB/s whatever the sources.
// FuzzServerHandlePacket checks the per-source ceiling and that nothing
// but a well-formed query is answered; TestServerAmplification logs the
// figures.
//
// It uses the standard library, package serverlist and the module's
// internal helpers only.
package master
