#!/bin/bash
# Session 33: does the GPU server's gRPC executor share (20% of its samples
# with one connection, profile.sh) come from the one HTTP/2 connection the
# load uses? Server CPU per 1 KiB request (c=256, 5 s) against echo, with
# 1 and 8 connections, two rounds, server on cores 0-1, load on 2-15.
#   OUT=/tmp/out bash docs/perf/h200-s33-2026-11-29/conns.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
b=${BUILD:-.gpu/s33p}
source bench/gpu_env.sh
export LD_LIBRARY_PATH=$rt
hz=$(getconf CLK_TCK)
one() {  # LABEL CONNECTIONS SERVER...
  local label=$1 conns=$2; shift 2
  taskset -c 0-1 "$@" --port=0 > "$OUT/c.out" 2>&1 &
  local pid=$! t=""
  for _ in $(seq 300); do t=$(sed -n 's/.* listening on //p' "$OUT/c.out" | head -1); [[ -n $t ]] && break; sleep 0.1; done
  taskset -c 2-15 $b/bench/load/dmls_load --target="$t" --concurrency=256 --connections="$conns" \
    --bytes=1KiB --duration=2s --warmup=0s > /dev/null 2>&1
  local t0; t0=$(awk '{print $14 + $15}' /proc/$pid/stat)
  taskset -c 2-15 $b/bench/load/dmls_load --target="$t" --concurrency=256 --connections="$conns" \
    --bytes=1KiB --duration=5s --warmup=0s > "$OUT/c.load" 2>&1
  local t1; t1=$(awk '{print $14 + $15}' /proc/$pid/stat)
  local n; n=$(grep -o 'OK [0-9]*' "$OUT/c.load" | head -1 | awk '{print $2}')
  echo "$label conns=$conns $n ok $(awk -v a=$t0 -v b=$t1 -v n=$n -v hz=$hz 'BEGIN {printf "%.1f", (b-a)/hz*1e6/n}') us/req"
  kill $pid; wait $pid 2>/dev/null
}
for round in 1 2; do
  for conns in 1 8; do
    one echo $conns $b/sym/echo_server
    one gpu $conns $b/sym/dmlserve --device=gpu --log_level=warn --adapters=0
    one cpu $conns $b/sym/dmlserve --device=cpu --log_level=warn
  done
done
