package result

// Summary is what every protocol can say about a server, under the same
// keys whatever the protocol, so that a script or the monitor reading
// results from A2S and OGP servers alike need not know where each protocol
// keeps its fields. A field the server did not report is nil, and is left
// out of the JSON encoding rather than zero-filled.
type Summary struct {
	Name       *string `json:"name,omitempty"`
	Map        *string `json:"map,omitempty"`
	Game       *string `json:"game,omitempty"`
	Players    *int    `json:"players,omitempty"`
	MaxPlayers *int    `json:"max_players,omitempty"`
	Bots       *int    `json:"bots,omitempty"`
	Password   *bool   `json:"password,omitempty"`
	Version    *string `json:"version,omitempty"`
	// Connect is the address a player connects to, when known: the game
	// port a server announces, on the address that was queried.
	Connect *string `json:"connect,omitempty"`
}

// Kind classifies an error, as the JSON contract's "kind" field does.
type Kind string

// The kinds of errors.
const (
	KindTimeout     Kind = "timeout"     // no answer in time
	KindUnreachable Kind = "unreachable" // the port is closed, or the name does not resolve
	KindProtocol    Kind = "protocol"    // the server answered, badly
	KindAuth        Kind = "auth"        // authentication failed
	KindRefused     Kind = "refused"     // the server refused us (a ban reply)
	KindCanceled    Kind = "canceled"    // the caller stopped waiting (Ctrl-C)
)

// Error is why a section, or a whole server, failed.
type Error struct {
	Kind    Kind   `json:"kind"`
	Message string `json:"message"`
}
