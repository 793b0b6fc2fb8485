// Package palworld implements Palworld's REST API, which replaces the
// RCON that Palworld deprecated and is withdrawing
// (console-field-notes.md §5), as client and as server: JSON over HTTP at
// http://host:8212/v1/api/, HTTP Basic auth with user "admin" and the
// server's AdminPassword (PalWorldSettings.ini: RESTAPIEnabled=True,
// RESTAPIPort=8212). The endpoints are those PyPI pal_api,
// organismzero/palworld-server-api and gamedig's palworld.js use. It uses
// the standard library only.
//
// # Client
//
// [Dial] checks the address and password with GET info and returns a
// [Client] with one typed call per endpoint ([Client.Info],
// [Client.Players], [Client.Settings], [Client.Metrics], [Client.Announce],
// [Client.Kick], [Client.Ban], [Client.Unban], [Client.Save],
// [Client.Shutdown], [Client.Stop]). Every request is bounded by
// Options.Timeout (5 s) or its context, body included, so a server that
// never answers or trickles is [ErrTimeout]; a body is read up to
// Options.MaxBodySize (4 MiB) and no further ([ErrResponseTooLarge]), so
// an endless one costs that much memory at most. 401 is [ErrAuthFailed],
// 5xx [ErrServer], both with a [*StatusError] saying the code and the
// start of the body where there is one.
//
// The client is a [console.Session] too: [Client.Exec] maps console
// commands onto the endpoints ([Commands]: "players", "announce TEXT",
// "kick ID [TEXT]", "shutdown SECONDS [TEXT]", ..., with Palworld's RCON
// names ShowPlayers, Broadcast, KickPlayer, BanPlayer, UnBanPlayer, DoExit
// as aliases), returning a GET's JSON as the server sent it and "ok" for
// an action. The API pushes nothing; with Options.PollInterval, Events
// reports players joining and leaving from the player list.
//
// [Probe] tells whether a port serves the API without a password (it
// answers 401 with a Basic challenge): a console client whose RCON login
// to a Palworld server finds the port closed can offer REST instead.
//
// # Server
//
// [Server] serves the API for a Go program with a [Handler]; package
// palworld/palworldtest has fakes with the failures clients must survive.
package palworld
