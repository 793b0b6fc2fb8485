#!/usr/bin/env bash
# bench/monitor/scale.sh: gsq monitor as a fleet of workers (README,
# "Running at scale"): 1, 2 and 3 workers of one region share one
# simulated fleet of N servers (default 20,000: gsq serve --fleet PER on
# ports BASE.. of as many loopback addresses 127.0.0.2, 127.0.0.3, ... as
# it takes) through NATS JetStream and write to one PostgreSQL, each server polled
# every INTERVAL seconds (default 30). For each fleet size, after a
# warm-up of WARMUP seconds (default 45), over WINDOW seconds (default 60):
#   - polls per second, in all and per worker (the samples PostgreSQL got);
#   - the workers' CPU per poll (user + system, all workers together);
#   - PostgreSQL's rows per second (samples) and the samples table's
#     growth (heap and indexes) per sample and per server per day;
# and, from the 3-worker figures, the worker cores needed for the design
# goal: 150,000 servers every 60 s in two regions (2,500 polls/s per
# region, 5,000 sample rows/s).
# Needs NATS JetStream and PostgreSQL: eval "$(.ci/services)" names them
# (GSQ_TEST_NATS, GSQ_TEST_POSTGRES). It works in a schema and a region of
# its own, dropped at the end.
# Usage: bench/monitor/scale.sh   Env: N, INTERVAL, WARMUP, WINDOW, BASE
# (first fleet port, default 63000), PER (servers per address, default
# 2000), WORKERS (default "1 2 3").
# The box is shared by other work: its load average is printed with the table.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
N=${N:-20000}
INTERVAL=${INTERVAL:-30}
WARMUP=${WARMUP:-45}
WINDOW=${WINDOW:-60}
BASE=${BASE:-63000}
PER=${PER:-2000}
WORKERS=${WORKERS:-1 2 3}
NATS=${GSQ_TEST_NATS:?GSQ_TEST_NATS names no NATS: eval \"\$(.ci/services)\"}
PG=${GSQ_TEST_POSTGRES:?GSQ_TEST_POSTGRES names no PostgreSQL: eval \"\$(.ci/services)\"}
SCHEMA=gsq_scale_$$
REGION=scale$$
sep='?'; [[ $PG == *\?* ]] && sep='&'
DB="$PG${sep}search_path=$SCHEMA"
PSQL="$PG${sep}options=-csearch_path%3D$SCHEMA"
W=$(mktemp -d /tmp/gsq-bench-scale.XXXXXX)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	psql "$PG" -qc "DROP SCHEMA IF EXISTS $SCHEMA CASCADE" >/dev/null 2>&1 || true
	rm -rf "$W"
}
trap cleanup EXIT

echo "building into $W ..."
go build -o "$W/gsq" ./cmd/gsq
cputicks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
sql() { psql "$PSQL" -Atc "$1"; }

left=$N; k=2
: >"$W/list.txt"
while [ "$left" -gt 0 ]; do
	m=$((left < PER ? left : PER))
	"$W/gsq" serve --fleet "$m" --fleet-host "127.0.0.$k" --base-port "$BASE" --seed "$k" 2>"$W/fleet$k.log" &
	PIDS+=("$!")
	for _ in $(seq 300); do grep -q 'fleet:' "$W/fleet$k.log" && break; sleep 0.1; done
	grep -q 'fleet:' "$W/fleet$k.log" || { echo "fleet on 127.0.0.$k did not start:"; cat "$W/fleet$k.log"; exit 1; }
	seq "$BASE" $((BASE + m - 1)) | sed "s/^/127.0.0.$k:/" >>"$W/list.txt"
	left=$((left - m)); k=$((k + 1))
done

# The samples' bytes: the table's, and its day partitions' (the table is
# partitioned by day on PostgreSQL since schema version 7: the parent
# itself holds nothing).
SIZE="SELECT pg_total_relation_size('samples') + coalesce((SELECT sum(pg_total_relation_size(inhrelid)) FROM pg_inherits WHERE inhparent = 'samples'::regclass), 0)"

for n in $WORKERS; do
	echo "$n worker(s): $N servers every ${INTERVAL}s, warm-up ${WARMUP}s, window ${WINDOW}s ..."
	ws=()
	for i in $(seq "$n"); do
		"$W/gsq" monitor --role worker -f "$W/list.txt" --interval "${INTERVAL}s" --db "$DB" \
			--nats "$NATS" --region "$REGION" 2>"$W/worker$n-$i.log" >/dev/null &
		ws+=("$!"); PIDS+=("$!")
	done
	sleep "$WARMUP"
	c0=0; for p in "${ws[@]}"; do kill -0 "$p" || { echo "a worker died:"; tail "$W"/worker"$n"-*.log; exit 1; }; c0=$((c0 + $(cputicks "$p"))); done
	t0=$(date +%s); s0=$(sql "$SIZE")
	sleep "$WINDOW"
	c1=0; for p in "${ws[@]}"; do c1=$((c1 + $(cputicks "$p"))); done
	t1=$(date +%s); s1=$(sql "$SIZE")
	rows=$(sql "SELECT count(*) FROM samples WHERE t >= $t0 AND t < $t1")
	printf '%s\t%s\t%s\t%s\t%s\n' "$n" "$rows" "$((t1 - t0))" "$(echo "($c1 - $c0) / $(getconf CLK_TCK)" | bc -l)" "$((s1 - s0))" >>"$W/rows"
	for p in "${ws[@]}"; do kill "$p"; done
	for p in "${ws[@]}"; do wait "$p" 2>/dev/null || true; done
done

echo
echo "== $N servers every ${INTERVAL}s, window ${WINDOW}s (load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores)"
printf '%-8s %10s %15s %12s %10s %10s %13s\n' workers "polls/s" "polls/s/worker" "CPU ms/poll" "PG rows/s" "B/sample" "B/server/day"
awk -F'\t' -v n="$N" '{
	rate = $2 / $3; cpu = $4 / $2; bps = $5 / $2
	printf "%-8s %10.0f %15.0f %12.3f %10.0f %10.0f %13.0f\n", $1, rate, rate / $1, 1000 * cpu, rate, bps, $5 / n * 86400 / $3
} END {
	goal = 150000 / 60
	printf "\nthe goal, 150,000 servers every 60 s in two regions: %.0f polls/s per region, %.0f sample rows/s\n", goal, 2 * goal
	printf "worker CPU at the last row'\''s cost per poll: %.2f cores per region, %.2f in all\n", goal * cpu, 2 * goal * cpu
	printf "samples at the last row'\''s bytes per sample: %.1f GB a day for both regions (raw kept 48 h: %.0f GB)\n", 2 * goal * 86400 * bps / 1e9, 4 * goal * 86400 * bps / 1e9
}' "$W/rows"
