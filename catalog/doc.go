// Package catalog is gsq's table of games: for each game it knows, the
// protocols that query its servers and the ports they answer on (a fixed
// port, or the game port moved by an offset: Valheim answers A2S on the
// game port plus one), the consoles that administer them, the Steam app
// ids its servers list under (what `gsq discover --game` filters by), the
// quirks a client must know (7 Days to Die hides player names from A2S,
// Rust's counts above 255 are in its keywords, DayZ's mods are in binary
// rules), and, for the games gsq cannot query, why not in plain words
// (ARK: Survival Ascended and Squad need Epic Online Services credentials
// gsq does not ship). The user names the game; gsq applies its quirks
// only then.
//
// It is data, and every fact says where it comes from: a [Game]'s Source
// (its ports and protocols), AppIDSource, and each [Quirk]'s, [Console]'s
// and [Endpoint]'s Source. The A2S games are every entry of gamedig
// 5.3.3's games list that a query reaches (its "valve", "dayz",
// "goldsrc" and "sdtd" entries), with gamedig's ids, names and ports; the
// quirks come from the field notes and gamedig's notes; the app ids from
// gamedig's valve.js and the field notes where they name them, and
// otherwise from the Steam store as recalled (said so in AppIDSource: not
// checked offline).
//
// The catalogue's test checks the data: every query protocol is one
// package protocol's registry knows; every console is
// one of [Consoles], with an RCON profile package rcon knows; every port
// is valid; every A2S game's quirk names the a2stest profile that plays
// it or says [NotModelled]. An interop test compares the A2S games with
// the gamedig list installed by .ci/install-peers.
//
// It uses the standard library and internal/textdist (for the nearest names
// of an unknown one) only.
package catalog
