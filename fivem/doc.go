// Package fivem reads the HTTP endpoints FiveM's FXServer (GTA V) and
// RedM (Red Dead Redemption 2) serve on their game port (30120 by
// default): /info.json (the server's build, resources and convars),
// /players.json (who is on: name, id, ping) and /dynamic.json (host name,
// player count and limit, game type, map). gamedig's fivem.js reads the
// first two; the field notes (section 4) list the three.
//
// Servers disable /players.json more and more (gamedig 5.3.0, #674): it
// answers 404 or 403 then, which is [ErrNotAvailable], not a broken
// server. Admins put anything in convars, and FXServer builds write a
// number as a string now and then: the decoder reads leniently
// (internal/flexjson), keeps every convar as text, and bounds every body
// (MaxBodySize; an info.json carries the server's icon, tens of KB of
// base64).
//
// [Client] asks one endpoint per call, or all three ([Client.Query]),
// each with a timeout and a bounded read; package fivemtest runs fakes
// with the quirks clients meet (players.json disabled, a body that never
// ends, a server that trickles, JSON of the wrong shape, an HTML page).
//
// It uses the standard library and the module's internal helpers only.
package fivem
