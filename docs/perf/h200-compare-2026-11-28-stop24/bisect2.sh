#!/bin/bash
# Stop 24: the regression between aaa2acf and 5e14cf0: 6d58275 alone.
source bench/gpu_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for r in 1 2 3; do for c in aaa2acf 6d58275 5e14cf0; do
  echo -n "$c r$r: "
  LD_LIBRARY_PATH=$rt timeout 60 .gpu/bis/$c --device=gpu --ops=celu --sizes=1M --no_dispatch_cost \
    --engine_requests=400000 --engine_elements=256 --engine_in_flight=2048 --engine_threads=8 \
    --engine_max_batch=256 2>&1 | grep -E "^engine:" | sed 's/.*threads: //' | cut -d, -f1-3
done; done
