#!/usr/bin/env bash
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source bench/gpu_env.sh
export LD_LIBRARY_PATH=$rt
b=.gpu/build
bash bench/run_multi_gpu_resident.sh > "$OUT/scaling.log" 2>&1
grep -v "^\[" "$OUT/scaling.log" | tail -40
{
echo "== MVN GPU tests on the H100"
DMLS_KERNELS_TEST_ADAPTER=gpu $b/tests/mvn/mvn_numerics_gpu_test 2>&1 | tail -3
DMLS_KERNELS_TEST_ADAPTER=gpu $b/tests/mvn/mvn_schedule_gpu_test 2>&1 | tail -3
echo "== random corpus on the H100"
DMLS_CONFORMANCE_FILTER=random/ DMLS_KERNELS_TEST_ADAPTER=gpu DMLS_CONFORMANCE_DATA_DIR=tests/data $b/tests/conformance/conformance_gpu_test 2>&1 | grep -i "fail\|passed\|of " | tail -15
} 2>&1 | tee "$OUT/gputests.log"
cd $OUT && tar czf logs.tgz *.log && ls
