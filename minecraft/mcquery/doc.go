// Package mcquery implements Minecraft's Query protocol, the GameSpy 4
// (UT3) style status over UDP that a Java server answers when
// enable-query is on (query.port, by default the game port), as wiki.vg's
// "Query" page describes it; PocketMine, Nukkit and Geyser answer it too.
// It is the only way to the full player list and the plugin list.
//
// A query is a handshake, whose reply carries a challenge token (a
// decimal number, negative from PocketMine and Nukkit), and a stat
// request carrying the token: 11 bytes for the basic stat, exactly 15 for
// the full one (the vanilla server tells them apart by the datagram's
// length alone). Session ids are masked with [SessionMask] so that every
// byte is below 0x80: the vanilla server turns the id into a UTF-8 string,
// and a byte above would come back mangled. The server keeps tokens per
// source address and drops a stat with a stale one without a word (tokens
// live 0 to 30 s), so a [Conversation] handshakes again once after a
// silent stat.
//
// The package has the codec (requests, replies, [BasicStat], [FullStat]),
// a sans-IO [Conversation] with a2s.Conversation's surface, a [Client] and
// a [Server] with a [Handler], challenging and rate-limited per source. It
// uses the standard library and the module's internal helpers only.
package mcquery
