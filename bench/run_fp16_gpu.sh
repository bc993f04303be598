#!/usr/bin/env bash
# On the GPU machine (../shared/GPU.md): FLOAT16 kernels beside FLOAT32 and
# beside PyTorch in one run: PyTorch's copy, element-wise ops and layer_norm
# in float32 and float16; dmls_bench's element-wise ops at 128M elements
# and MVN1 at 512 x 262,143 in both types, each with the D3D12 copy of the
# same bytes; PyTorch again (drift). Logs under $OUT.
#   bash bench/run_fp16_gpu.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
source bench/gpu_env.sh
ours() { LD_LIBRARY_PATH=$rt "$@"; }
B=.gpu/build/bench/dmls_bench
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/machine.log"
for t in float32 float16; do
  python3 bench/torch_anchors.py --dtype=$t 2>&1 | tee "$OUT/torch_$t.log"
done
# One operator per process: in one process the later operators of a long
# --ops list sometimes came out much slower (FLOAT16 GELU 1,673 GB/s as the
# 8th, 2,959 as the 3rd; docs/PERFORMANCE.md, 2026-11-25).
for t in float32 float16; do
  : > "$OUT/bench_ew_$t.log"
  for op in celu threshold clip relu sigmoid tanh identity gelu; do
    ours $B --device=gpu --data_type=$t --ops=$op \
      --sizes=128M --no_dispatch_cost --engine_requests=0 2>&1 | tee -a "$OUT/bench_ew_$t.log"
  done
  ours $B --device=gpu --data_type=$t --ops=mvn1 --sizes=134217216 --mvn_rows=512 \
    --no_dispatch_cost --engine_requests=0 2>&1 | tee "$OUT/bench_mvn1_$t.log"
done
for t in float32 float16; do
  python3 bench/torch_anchors.py --dtype=$t 2>&1 | tee "$OUT/torch_after_$t.log"
done
