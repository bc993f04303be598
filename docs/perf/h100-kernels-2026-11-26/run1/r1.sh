#!/usr/bin/env bash
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source bench/gpu_env.sh
b=.gpu/build
ours() { LD_LIBRARY_PATH=$rt "$@"; }
{
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for t in float32 float16; do python3 bench/torch_anchors.py --dtype=$t --elements=134217728 --iters=50 2>&1 | grep -E "^copy"; done
for round in 1 2; do for t in float32 float16; do for op in linear hard_sigmoid celu; do
  ours $b/bench/dmls_bench --device=gpu --data_type=$t --ops=$op --sizes=134217728 --no_dispatch_cost --engine_requests=0 2>&1 | grep -E "^ *$op " | sed "s/^/$round $t /"
done; done; done
for t in float32 float16; do for s in 512x262143 4096x32768 65536x1024; do r=${s%x*}; c=${s#*x}
  python3 bench/torch_anchors.py --dtype=$t --rows=$r --cols=$c --elements=$((r * c)) --iters=100 2>&1 | grep -E "^layer_norm" | sed "s/^/$t $s /"
  ours $b/bench/dmls_bench --device=gpu --data_type=$t --ops=mvn1 --sizes=$((r * c)) --mvn_rows=$r --cache_mib=50 --no_dispatch_cost --engine_requests=0 2>&1 | grep -E "^ *mvn1" | sed "s/^/$t $s /"
done; done
} 2>&1 | tee $OUT/bench.log
export DMLS_KERNELS_TEST_ADAPTER=gpu
{
ours $b/tests/mvn/mvn_numerics_gpu_test 2>&1 | grep -E "^\[  FAILED|PASSED" | sort -u | tail -12
ours $b/tests/mvn/mvn_schedule_gpu_test 2>&1 | grep -E "^\[  FAILED|PASSED" | sort -u | tail -6
ours $b/engine/d3d12/d3d12_accuracy_regression_test 2>&1 | grep -E "^\[  FAILED|PASSED|Failed|FLOAT" | tail -8
ours $b/engine/d3d12/d3d12_operators_test 2>&1 | grep -E "^\[  FAILED|PASSED" | tail -4
DMLS_CONFORMANCE_DATA_DIR=tests/data ours timeout 280 $b/tests/conformance/conformance_gpu_test 2>&1 | grep -E "cases passed|FAIL|PASSED" | tail -12
} 2>&1 | tee $OUT/tests.log
