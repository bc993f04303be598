#!/usr/bin/env bash
# Issue 21, ReadTensor after a chain: before (.gpu/h0 = main at 7183e63:
# the dispatch thread copies each readback half into a fresh string, and
# the reactor into a fresh slice) and after (.gpu/rread: the halves copied
# out on the completion thread into reused chunk buffers that gRPC sends as
# they are). Modelled on ../h200-compare-2026-11-28-stop26/res3.sh: three
# alternating rounds, a fresh server each, server on cores 0-1 and the
# bench on 2-15; the chain bench (chain, chain + ReadTensor, inline round
# trips) and the transfer bench (WriteTensor, ReadTensor), 64 MiB in 16 MiB
# chunks, 20 and 10 iterations as res3 (whose rounds took about 40 s each
# on the H200, by its server logs: about 2 minutes of runs, well within 500 s).
#
# Run from the repository root on the GPU machine (one visit):
#   bash docs/perf/h200-rread-2026-11-28/res5.sh            # $OUT/summary.txt, logs.tgz
# Locally on lavapipe (no gpu_env, tiny sizes), e.g.:
#   GPU_ENV=0 SERVER_CPUS=0 BENCH_CPUS=1 BEFORE=/tmp/h0 AFTER=.gpu/rread \
#   BYTES=$((4<<20)) CHUNK=$((1<<20)) CHAIN_ITERS=5 TRANSFER_ITERS=5 ROUNDS=1 bash .../res5.sh
set -uo pipefail
FINAL=${OUT:-/tmp/out}; OUT=${LOGS:-/tmp/logs}; mkdir -p "$OUT" "$FINAL"
if [[ ${GPU_ENV:-1} == 1 ]]; then
  source bench/gpu_env.sh; export LD_LIBRARY_PATH=$rt
fi
M=$((1 << 20)); G=$((1 << 30))
BYTES=${BYTES:-$((64 * M))} CHUNK=${CHUNK:-$((16 * M))}
CHAIN_ITERS=${CHAIN_ITERS:-20} TRANSFER_ITERS=${TRANSFER_ITERS:-10} ROUNDS=${ROUNDS:-3}
SERVER_CPUS=${SERVER_CPUS:-0-1} BENCH_CPUS=${BENCH_CPUS:-2-15}
declare -A dir=([before]=${BEFORE:-.gpu/h0} [after]=${AFTER:-.gpu/rread})
start=$SECONDS
run() {
  local l=$1 mode=$2 iters=$3 d=${dir[$1]} base=$OUT/$1_$2_$4 target="" srv
  taskset -c "$SERVER_CPUS" "$d/server/dmlserve" --device=gpu --adapters=0 --port=0 --drain_seconds=0 \
    --max_message_bytes=$((128 * M)) --max_tensor_bytes=$((4 * G)) \
    --resident_bytes_per_principal=$((16 * G)) --resident_bytes_total=$((32 * G)) \
    > "$base.stdout" 2> "$base.server.log" &
  srv=$!
  for _ in $(seq 300); do
    target=$(sed -n 's/.* listening on //p' "$base.stdout" 2>/dev/null | head -1)
    [[ -n $target ]] && break; sleep 0.2
  done
  timeout -k 10 120 taskset -c "$BENCH_CPUS" "$d/bench/resident/dmls_resident_bench" \
    --target="$target" --mode=$mode --bytes=$BYTES --chunk_bytes=$CHUNK --iters=$iters \
    > "$base.log" 2>&1
  kill -TERM "$srv"; wait "$srv" 2>/dev/null
  echo "$l $mode round $4: $((SECONDS - start)) s" >&2
}
for round in $(seq "$ROUNDS"); do
  for l in before after; do
    run $l chain "$CHAIN_ITERS" "$round"; run $l transfer "$TRANSFER_ITERS" "$round"
  done
done
{
  echo "BYTES=$BYTES CHUNK=$CHUNK CHAIN_ITERS=$CHAIN_ITERS TRANSFER_ITERS=$TRANSFER_ITERS" \
    "server on $SERVER_CPUS, bench on $BENCH_CPUS; before=${dir[before]} after=${dir[after]}"
  for round in $(seq "$ROUNDS"); do
    for l in before after; do
      for mode in chain transfer; do
        f=$OUT/${l}_${mode}_$round.log
        echo "== $(basename "$f")"; grep -E "median" "$f"
      done
    done
  done
  echo "total $((SECONDS - start)) s"
} > "$OUT/summary.txt" 2>&1
cat "$OUT/summary.txt"
cp "$OUT/summary.txt" "$FINAL/"; tar czf "$FINAL/logs.tgz" -C "$OUT" .
