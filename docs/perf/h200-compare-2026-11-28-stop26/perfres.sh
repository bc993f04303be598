#!/usr/bin/env bash
# Where the server's two cores go during the chain + ReadTensor bench,
# before (.gpu/pre26) and after (.gpu/post26): perf record of the server
# process (all threads, no call graphs), reported per thread and per
# thread and symbol on the machine itself.
set -uo pipefail
FINAL=${OUT:-/tmp/out}; OUT=/tmp/logs; mkdir -p "$OUT" "$FINAL"
source bench/gpu_env.sh
P=$PWD/.gpu/perf/lib
PERF="env LD_LIBRARY_PATH=$P:$rt $PWD/.gpu/perf/perf"
export LD_LIBRARY_PATH=$rt
M=$((1 << 20)); G=$((1 << 30))
declare -A dir=([before]=.gpu/slim/pre26 [after]=.gpu/slim/post26)
for l in before after; do
  d=${dir[$l]}; base=$OUT/$l
  taskset -c 0-1 "$d/server/dmlserve" --device=gpu --adapters=0 --port=0 --drain_seconds=0 \
    --max_message_bytes=$((128 * M)) --max_tensor_bytes=$((4 * G)) \
    --resident_bytes_per_principal=$((16 * G)) --resident_bytes_total=$((32 * G)) \
    > "$base.stdout" 2> "$base.server.log" &
  srv=$!; target=""
  for _ in $(seq 300); do
    target=$(sed -n 's/.* listening on //p' "$base.stdout" 2>/dev/null | head -1)
    [[ -n $target ]] && break; sleep 0.2
  done
  $PERF record -F 1999 -p $srv -o /tmp/$l.data > /dev/null 2>&1 &
  pp=$!
  timeout -k 10 120 taskset -c 2-15 "$d/bench/resident/dmls_resident_bench" --target="$target" \
    --mode=chain --bytes=$((64 * M)) --chunk_bytes=$((16 * M)) --iters=20 > "$base.bench.log" 2>&1
  kill -INT $pp; wait $pp
  kill -TERM "$srv"; wait "$srv" 2>/dev/null
  $PERF report -i /tmp/$l.data --sort pid --stdio 2>/dev/null | grep -v "^#" | grep -v "^$" | head -20 > "$base.threads.txt"
  $PERF report -i /tmp/$l.data --sort pid,dso,sym --stdio 2>/dev/null | grep -v "^#" | grep -v "^$" | head -60 > "$base.syms.txt"
done
{
  for l in before after; do
    echo "== $l"; grep -E "median" "$OUT/$l.bench.log"
    echo "-- threads"; cat "$OUT/$l.threads.txt"
    echo "-- thread, dso, symbol"; head -40 "$OUT/$l.syms.txt"
  done
} > "$OUT/summary.txt"
cat "$OUT/summary.txt"
cp "$OUT/summary.txt" "$FINAL/"
