#!/usr/bin/env bash
# Soak: N minutes of mixed load against one dmlserve, its RSS sampled every
# 5 s; reports the growth between minute 2 (after caches and pools have
# warmed) and the end. Loads, all open loop at modest rates so that a
# 2-core machine keeps up:
#   - CELU on 1 KiB over ExecuteStream (4 streams), 200 req/s;
#   - MVN1 on 64 KiB, unary, 20 req/s;
#   - THRESHOLD on 1 MiB, unary, 5 req/s;
#   - resident tensors: a 4 MiB tensor uploaded, run through CELU (kept),
#     read back and checked, over and over (dmls_resident_bench
#     --mode=roundtrip); the server's --resident_ttl_seconds=20 makes the
#     tensors expire, so the sweeper's reclaiming is part of the soak.
# Usage: bash bench/soak.sh [--device=software|cpu|gpu] [--minutes=10]
#        [--build=build] [--out=DIR] [--max_growth_pct=5]
# Exits non-zero when a load reports errors, the server dies, or (with
# --max_growth_pct) RSS grew more than that from minute 2 to the end.
set -uo pipefail
device=software minutes=10 build=build out=/tmp/soak max_growth=
for a in "$@"; do
  case $a in
    --device=*) device=${a#*=} ;;
    --minutes=*) minutes=${a#*=} ;;
    --build=*) build=${a#*=} ;;
    --out=*) out=${a#*=} ;;
    --max_growth_pct=*) max_growth=${a#*=} ;;
    *) echo "unknown argument $a"; exit 2 ;;
  esac
done
mkdir -p "$out"
port=$((50500 + RANDOM % 1000))
seconds=$((minutes * 60))
"$build/server/dmlserve" --device="$device" --port=$port --drain_seconds=0 \
  --resident_ttl_seconds=20 --log_level=warn > "$out/server.log" 2>&1 &
srv=$!
for _ in $(seq 1 300); do grep -q "listening on" "$out/server.log" && break; sleep 0.1; done
load="$build/bench/load/dmls_load --target=127.0.0.1:$port --warmup=0s --duration=${seconds}s"
$load --op=celu --bytes=1KiB --rpc=stream --streams=4 --rate=200 --json="$out/celu.json" \
  > "$out/celu.log" 2>&1 &
l1=$!
$load --op=mvn1 --bytes=64KiB --mvn_cols=1024 --rpc=unary --rate=20 --json="$out/mvn1.json" \
  > "$out/mvn1.log" 2>&1 &
l2=$!
$load --op=threshold --bytes=1MiB --rpc=unary --rate=5 --json="$out/threshold.json" \
  > "$out/threshold.log" 2>&1 &
l3=$!
(
  end=$((SECONDS + seconds))
  n=0 bad=0
  while [ $SECONDS -lt $end ]; do
    "$build/bench/resident/dmls_resident_bench" --target=127.0.0.1:$port --mode=roundtrip \
      --bytes=4194304 --chunk_bytes=1048576 > /dev/null 2>&1 || bad=$((bad + 1))
    n=$((n + 1))
    sleep 0.5
  done
  echo "resident round trips: $n, failed: $bad"
) > "$out/resident.log" 2>&1 &
l4=$!

echo "t_s rss_kib" > "$out/rss.tsv"
start=$SECONDS
while kill -0 $srv 2>/dev/null && [ $((SECONDS - start)) -lt $seconds ]; do
  echo "$((SECONDS - start)) $(awk '/VmRSS/ {print $2}' /proc/$srv/status)" >> "$out/rss.tsv"
  sleep 5
done
alive=1; kill -0 $srv 2>/dev/null || alive=0
wait $l1 $l2 $l3 $l4
kill -INT $srv 2>/dev/null; wait $srv 2>/dev/null
status=0
[ $alive = 1 ] || { echo "the server died"; status=1; }
for l in celu mvn1 threshold; do
  echo "== $l: $(grep -E 'answered|rate' "$out/$l.log" | tr '\n' ' ' | cut -c1-300)"
  grep -q " 0 errors" "$out/$l.log" || status=1
done
cat "$out/resident.log"
grep -q "failed: 0" "$out/resident.log" || status=1
python3 - "$out/rss.tsv" "$max_growth" <<'PY' || status=1
import sys
rows = [tuple(map(int, l.split())) for l in open(sys.argv[1]).read().split("\n")[1:] if l.strip()]
at2 = next((r for t, r in rows if t >= 120), rows[0][1])
last = rows[-1][1]
peak = max(r for _, r in rows)
growth = (last - at2) / at2 * 100
print(f"RSS at 2 min {at2/1024:.1f} MiB, at the end ({rows[-1][0]} s) {last/1024:.1f} MiB, "
      f"peak {peak/1024:.1f} MiB: growth {growth:+.2f}% from minute 2")
sys.exit(1 if sys.argv[2] and growth > float(sys.argv[2]) else 0)
PY
exit $status
