#!/bin/bash
# Stop 24: bisect the engine-alone regression, builds alternating, 3 rounds.
source bench/gpu_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for r in 1 2 3; do for c in 1ebb0bd aaa2acf 5e14cf0 b6e32e1; do
  echo -n "$c r$r: "
  LD_LIBRARY_PATH=$rt timeout 60 .gpu/bis/$c --device=gpu --ops=celu --sizes=1M --no_dispatch_cost \
    --engine_requests=400000 --engine_elements=256 --engine_in_flight=2048 --engine_threads=8 \
    --engine_max_batch=256 2>&1 | grep -E "^engine:" | sed 's/.*threads: //'
done; done
