#!/usr/bin/env bash
# Session 20, run 22: main at b3ea499 (Scale/Bias texels, the planner's
# FLOAT16 wide row with them). MVN1 with and without Scale/Bias, default
# plans, one operator per process, beside PyTorch's layer_norm and
# layer_norm_affine; GPU tests, the corpus and the fresh-seed corpus.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source bench/gpu_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/device.txt
NEW=.gpu/build/bench/dmls_bench
run() { local tag=$1 op=$2; shift 2; LD_LIBRARY_PATH=$rt timeout 60 $NEW --device=gpu --data_type=$t --ops=$op --sizes=$((r * c)) --mvn_rows=$r --cache_mib=50 --no_dispatch_cost --engine_requests=0 "$@" 2>&1 | grep -E "^mvn1|schedule" | sed "s/^/$t $s $tag /"; }
{
cat $OUT/device.txt
for t in float32 float16; do for s in 4096x32768 65536x1024 16384x4096 512x262143; do r=${s%x*}; c=${s#*x}
  timeout 60 python3 bench/torch_anchors.py --dtype=$t --rows=$r --cols=$c --elements=$((r * c)) --iters=100 2>&1 | grep -E "^layer_norm" | sed "s/^/$t $s /"
  run default mvn1_affine --show_plan
  run default mvn1_affine
  run default mvn1
done; done
} 2>&1 | tee $OUT/bench.log
export DMLS_KERNELS_TEST_ADAPTER=gpu
t() { LD_LIBRARY_PATH=$rt timeout ${2:-150} .gpu/build/$1 2>&1 | grep -vE "fixme|\[info\]" ; }
t tests/mvn/mvn_schedule_gpu_test > $OUT/schedule.log
t tests/mvn/mvn_numerics_gpu_test 200 > $OUT/numerics.log
t engine/d3d12/d3d12_operators_test > $OUT/operators.log
t engine/d3d12/d3d12_accuracy_regression_test > $OUT/accuracy.log
DMLS_CONFORMANCE_DATA_DIR=tests/data t tests/conformance/conformance_gpu_test 200 > $OUT/corpus.log
DMLS_CONFORMANCE_DATA_DIR=.gpu/rand2 DMLS_CONFORMANCE_FILTER=random/ t tests/conformance/conformance_gpu_test 200 > $OUT/rand2.log
cat $OUT/device.txt; grep -hE "^\[  (PASSED|FAILED)|FAILED  \]|cases passed|FAIL " $OUT/*.log | head -30
