#!/usr/bin/env bash
# bench/scan/compare.sh: two gsq binaries side by side, in one run, against
# the same simulated fleet (gsq serve --fleet N: challenges on, info +
# players + a 3-fragment rules split per server, answering A2S and OGP on
# each port). Each round runs every binary's scan of the fleet over A2S and
# over OGP, alternating the binaries, so that the machine's load weighs on
# both alike; the table shows each run, then per binary and protocol the
# CPU per target over all rounds (/usr/bin/time counts in 10 ms steps, so
# the sum of many runs is the figure to read) and the median wall time,
# and the ratios within the run.
# Usage: bench/scan/compare.sh BEFORE_GSQ AFTER_GSQ
#   e.g. git worktree add /tmp/gsq-before 9afb1bf
#        go -C /tmp/gsq-before build -o /tmp/gsq-before.bin ./cmd/gsq
#        go build -o /tmp/gsq-after.bin ./cmd/gsq
#        bench/scan/compare.sh /tmp/gsq-before.bin /tmp/gsq-after.bin
# Env: N (servers, default 10000), BASE (first port, default 10000; keep the
# fleet below the ephemeral range, 32768 on Linux), ROUNDS (default 5),
# FLEET (the gsq that serves the fleet; default BEFORE_GSQ, whose answers
# the earlier figures were taken with).
set -euo pipefail
[ $# -eq 2 ] || { sed -n 2,18p "$0"; exit 2; }
BEFORE=$1
AFTER=$2
N=${N:-10000}
BASE=${BASE:-10000}
ROUNDS=${ROUNDS:-5}
FLEET=${FLEET:-$BEFORE}
W=$(mktemp -d /tmp/gsq-compare.XXXXXX)
FLEET_PID=
cleanup() {
	[ -n "$FLEET_PID" ] && kill "$FLEET_PID" 2>/dev/null && wait "$FLEET_PID" 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT

seq "$BASE" $((BASE + N - 1)) | sed 's/^/127.0.0.1:/' >"$W/targets"
"$FLEET" serve --fleet "$N" --base-port "$BASE" --seed 1 2>"$W/fleet.log" &
FLEET_PID=$!
for _ in $(seq 200); do
	grep -q 'fleet:' "$W/fleet.log" 2>/dev/null && break
	sleep 0.1
done
grep -q 'fleet:' "$W/fleet.log" || { echo "the fleet did not start:"; cat "$W/fleet.log"; exit 1; }

# run LABEL PROTOCOL GSQ: one scan of the fleet; appends a row to rows.
run() {
	local label=$1 proto=$2 gsq=$3 t0 t1 u s rss answered
	t0=$(date +%s.%N)
	/usr/bin/time -f "%U %S %M" -o "$W/time" "$gsq" scan --protocol "$proto" -f "$W/targets" --rate 0 >/dev/null 2>"$W/err" || true
	t1=$(date +%s.%N)
	read -r u s rss < <(tail -1 "$W/time")
	answered=$(sed -n 's/.*: \([0-9]*\) answered.*/\1/p' "$W/err")
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$proto" "${answered:-0}" "$(echo "$t1 - $t0" | bc -l)" "$(echo "$u + $s" | bc -l)" "$rss" >>"$W/rows"
}

for r in $(seq "$ROUNDS"); do
	for proto in a2s ogp; do
		# alternate which binary goes first
		if [ $((r % 2)) -eq 1 ]; then
			run before "$proto" "$BEFORE"; run after "$proto" "$AFTER"
		else
			run after "$proto" "$AFTER"; run before "$proto" "$BEFORE"
		fi
	done
done

echo "== $N servers, $ROUNDS rounds (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
awk -F'\t' -v n="$N" '
	{ k = $1 " " $2; runs[k]++; i = runs[k]; wall[k, i] = $4; cpu[k, i] = $5; cpusum[k] += $5; ans[k] += $3; rss[k, i] = $6
	  printf "%-7s %-4s answered %6.2f%%  wall %6.3f s  CPU %6.3f s (%5.1f us/target)  RSS %5.1f MB\n", $1, $2, 100 * $3 / n, $4, $5, 1e6 * $5 / n, $6 / 1024 }
	function median(k, a,   m, j, v, t) { m = runs[k]; for (j = 1; j <= m; j++) v[j] = a[k, j]
		for (j = 1; j <= m; j++) for (t = j + 1; t <= m; t++) if (v[t] < v[j]) { x = v[j]; v[j] = v[t]; v[t] = x }
		return v[int((m + 1) / 2)] }
	END {
		print ""
		printf "%-5s %-7s %10s %14s %14s %12s\n", "proto", "binary", "answered", "median wall s", "CPU us/target", "servers/s"
		split("a2s ogp", protos, " "); split("before after", bins, " ")
		for (p = 1; p <= 2; p++) for (b = 1; b <= 2; b++) { k = bins[b] " " protos[p]
			mw[k] = median(k, wall); mc[k] = cpusum[k] / runs[k]
			printf "%-5s %-7s %9.2f%% %14.3f %14.1f %12.0f\n", protos[p], bins[b], 100 * ans[k] / runs[k] / n, mw[k], 1e6 * mc[k] / n, n / mw[k] }
		print ""
		for (p = 1; p <= 2; p++) { a = "after " protos[p]; bb = "before " protos[p]
			printf "%s: after/before median wall %.2fx, CPU per target %.2fx (below 1 is faster)\n", protos[p], mw[a] / mw[bb], mc[a] / mc[bb] }
	}' "$W/rows"
