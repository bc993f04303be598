#!/usr/bin/env bash
# MVN1 cooperative schedule on the H100: plans, then per shape/type PyTorch
# layer_norm, our default (cooperative where chunks <= 128), and
# --mvn_no_coop (the previous default) in the same run; then GPU tests.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source bench/gpu_env.sh
b=.gpu/build; B=$b/bench/dmls_bench
ours() { LD_LIBRARY_PATH=$rt "$@"; }
shapes="512x262143 4096x32768 16384x8192 65536x1024"
{
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for t in float32 float16; do for s in $shapes; do r=${s%x*}; c=${s#*x}
  ours $B --plan_only --ops=mvn1 --sizes=$((r * c)) --mvn_rows=$r --data_type=$t --mvn_coop_max_chunks=128 2>&1 | grep -E "mvn schedule|plan "
done; done
} 2>&1 | tee $OUT/plans.log
{
for round in 1 2; do
for t in float32 float16; do for s in $shapes; do r=${s%x*}; c=${s#*x}
  python3 bench/torch_anchors.py --dtype=$t --rows=$r --cols=$c --elements=$((r * c)) --iters=100 2>&1 | grep -E "^layer_norm" | sed "s/^/$round $t $s /"
  ours $B --device=gpu --data_type=$t --ops=mvn1 --sizes=$((r * c)) --mvn_rows=$r --no_dispatch_cost --engine_requests=0 2>&1 | grep -E "^  mvn1" | sed "s/^/$round $t $s coop /"
  ours $B --device=gpu --data_type=$t --ops=mvn1 --sizes=$((r * c)) --mvn_rows=$r --no_dispatch_cost --engine_requests=0 --mvn_no_coop 2>&1 | grep -E "^  mvn1" | sed "s/^/$round $t $s nocoop /"
done; done; done
} 2>&1 | tee $OUT/bench.log
export DMLS_KERNELS_TEST_ADAPTER=gpu
{
ours timeout 120 $b/tests/mvn/mvn_schedule_gpu_test 2>&1 | grep -E "^\[  FAILED|PASSED|Failure|Actual" | sort -u | tail -12
ours timeout 120 $b/tests/mvn/mvn_numerics_gpu_test 2>&1 | grep -E "^\[  FAILED|PASSED|Failure|Actual" | sort -u | tail -12
DMLS_CONFORMANCE_DATA_DIR=tests/data ours timeout 200 $b/tests/conformance/conformance_gpu_test 2>&1 | grep -E "cases passed|FAIL|PASSED" | tail -12
} 2>&1 | tee $OUT/tests.log
