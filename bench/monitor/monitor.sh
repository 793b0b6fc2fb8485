#!/usr/bin/env bash
# bench/monitor/monitor.sh: the figures of gsq monitor at scale, beside the
# nearest peer that runs here, a gamedig-based poller (gamedig-poller.mjs,
# the polling loop of Uptime Kuma's GameDig monitor), measured the same way.
#
# Against one simulated fleet of N servers (gsq serve --fleet N; default
# 10,000), each watched every INTERVAL (default 30 s):
#   - CPU of the watcher, as % of one core, averaged over WINDOW seconds
#     (default 300) after a warm-up of WARMUP seconds (default 90);
#   - its RSS sampled every 10 s over the window (first, last, max): flat
#     memory means last ~ first;
#   - for gsq: the database (file + WAL) at the start and the end of the
#     window, as bytes per server per day at that rate (raw samples are
#     kept 48 h, so growth in the first hours is the raw level filling up;
#     store/bench_test.go measures the steady state);
#   - for gsq: /metrics and /api/v1/servers, best and worst of 5 requests.
# Usage: bench/monitor/monitor.sh   Env: N, INTERVAL, WARMUP, WINDOW, BASE,
#        (BASE: first fleet port, default 10000, below the ephemeral range and
#        clear of the 27xxx ports of hand-started servers), GAMEDIG_POOL (concurrent gamedig queries, default 200), PEER=0 skips gamedig.
# The box is shared by other work: its load average is printed with the table.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
N=${N:-10000}
INTERVAL=${INTERVAL:-30}
WARMUP=${WARMUP:-90}
WINDOW=${WINDOW:-300}
BASE=${BASE:-10000}
GAMEDIG_POOL=${GAMEDIG_POOL:-200}
PEER=${PEER:-1}
LISTEN=127.0.0.1:${LISTEN_PORT:-19815}
GAMEDIG="$ROOT/.peers/node_modules/gamedig"
W=$(mktemp -d /tmp/gsq-bench-monitor.XXXXXX)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$W"
}
trap cleanup EXIT

echo "building into $W ..."
go build -o "$W/gsq" ./cmd/gsq
seq "$BASE" $((BASE + N - 1)) | sed 's/^/127.0.0.1:/' >"$W/list.txt"

cputicks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
dbsize() { du -cb "$W"/monitor.db* 2>/dev/null | tail -1 | cut -f1; }

"$W/gsq" serve --fleet "$N" --base-port "$BASE" --seed 1 2>"$W/fleet.log" &
FLEET=$!; PIDS+=("$FLEET")
for _ in $(seq 300); do grep -q 'fleet:' "$W/fleet.log" && break; sleep 0.1; done
grep -q 'fleet:' "$W/fleet.log" || { echo "fleet did not start:"; cat "$W/fleet.log"; exit 1; }

# watch NAME PID: warm-up, then CPU and RSS over the window; one row to $W/rows
watch_proc() {
	local name=$1 pid=$2 c0 c1 r first last max=0 db0=0 db1=0
	sleep "$WARMUP"
	kill -0 "$pid" || { echo "$name died during warm-up"; exit 1; }
	c0=$(cputicks "$pid"); first=$(rss_kb "$pid")
	[ "$name" = gsq ] && db0=$(dbsize)
	for _ in $(seq $((WINDOW / 10))); do
		sleep 10
		r=$(rss_kb "$pid"); [ "$r" -gt "$max" ] && max=$r
	done
	c1=$(cputicks "$pid"); last=$(rss_kb "$pid")
	[ "$name" = gsq ] && db1=$(dbsize)
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" \
		"$(echo "100 * ($c1 - $c0) / $(getconf CLK_TCK) / $WINDOW" | bc -l)" \
		"$first" "$last" "$max" "$db0" "$db1" >>"$W/rows"
}

timed() { # timed URL: "best worst bytes" of 5 GETs, in ms
	local t best=999999 worst=0 size
	for _ in 1 2 3 4 5; do
		t=$(curl -s -o "$W/body" -w '%{time_total}' "$1")
		t=$(echo "$t * 1000" | bc -l)
		(($(echo "$t < $best" | bc -l))) && best=$t
		(($(echo "$t > $worst" | bc -l))) && worst=$t
	done
	size=$(wc -c <"$W/body")
	printf '%.1f %.1f %d\n' "$best" "$worst" "$size"
}

echo "gsq monitor: $N servers every ${INTERVAL}s, warm-up ${WARMUP}s, window ${WINDOW}s ..."
"$W/gsq" monitor -f "$W/list.txt" --interval "${INTERVAL}s" --db "$W/monitor.db" --listen "$LISTEN" 2>"$W/monitor.log" &
MON=$!; PIDS+=("$MON")
watch_proc gsq "$MON"
up=$(curl -s "http://$LISTEN/api/v1/servers" | grep -o '"status":"up"' | wc -l)
read -r mbest mworst msize < <(timed "http://$LISTEN/metrics")
read -r abest aworst asize < <(timed "http://$LISTEN/api/v1/servers")
kill "$MON"; wait "$MON" 2>/dev/null || true

if [ "$PEER" = 1 ]; then
	echo "gamedig poller: $N servers every ${INTERVAL}s (pool $GAMEDIG_POOL) ..."
	node bench/monitor/gamedig-poller.mjs "$GAMEDIG" "$W/list.txt" "$INTERVAL" "$GAMEDIG_POOL" 2>"$W/gamedig.log" &
	PEERPID=$!; PIDS+=("$PEERPID")
	watch_proc "gamedig 5.3.3" "$PEERPID"
	kill "$PEERPID"; wait "$PEERPID" 2>/dev/null || true
	echo "gamedig rounds:"; tail -3 "$W/gamedig.log"
fi

echo
echo "== $N servers every ${INTERVAL}s, window ${WINDOW}s (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
printf '%-16s %12s %10s %10s %10s %14s\n' watcher "CPU % core" "RSS0 MB" "RSS1 MB" "RSSmax MB" "DB B/srv/day"
awk -F'\t' -v n="$N" -v win="$WINDOW" '{
	day = ($7 > 0) ? ($7 - $6) / n * 86400 / win : 0
	printf "%-16s %12.2f %10.1f %10.1f %10.1f %14s\n", $1, $2, $3 / 1024, $4 / 1024, $5 / 1024, ($7 > 0) ? sprintf("%.0f", day) : "-"
}' "$W/rows"
echo "gsq: $up of $N servers up at the end; database $(dbsize) bytes"
echo "gsq /metrics:         best ${mbest} ms, worst ${mworst} ms, ${msize} bytes"
echo "gsq /api/v1/servers:  best ${abest} ms, worst ${aworst} ms, ${asize} bytes"
