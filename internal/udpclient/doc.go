// Package udpclient is the one client transport of gsq's UDP query
// protocols, shaped like quic-go's Transport: a [Transport] owns one UDP
// socket and its read loop (datagrams a batch per recvmmsg(2) call, and
// requests sent a batch per sendmmsg(2) call, through internal/udpio),
// hands every datagram to the [Peer] values attached to its source address
// (demultiplexing), routes the ICMP errors the kernel reports about a
// server to the same peers, and counts what came from nobody. a2s.Client,
// ogp.Client and the scan engine all run on it; none of them reads a
// socket of its own.
//
// A query is a [Conversation]: the client side of one exchange with one
// server as a state machine that does no I/O and reads no clock
// (a2s.Conversation and ogp.Conversation). [Transport.Exchange] drives one
// to its end on the calling goroutine, which is what a2s.Client and
// ogp.Client do for each call; the scan engine drives thousands at once on
// its read loops and timers, through the same interface. A server's
// challenge outlives its conversation in a [Challenges] cache, bounded,
// with one eviction rule (see there).
//
// # A new UDP protocol
//
// Every UDP query protocol follows one template, the one a2s and ogp
// follow:
//
//  1. The codec: AppendBinary for requests, Parse functions for replies,
//     each reply parser with a fuzz target.
//  2. A Conversation type with this package's [Conversation] methods and a
//     Start(opts *Options, addr netip.AddrPort, challenge uint32,
//     hasChallenge bool) that begins it: its Options hold what to ask and
//     the waits (Timeout, MaxTimeout, Retries, Deadline; [Backoff] gives
//     the wait of each send). It fails sections with the package's
//     *OpError, reads a timeout as the package's ErrTimeout, an ICMP
//     report as ErrUnreachable, and a server that answers what is not the
//     protocol as ErrNotXXX; it ignores what belongs to another
//     conversation of the same server (OGP's request ID). It gets a fuzz
//     target that feeds it arbitrary datagrams and timer ticks
//     (a2s/conversation_fuzz_test.go is the model).
//  3. A Client with the shared socket options (PacketConn, LocalAddr,
//     ReadBuffer, Debug) that opens a Transport on first use and runs
//     each call with Transport.Exchange, its challenges in a Challenges
//     cache.
//  4. The registration in package protocol, which lets gsq query, gsq
//     scan, gsq monitor and /probe use it (see that package's comment).
//
// It uses the standard library only.
package udpclient
