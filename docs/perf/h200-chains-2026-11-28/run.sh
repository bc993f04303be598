#!/bin/bash
# Issue 21 item 3: resident chains before (aaa2acf) and after (chains
# through the scheduler), alternating, on the GPU: chain round trips and a
# closed-loop chain load.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source bench/gpu_env.sh
export LD_LIBRARY_PATH=$rt
B=.gpu/cb/before/bench/resident/dmls_resident_bench
nvidia-smi --query-gpu=name,driver_version --format=csv > "$OUT/machine.log"
for round in 1 2; do
  for v in before after; do
    taskset -c 0-7 .gpu/cb/$v/server/dmlserve --device=gpu --adapters=0 --port=50061 --log_level=warn --drain_seconds=0 \
      > "$OUT/$v.$round.out" 2> "$OUT/$v.$round.err" &
    pid=$!
    for _ in $(seq 100); do grep -q listening "$OUT/$v.$round.out" && break; sleep 0.2; done
    echo "== $v round $round"
    taskset -c 8-15 $B --target=127.0.0.1:50061 --mode=chain --bytes=$((64 << 20)) --chunk_bytes=$((16 << 20)) --iters=20 2>&1 | tail -4
    taskset -c 8-15 $B --target=127.0.0.1:50061 --mode=chain --bytes=65536 --iters=400 2>&1 | tail -4
    taskset -c 8-15 $B --target=127.0.0.1:50061 --mode=chainload --bytes=65536 --clients=8 --steps=4 --op=celu --seconds=5 2>&1 | tail -4
    kill -INT $pid; wait $pid
  done
done 2>&1 | tee "$OUT/chains.log"
