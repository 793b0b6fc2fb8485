// Package protocol is gsq's registry of query protocols: the one table
// that says which protocols exist, what each is called, its conventional
// port, how it reaches a server, how to query it and how to read its
// answers, in the manner of blackbox_exporter's table of probers. `gsq
// query` and `gsq scan`, the monitor's config and poller, and the web's
// /probe all look protocols up here ([Lookup], whose error lists the known
// names); none of them switches on a protocol's name or spells its port.
//
// A [Protocol]'s Prepare turns [Settings] (the sections to ask for, in
// words every protocol shares, and the protocol's own options) into a
// [Query]. A protocol over UDP gives a [UDPQuery]: a factory of sans-IO
// conversations (a2s.Conversation, ogp.Conversation) that the scan engine
// drives by the thousand on its shared sockets, with its pacing, adaptive
// timeouts and host spacing, and that [Client] drives one at a time for
// `gsq query`. A protocol over TCP or HTTP gives a [StreamQuery]: a
// blocking exchange per server, which the scan engine runs on goroutines,
// a bounded number of connections at once. Either way the answers land in
// a result.Result whose Detail holds the protocol's own types and JSON,
// and whose PlayerList reads the players under neutral names.
//
// # Adding a protocol
//
// A protocol is one package and one registration. In order:
//
//  1. The protocol package (minecraft/query, say), standard library and
//     internal helpers only: the codec with its fuzz targets, and for a
//     UDP protocol a Conversation and a Client following the template of
//     internal/udpclient's package comment; for a TCP or HTTP protocol a
//     Client whose query takes a context.
//
//  2. Its answers in package result: a file (result/minecraft.go) with
//     its Detail type (Answered, PlayerList, its JSON sections) and the
//     Set method that records an answer, filling the Summary; and their
//     JSON in docs/json.md, with golden files per fake-server profile.
//
//  3. Its adapter in this package: a file (protocol/satisfactory.go)
//     that declares the Protocol (name, title, default port, transport,
//     sections, options, describe, port hint) and its prepare. For a UDP
//     protocol whose conversation ends all at once, as most do, prepare
//     is one call of udpPrepare (below) that names the package's
//     Conversation and says how to fill a result; when what it asks
//     depends on the sections or options asked (OGP's dialect, Query's
//     full stat), prepare returns newUDPQuery with the same three. Only
//     a conversation whose sections end one by one (A2S) needs a Query
//     type with Start and Record of its own. A TCP or HTTP protocol's
//     Query type embeds asking and adds Do. Then one line: add it to
//     registry in protocol.go. internal/archtest then holds every other
//     package to asking the registry for its name and port.
//
//  4. Optionally, a table for `gsq query` in cmd/gsq/cli: without one,
//     the command prints the summary and the player list of any protocol.
//
// Satisfactory's prepare, whole:
//
//	udpPrepare[satisfactory.Conversation](
//		func() result.Detail { return new(result.Satisfactory) }, // a result's Detail, before any answer
//		func(w Waits) satisfactory.Options { ... },               // a conversation's options, with the waits
//		(*result.Result).SetSatisfactory)                         // records a done conversation's Result
//
// A protocol that also administers a server (Palworld's REST API, Rust's
// WebRCON) will get a console hook in its Protocol, opening a
// console.Session; none of today's protocols needs it, so the field waits
// for the first that does.
package protocol
