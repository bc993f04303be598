#!/usr/bin/env bash
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source bench/gpu_env.sh
b=.gpu/build
ours() { LD_LIBRARY_PATH=$rt "$@"; }
export DMLS_KERNELS_TEST_ADAPTER=gpu
ours $b/tests/mvn/mvn_numerics_gpu_test 2>&1 | grep -v "^\[20\|^fixme" > $OUT/numerics.log
grep -E "^\[  FAILED" $OUT/numerics.log | sort -u | head -20
grep -B2 -A8 "Failure" $OUT/numerics.log | head -60
ours $b/engine/d3d12/d3d12_accuracy_regression_test --gtest_filter='*Linear*' 2>&1 | grep -v "^\[20\|^fixme" | grep -A12 Failure | head -30
DMLS_CONFORMANCE_FILTER=random/ DMLS_CONFORMANCE_DATA_DIR=tests/data ours timeout 300 $b/tests/conformance/conformance_gpu_test 2>&1 | grep -E "cases passed|FAIL" | tail -12
