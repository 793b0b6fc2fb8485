#!/bin/bash
# idleconns.sh [N]: the idle-connection attack of issue 19 (row 1) against
# the real `gsq monitor --demo`: N (default 10500) idle keep-alive
# connections from each of 127.0.0.1 and 127.0.0.2, while an API call is
# timed every 200 ms on a new connection from 127.0.0.3. It prints the
# monitor's descriptors and RSS before, during and after, the connections
# it holds per address, the demo's polls meanwhile, and its connection
# counters. Linux: it reads /proc and uses ss(8). Needs a limit on open
# files above N (it raises the soft limit to the hard one).
set -euo pipefail
n=${1:-10500}
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; rm -rf "$tmp"' EXIT
ulimit -n "$(ulimit -Hn)"
go -C "$root" build -o "$tmp/gsq" ./cmd/gsq
go -C "$root/bench" build -o "$tmp/attack" ./monitor/idleconns
"$tmp/gsq" monitor --demo --listen 127.0.0.1:0 >"$tmp/out" 2>"$tmp/err" &
pid=$!
for _ in $(seq 50); do grep -q "page is at" "$tmp/out" && break; sleep 0.2; done
addr=$(grep -o 'http://[0-9.:]*' "$tmp/out" | tail -1 | sed 's#http://##')
sleep 5
fds() { ls /proc/$pid/fd | wc -l; }
rss() { awk '/VmRSS/ {printf "%.0f MB", $2/1024}' /proc/$pid/status; }
polls() { curl -s --interface 127.0.0.4 "http://$addr/api/v1/servers" | grep -o '"ok":[0-9]*' | awk -F: '{s+=$2} END {print s}'; }
p0=$(polls)
echo "monitor (pid $pid, limit on open files $(awk '/Max open files/ {print $4}' /proc/$pid/limits)) on $addr: before: $(fds) descriptors, RSS $(rss)"
"$tmp/attack" -addr "$addr" -from 127.0.0.1 -n "$n" -hold 25s >"$tmp/a1" &
a1=$!
"$tmp/attack" -addr "$addr" -from 127.0.0.2 -n "$n" -hold 25s >"$tmp/a2" &
a2=$!
"$tmp/attack" -addr "$addr" -from 127.0.0.3 -probe 40s >"$tmp/p" &
p=$!
peakfd=0 peakrss=0 hold=""
for i in $(seq 40); do
  f=$(fds); r=$(awk '/VmRSS/ {print int($2/1024)}' /proc/$pid/status)
  [ "$f" -gt $peakfd ] && peakfd=$f
  [ "$r" -gt $peakrss ] && peakrss=$r
  if [ "$i" = 25 ]; then
    hold="$f descriptors, RSS $r MB"
    ss -tnH state established "( sport = :${addr##*:} )" | awk '{split($4,a,":"); n[a[1]]++} END {for (k in n) print "  held by the monitor at 25 s: " n[k] " connections from " k}' >"$tmp/ss"
  fi
  sleep 1
done
wait $a1 $a2 $p
echo "during: peak $peakfd descriptors, peak RSS $peakrss MB; at 25 s, the attackers holding: $hold; after they left: $(fds) descriptors, RSS $(rss)"
cat "$tmp/ss"
echo "the demo's 6 servers: $p0 successful polls before, $(polls) after"
cat "$tmp/a1" "$tmp/a2" "$tmp/p"
curl -s --interface 127.0.0.4 "http://$addr/metrics" | grep '^gsq_http_conn'
