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
for t in float32 float16; do
  ours $B --device=gpu --data_type=$t --ops=celu,threshold,clip,relu,sigmoid,tanh,identity,gelu \
    --sizes=128M --no_dispatch_cost --engine_requests=0 2>&1 | tee "$OUT/bench_ew_$t.log"
  ours $B --device=gpu --data_type=$t --ops=mvn1 --sizes=134217216 --mvn_rows=512 \
    --no_dispatch_cost --engine_requests=0 2>&1 | tee "$OUT/bench_mvn1_$t.log"
done
for t in float32 float16; do
  python3 bench/torch_anchors.py --dtype=$t 2>&1 | tee "$OUT/torch_after_$t.log"
done
