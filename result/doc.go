// Package result is the outcome of querying one game server, whatever the
// protocol: the protocol's own answers (its [Detail]), a protocol-neutral
// [Summary] and player list ([Result.PlayerList]), the error of each
// section that failed, and the JSON encoding that `gsq query --json`,
// `gsq scan` and `gsq monitor` share.
//
// The core (result.go, summary.go, json.go) knows no protocol. Each
// protocol's answers are a Detail type in a file of their own: [*A2S] in
// a2s.go (Valve's server queries), [*OGP] in ogp.go (OGP v0.91), each with
// its JSON sections, its player list and the Set methods that record its
// answers. Package protocol's registry says which protocols exist and
// makes their results.
//
// # Building a result
//
// [New] starts a [Result] for a target; the Set methods record each
// answer (or its error) as it comes: [Result.SetA2SInfo],
// [Result.SetA2SPlayers] and [Result.SetA2SRules] for A2S, [Result.SetOGP]
// for OGP's one answer. They keep the result consistent as they go: the
// Summary follows the info section, a failed section goes to
// Result.Errors, and Result.Err is set while no section has answered.
// [Result.Fail] records a failure before any query, such as a name that
// does not resolve.
//
// # Errors
//
// Every error is classified by [KindOf] into a [Kind]: timeout,
// unreachable, protocol, auth, refused, canceled or invalid. An [Error]
// keeps the kind, the message and the original error, so errors.Is still
// sees a2s.ErrTimeout through it.
//
// # JSON
//
// [Result.AppendJSON] writes one JSON object: snake_case keys, numbers as
// numbers, fields a server did not send left out rather than zero-filled,
// a field never changing type (a failed section is left out and its error
// goes under "errors"), and the exact bytes of any string that is not
// valid UTF-8 in a base64 twin ("name_b64"). The encoder, internal/jsonenc,
// writes straight into a byte slice, without reflection. The contract,
// field by field, is docs/json.md in the gsq repository.
package result
