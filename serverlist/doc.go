// Package serverlist is what Valve's server lists share: the filter
// language of the master server query protocol and of the Steam Web API's
// IGameServersService/GetServerList (the `\key\value` strings of the
// Valve Developer Community wiki page "Master Server Query Protocol",
// whose keys ValvePython/steam's steam/game_servers.py lists), the
// description of a listed [Server] (the fields of SteamKit's
// CGameServers_GetServerList_Response.Server), and a [Fleet] of server
// descriptions that one filter evaluator answers from.
//
// Package master (the UDP master protocol) and package steamapi (the Web
// API) use it on both sides: their clients check and build filters with
// it, and their servers and fakes list a Fleet through [Fleet.Select], so
// that a filter means the same to the fake master as to the fake Web API.
//
// # The filter language
//
// A filter is a run of conditions, `\key\value` each, that all must hold:
// `\appid\252490\dedicated\1\map\Procedural Map`. Two keys are operators:
// `\nor\N` holds when none of the N conditions after it holds, and
// `\nand\N` when not all of them do; a condition of their N may be an
// operator itself, which counts as one. [Parse] reads a filter, [Filter]
// and [Term] build one, and [Filter.String] writes it back.
//
// Valve documents what each key means but not every edge; where this
// package had to choose, the key's documentation says so. Filters are
// advisory: a real list may return servers that do not match (python-valve
// warns of it), so a program checks each server with its own query.
//
// It uses the standard library and package a2s (to describe a server from
// its A2S_INFO) only.
package serverlist
