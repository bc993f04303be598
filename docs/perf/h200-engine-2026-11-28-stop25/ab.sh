#!/bin/bash
# A/B of dmls_bench engine mode (H200): builds named on the command line, alternating rounds.
source bench/gpu_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
ARGS="--device=gpu --ops=celu --sizes=1M --no_dispatch_cost --engine_requests=400000 --engine_elements=256 --engine_in_flight=2048 --engine_threads=8 --engine_max_batch=256"
for r in 1 2 3 4; do for c in "$@"; do
  echo -n "$c r$r: "
  LD_LIBRARY_PATH=$rt timeout 60 .gpu/prof/$c $ARGS 2>&1 | grep -E "^engine:" | sed 's/.*threads: //' | cut -d, -f1-3
done; done
