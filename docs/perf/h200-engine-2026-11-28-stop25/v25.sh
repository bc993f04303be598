#!/bin/bash
# Stop 25 on the GPU machine: (a) the engine alone, aaa2acf (before the
# regression), 005d19e (last stop's HEAD) and c3b0f86 (the scheduler's lock
# fix), four alternating rounds; (b) serving on two server cores, 005d19e's
# dmlserve as --baseline beside c3b0f86's, echo anchors, same pinning.
# Binaries: .gpu/prof/<commit> (dmls_bench, strip --strip-debug), .gpu/now
# (bench/stage_gpu.sh of 005d19e's code), .gpu/c3b (of c3b0f86).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source bench/gpu_env.sh
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } | tee "$OUT/machine.log"
ARGS="--device=gpu --ops=celu --sizes=1M --no_dispatch_cost --engine_requests=400000 --engine_elements=256 --engine_in_flight=2048 --engine_threads=8 --engine_max_batch=256"
for r in 1 2 3 4; do for c in aaa2acf 005d19e c3b0f86; do
  echo -n "$c r$r: "
  LD_LIBRARY_PATH=$rt timeout 60 .gpu/prof/$c $ARGS 2>&1 | grep -E "^engine:" | sed 's/.*threads: //' | cut -d, -f1-3
done; done 2>&1 | tee "$OUT/engine.log"
export LD_LIBRARY_PATH=$rt
bash bench/serving.sh --build=.gpu/c3b --device=gpu --duration=6s --warmup=1s \
  --baseline=.gpu/now/server/dmlserve \
  --server_args="--log_level=warn --drain_seconds=0 --adapters=0" \
  --server_cpus=0-1 --load_cpus=2-15 --points="1KiB:256 64KiB:64" --out="$OUT/s2" > "$OUT/s2.log" 2>&1
tail -14 "$OUT/s2.log"
