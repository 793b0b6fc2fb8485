// Package scan queries many game servers at once, fast and politely: the
// engine behind `gsq scan`, and the poller a monitor builds on.
//
// [Scanner] says how. [Scanner.Scan] reads a list of servers from an
// io.Reader, one HOST[:PORT] per line, a line at a time (so a list of
// millions of servers is never held in memory). [Scanner.Open] returns a
// [Session], whose Run takes [Target] values from an iterator (or a
// channel, see [Channel]) and can be called again and again on the same
// sockets: each server's challenge and the network's round-trip time carry
// over from one run to the next, so that a poller asking 10,000 servers
// every 30 seconds asks each one's sections at once. [Scanner.Run] takes
// values too, on sockets of its own. Each hands every [Outcome] to a
// callback as soon as it is complete: the target, its [Status], and the
// answers as a [result.Result], the protocol-neutral result with its
// summary, errors and JSON encoding. A few UDP sockets (each an
// internal/udpclient transport, the one a2s.Client and ogp.Client run on)
// serve every query; replies are demultiplexed by their source address, so
// the number of sockets does not grow with the number of servers.
//
// Flow control, from the outside in:
//   - Concurrency bounds the number of targets in flight;
//   - Rate paces the datagrams sent, across all sockets (a token bucket).
//     Datagrams that must wait are served in order of priority: the
//     requests of servers that have answered, then the first requests of
//     new servers, then the resends to servers that have not answered, so
//     that the dead entries of a list (master lists have many) do not
//     starve the live ones;
//   - at most MaxPerIP servers of one IP address in flight, and with
//     HostInterval set, one request at a time per server, HostInterval
//     apart: real servers drop bursts from one source address (Source's
//     sv_max_queries_sec);
//   - an unanswered request is sent again after an adaptive timeout (a
//     smoothed round-trip estimate, as TCP's), 1.5 times longer on each
//     retry, capped by Timeout, at most Retries times, and a server takes
//     at most Deadline from its first request, whatever the retries.
//
// With the defaults a silent server ends within Deadline (5 s); on Linux a
// closed port ends after one datagram, when the kernel reports the ICMP
// port unreachable it earned (StatusUnreachable). Hosts limit the ICMP
// errors they send (Linux: net.ipv4.icmp_msgs_per_sec, 1000 a second by
// default, for the whole host), so in a fast scan of many closed ports
// some look silent, and end at their Deadline.
//
// # Protocols
//
// What to ask is a protocol.Query ([Scanner.Query], or a [Target]'s own),
// from the registry in package protocol; one scan, or one Session, may
// mix protocols. Each server of a UDP protocol is a conversation, the
// sans-IO state machine its package's client runs too (a2s.Conversation,
// ogp.Conversation), driven datagram by datagram on the shared sockets
// with the flow control above. An A2S conversation asks its first section
// (A2S_INFO, A2S_PLAYER or A2S_RULES) alone, earning the server's
// S2C_CHALLENGE, then the sections left all at once with that challenge
// (one at a time with HostInterval), each with its own retries; an OGP
// conversation sends its one Default Query, again with a new challenge
// after an error 3 answer. Split replies are reassembled, several at once.
// Nothing in this package reads a reply. A server of a TCP or HTTP
// protocol is asked with its query's blocking Do on a goroutine of its
// own, one of Connections at once.
//
// # Cancellation
//
// When the context of a scan is canceled, the scan stops taking targets
// and ends every target in flight, or waiting for its turn, with a result
// of StatusCanceled: every target taken gets exactly one result, and the
// Summary's counts add up to Targets.
package scan
