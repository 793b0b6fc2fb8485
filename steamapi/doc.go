// Package steamapi lists game servers through the Steam Web API, the
// discovery source that works today for Steam games (Valve's UDP master,
// package master, stopped resolving in February 2026):
//
//   - IGameServersService/GetServerList (undocumented on Valve's partner
//     site; xPaw's Steam Web API reference, SteamKit's
//     CGameServers_GetServerList_Response.Server for the fields) lists the
//     servers a filter in the language of package serverlist selects, up
//     to 10,000 a request, with no paging cursor. [Client.GetServerList]
//     makes one request; [Client.List] partitions a filter into
//     complementary halves (`\secure\1` and `\nor\1\secure\1`, ...) while
//     a request comes back full, to list more than 10,000 servers, and
//     says which partitions were cut short even so.
//   - ISteamApps/GetServersAtAddress lists what Steam knows at one IP
//     address, without a key: [Client.Listed] answers "is my server
//     listed, and if not, why".
//
// Both stream: the JSON is decoded as it arrives, each server handed to
// the caller's function at once, so that a scan can query the first
// servers while the rest are still coming.
//
// # What the answers are like
//
// The API leaves out every field that is empty (a server with no players
// has no "players"), answers {"response":{}} when nothing matches, sends
// the 64-bit steamid as a string, and lists servers behind Steam Datagram
// Relay at 169.254.0.0/16 addresses, which no query reaches
// (serverlist.IsRelay; rust-gamedig#110). The decoder takes numbers
// written as strings and strings written as numbers, skips a record it
// cannot read (counting it), and bounds the body.
//
// # The key, and the terms
//
// GetServerList needs a Steam Web API key, one per Steam account. gsq
// never ships one: the caller gives it ([Client.Key]), and it never
// appears in an error (a *url.Error's URL is scrubbed), a Debug hook or a
// log line, and is never sent on a redirect. Valve disabled a shared key
// once it was used to find players and attack their servers
// (PredatH0r/SteamServerBrowser#37); the terms ask for a personal key and
// paced requests, so a Client waits MinInterval between two requests (1 s
// by default), honours a 429's Retry-After, and asks GetServersAtAddress
// about one address at most once in AddressInterval (10 minutes, Valve's
// guideline for it).
//
// Filters are advisory: a list may hold servers that do not match, and
// what it says of a server may be stale. A program checks each server
// with its own query.
//
// It uses the standard library, package serverlist and the module's
// internal helpers only.
package steamapi
