// Package rconbench holds the RCON benchmarks: our client side by side
// with a lean reference client and github.com/gorcon/rcon v1.4.0 on one
// server, pipelined throughput, large responses and server memory per
// idle connection. It has no API; run side_by_side.sh or
// `go -C bench test -run '^$' -bench . ./rcon/` from the repository root.
package rconbench
