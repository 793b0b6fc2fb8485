// Package bedrock asks Minecraft Bedrock Edition servers for their status
// with RakNet's unconnected ping and pong over UDP (port 19132; 19133 for
// IPv6), as wiki.vg's "Raknet Protocol" and "Server List Ping" (Bedrock)
// pages describe them: a 33-byte ping carrying a time, RakNet's magic and
// the client's GUID, answered by a pong echoing the time with the server's
// GUID and a `;`-separated status string:
//
//	edition;motd;protocol;version;online;max;serverId;level;gameMode;gameModeId;portV4;portV6;
//
// Every field past the sixth is optional, and servers leave any of them
// empty (mcstatus' fixture has an empty version); the server id may be
// negative; the edition is MCPE, or MCEE for Education Edition. A pong is
// matched to its ping by the echoed time.
//
// The [Status] is the transport's answer, not RakNet's: [Client] fills it
// from the pong today, and a second [Transport] (the HTTP status that BDS
// 1.26 serves with transport=nethernet, reported once so far) can fill the
// same Status later.
//
// The package has the codec ([Ping], [Pong], [Status]), a sans-IO
// [Conversation] with a2s.Conversation's surface, a [Client] and a
// [Server] with a [Handler]. A pong has no challenge before it, so the
// server keeps it from amplifying by a cap on its size and a budget of
// pongs per source and in all (see [Server]). It uses the standard
// library and the module's internal helpers only.
package bedrock
