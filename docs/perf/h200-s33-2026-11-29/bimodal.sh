#!/bin/bash
# Session 33: is the GPU engine's bimodal CPU per request (two server cores,
# 1 KiB CELU, c=256) a matter of batch size? Six fresh servers in turn; each
# round prints server CPU per answered request over a 5 s window and the
# mean batch (dmlserve_batch_requests sum/count, warm-up included).
#   OUT=/tmp/out bash docs/perf/h200-s33-2026-11-29/bimodal.sh [EXTRA SERVER ARGS]
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
a=${BUILD:-.gpu/s33}
source bench/gpu_env.sh
export LD_LIBRARY_PATH=$rt
hz=$(getconf CLK_TCK)
# The metrics page without curl (bash's /dev/tcp).
metrics() {
  exec 3<>/dev/tcp/127.0.0.1/19464
  printf 'GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
  cat <&3
  exec 3<&-
}
for round in 1 2 3 4 5 6; do
  taskset -c 0-1 $a/server/dmlserve --device=gpu --adapters=0 --log_level=warn --port=0 \
    --metrics_port=19464 --metrics_address=127.0.0.1 "$@" > "$OUT/b.out" 2>&1 &
  pid=$!
  for _ in $(seq 300); do grep -q ' listening on ' "$OUT/b.out" && break; sleep 0.1; done
  target=$(sed -n 's/.* listening on //p' "$OUT/b.out" | head -1)
  taskset -c 2-15 $a/bench/load/dmls_load --target="$target" --concurrency=256 --bytes=1KiB \
    --duration=2s --warmup=0s > /dev/null 2>&1
  t0=$(awk '{print $14 + $15}' /proc/$pid/stat)
  taskset -c 2-15 $a/bench/load/dmls_load --target="$target" --concurrency=256 --bytes=1KiB \
    --duration=5s --warmup=0s > "$OUT/b.load" 2>&1
  t1=$(awk '{print $14 + $15}' /proc/$pid/stat)
  n=$(grep -o 'OK [0-9]*' "$OUT/b.load" | head -1 | awk '{print $2}')
  m=$(metrics)
  bs=$(echo "$m" | awk '/^dmlserve_batch_requests_sum/ {s+=$2} /^dmlserve_batch_requests_count/ {c+=$2} END {printf "%.1f", s/c}')
  thr=$(ps -L -o comm= -p $pid | sort | uniq -c | tr '\n' ' ')
  echo "round $round: $n ok, $(awk -v a=$t0 -v b=$t1 -v n=$n -v hz=$hz 'BEGIN {printf "%.1f", (b-a)/hz*1e6/n}') us/req, mean batch $bs; threads: $thr"
  kill $pid; wait $pid 2>/dev/null
done
