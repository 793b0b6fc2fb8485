// Package scan queries many game servers at once, fast and politely: the
// engine behind `gsq scan`.
//
// A [Scanner] reads its targets from an io.Reader one line at a time (so a
// list of millions of servers is never held in memory), queries them over
// a few shared UDP sockets and hands each [Result] to a callback as soon as
// it is complete. Replies are demultiplexed by their source address, so
// the number of sockets does not grow with the number of servers.
//
// Flow control, from the outside in:
//   - Concurrency bounds the number of targets in flight;
//   - Rate paces the datagrams sent, across all sockets (a token bucket);
//   - at most MaxPerIP servers of one IP address in flight, and with
//     HostInterval set, one request at a time per server, HostInterval
//     apart: real servers drop bursts from one source address (Source's
//     sv_max_queries_sec);
//   - an unanswered request is sent again after an adaptive timeout (a
//     smoothed round-trip estimate, as TCP's), 1.5 times longer on each retry,
//     capped by Timeout, at most Retries times.
//
// The A2S conversation follows specs/valve-server-queries.txt. The first
// section asked for (A2S_INFO, A2S_PLAYER or A2S_RULES) goes out alone and
// earns the server's S2C_CHALLENGE; then the sections left are asked all at
// once with that challenge (one at a time with HostInterval), each with its
// own retries. A server that sends a new challenge is asked again for the
// sections it has not answered; one that answers A2S_PLAYER or A2S_RULES
// without a challenge gets the rest without one. Split replies are
// reassembled (a2s.Reassembler), several at once.
package scan
