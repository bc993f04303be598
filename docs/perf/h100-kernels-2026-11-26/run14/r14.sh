#!/usr/bin/env bash
# Session 19, run 14: the MVN FLOAT32 slow path (overflow, cancellation)
# emitted once per thread instead of once per element: MVN1 and MVN1 with
# Scale and Bias per column (mvn1_affine) against main before it
# (.gpu/build_base, dae9add), beside PyTorch's layer_norm with and without
# weight and bias; then the GPU tests and the fresh-seed randomized corpus.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source bench/gpu_env.sh
NEW=.gpu/build/bench/dmls_bench; OLD=.gpu/build_base/bench/dmls_bench
run() { local tag=$1 bin=$2 op=$3; shift 3; LD_LIBRARY_PATH=$rt timeout 60 $bin --device=gpu --data_type=$t --ops=$op --sizes=$((r * c)) --mvn_rows=$r --cache_mib=50 --no_dispatch_cost --engine_requests=0 "$@" 2>&1 | grep -E "^mvn1" | sed "s/^/$t $s $tag /"; }
{
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for t in float32 float16; do for s in 512x262143 4096x32768 65536x1024; do r=${s%x*}; c=${s#*x}
  timeout 60 python3 bench/torch_anchors.py --dtype=$t --rows=$r --cols=$c --elements=$((r * c)) --iters=100 2>&1 | grep -E "^(layer_norm|copy)" | sed "s/^/$t $s /"
  for round in 1 2; do
    run new $NEW mvn1,mvn1_affine
    run base $OLD mvn1,mvn1_affine
  done
done; done
} 2>&1 | tee $OUT/bench.log
b=.gpu/build
export DMLS_KERNELS_TEST_ADAPTER=gpu
t() { LD_LIBRARY_PATH=$rt timeout ${2:-150} $b/$1 2>&1 | grep -vE "fixme|\[info\]" ; }
t tests/mvn/mvn_numerics_gpu_test 200 > $OUT/numerics.log
t tests/mvn/mvn_schedule_gpu_test > $OUT/schedule.log
{ t engine/dxbc/dxbc_view_base_gpu_test; t engine/d3d12/d3d12_operators_test; t engine/d3d12/d3d12_accuracy_regression_test; } > $OUT/other.log
DMLS_CONFORMANCE_DATA_DIR=tests/data t tests/conformance/conformance_gpu_test 200 > $OUT/corpus.log
DMLS_CONFORMANCE_DATA_DIR=.gpu/rand2 DMLS_CONFORMANCE_FILTER=random/ t tests/conformance/conformance_gpu_test 200 > $OUT/rand2.log
grep -hE "^\[  (PASSED|FAILED)|cases passed|FAIL " $OUT/*.log | head -40
