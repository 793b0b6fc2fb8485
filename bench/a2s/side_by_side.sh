#!/usr/bin/env bash
# Side-by-side A2S benchmark: the gsq client against rumblefrog/go-a2s v1.0.2
# and the box's ceiling.
#
# Starts N simulated servers in one process (bench/a2s/fleet: the a2stest "modern"
# profile served by a2s.Server from epoll loops; challenge on every query, rules
# reply split in 3 fragments; FLEET_FLAGS=-lean=false uses a2stest servers), then
# queries every server for INFO, PLAYER and RULES with each client in turn,
# ROUNDS times alternating: gsq (three calls, then one Client.Query
# conversation) and go-a2s from C goroutines, then
# bench/ceiling (the lean pipelined reference client, with its own defaults),
# after three unmeasured warm-up passes of the ceiling client.
# Prints targets/s, the client's CPU seconds and CPU per target (getrusage
# user+sys), the fleet's CPU seconds during the run (/proc/PID/stat),
# answered counts, the gsq/go-a2s ratio, and gsq's share of the ceiling
# measured in the same run and of the issue's reference ceiling (18.5k
# targets/s).
#
# usage: bench/a2s/side_by_side.sh [N=5000] [C=256] [ROUNDS=2]
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-5000}
C=${2:-256}
ROUNDS=${3:-2}

tmp=$(mktemp -d)
fleet=""
cleanup() {
	if [ -n "$fleet" ]; then kill "$fleet" 2>/dev/null || true; wait "$fleet" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT

go -C bench build -o "$tmp/fleet" ./a2s/fleet
go -C bench build -o "$tmp/query" ./a2s/query
go -C bench build -o "$tmp/ceiling" ./ceiling

"$tmp/fleet" -n "$N" -out "$tmp/targets.txt" ${FLEET_FLAGS:-} >"$tmp/fleet.out" &
fleet=$!
for _ in $(seq 600); do
	grep -q ready "$tmp/fleet.out" 2>/dev/null && break
	kill -0 "$fleet" 2>/dev/null || { echo "fleet died" >&2; exit 1; }
	sleep 0.1
done
grep -q ready "$tmp/fleet.out" || { echo "fleet not ready after 60s" >&2; exit 1; }

tck=$(getconf CLK_TCK)
fleet_ticks() { awk '{print $14+$15}' "/proc/$fleet/stat"; }

# Unmeasured passes warm the fleet up, so that the first measured client is
# not penalized: the fleet's CPU per pass drops over its first three or so
# (measured: 47, 47, 40, 32, 32 clock ticks for 5,000 servers).
for _ in 1 2 3; do "$tmp/ceiling" -f "$tmp/targets.txt" >/dev/null; done

echo "servers=$N concurrency=$C rounds=$ROUNDS cores=$(nproc) load=$(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$ROUNDS"); do
	for impl in gsq gsq-query go-a2s ceiling; do
		t0=$(fleet_ticks)
		if [ "$impl" = ceiling ]; then
			line="ceiling $("$tmp/ceiling" -f "$tmp/targets.txt")"
		else
			line=$("$tmp/query" -impl "$impl" -targets "$tmp/targets.txt" -c "$C")
		fi
		t1=$(fleet_ticks)
		fleetcpu=$(awk -v a="$t0" -v b="$t1" -v t="$tck" 'BEGIN{printf "%.2f", (b-a)/t}')
		echo "round=$round $line fleet_cpu=${fleetcpu}s" | tee -a "$tmp/results"
	done
done

awk -v ref=18500 '
	{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	  impl = $2; rate[impl] += v["targets/s"]; n[impl]++
	  cpu[impl] += (impl == "ceiling") ? v["cpu_us_per_target"] : v["cpu/target"] + 0 }
	END {
		g = rate["gsq"] / n["gsq"]; q = rate["gsq-query"] / n["gsq-query"]; a = rate["go-a2s"] / n["go-a2s"]; c = rate["ceiling"] / n["ceiling"]
		printf "mean targets/s: gsq %.0f (Client.Query: %.0f), go-a2s %.0f, ceiling %.0f; ratio gsq/go-a2s %.2fx\n", g, q, a, c, g / a
		printf "gsq share of the ceiling: %.0f%% of %.0f measured in this run, %.0f%% of the issue reference %d\n", 100 * g / c, c, 100 * g / ref, ref
		printf "mean CPU per target: gsq %.1fus (Client.Query: %.1fus), go-a2s %.1fus, ceiling %.1fus\n", cpu["gsq"] / n["gsq"], cpu["gsq-query"] / n["gsq-query"], cpu["go-a2s"] / n["go-a2s"], cpu["ceiling"] / n["ceiling"]
	}' "$tmp/results"
