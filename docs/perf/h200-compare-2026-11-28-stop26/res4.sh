#!/usr/bin/env bash
# SCPU=0-7: the same with the server on 8 cores. Resident work before (.gpu/pre26 = 3fb00fd) and after (.gpu/post26 =
# 2221542: ChainRecorder, transfers through the scheduler's chain lane),
# three alternating rounds, a fresh server each: the chain bench (20
# iterations) and the transfer bench (64 MiB in 16 MiB chunks, 10).
set -uo pipefail
SCPU=${SCPU:-0-7}
FINAL=${OUT:-/tmp/out}; OUT=/tmp/logs; mkdir -p "$OUT" "$FINAL"
source bench/gpu_env.sh; export LD_LIBRARY_PATH=$rt
M=$((1 << 20)); G=$((1 << 30))
declare -A dir=([before]=.gpu/pre26 [after]=.gpu/post26)
run() {
  local l=$1 mode=$2 iters=$3 d=${dir[$1]} base=$OUT/$1_$2_$4 target="" srv
  taskset -c "$SCPU" "$d/server/dmlserve" --device=gpu --adapters=0 --port=0 --drain_seconds=0 \
    --max_message_bytes=$((128 * M)) --max_tensor_bytes=$((4 * G)) \
    --resident_bytes_per_principal=$((16 * G)) --resident_bytes_total=$((32 * G)) \
    > "$base.stdout" 2> "$base.server.log" &
  srv=$!
  for _ in $(seq 300); do
    target=$(sed -n 's/.* listening on //p' "$base.stdout" 2>/dev/null | head -1)
    [[ -n $target ]] && break; sleep 0.2
  done
  timeout -k 10 120 taskset -c 8-15 "$d/bench/resident/dmls_resident_bench" --target="$target" \
    --mode=$mode --bytes=$((64 * M)) --chunk_bytes=$((16 * M)) --iters=$iters > "$base.log" 2>&1
  kill -TERM "$srv"; wait "$srv" 2>/dev/null
}
for round in 1 2; do
  for l in before after; do run $l chain 20 $round; done
done
{
  for f in "$OUT"/*_r*.log "$OUT"/*_[123].log; do
    [[ -f $f ]] || continue
    echo "== $(basename $f)"; grep -E "median" "$f"
  done
} > "$OUT/summary.txt" 2>&1
cat "$OUT/summary.txt"
cp "$OUT/summary.txt" "$FINAL/"; tar czf "$FINAL/logs.tgz" -C "$OUT" .
