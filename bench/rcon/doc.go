// Package rconbench holds the RCON benchmarks: our server and client side
// by side with github.com/gorcon/rcon v1.4.0, pipelined throughput, large
// responses and server memory per idle connection. It has no API; run
// side_by_side.sh or `go test -run '^$' -bench . ./bench/rcon/`. The
// protocol is described in shared/specs/source-rcon.txt.
package rconbench
