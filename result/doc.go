// Package result is the outcome of querying one game server, whatever the
// protocol (Valve's A2S or OGP v0.91): the answers, a protocol-neutral
// [Summary], the errors of each section, and the documented JSON encoding
// that `gsq query --json`, `gsq scan` and `gsq monitor` share.
package result
