#!/bin/bash
# Batching off (max_batch=1): 005d19e, c3b0f86, HEAD alternating (H200).
source bench/gpu_env.sh
ARGS="--device=gpu --ops=celu --sizes=1M --no_dispatch_cost --engine_requests=100000 --engine_elements=256 --engine_in_flight=2048 --engine_threads=8 --engine_max_batch=1"
for r in 1 2 3; do for c in 005d19e c3b0f86 HEAD; do
  echo -n "$c r$r: "
  LD_LIBRARY_PATH=$rt timeout 60 .gpu/prof/$c $ARGS 2>&1 | grep -E "^engine:" | sed 's/.*threads: //' | cut -d, -f1-3
done; done
