#!/usr/bin/env bash
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source bench/gpu_env.sh
export LD_LIBRARY_PATH=$rt
b=.gpu/build
bash bench/run_multi_gpu_resident.sh > "$OUT/scaling.log" 2>&1
grep -v "^\[" "$OUT/scaling.log" | grep -v "^$" | tail -40
{
echo "== MVN schedule tests that failed at engine creation, in their own process"
DMLS_KERNELS_TEST_ADAPTER=gpu $b/tests/mvn/mvn_schedule_gpu_test --gtest_filter='*TwoPass*:*MoreChunks*' 2>&1 | grep -v "^\[20" | tail -8
} 2>&1 | tee "$OUT/gputests.log"
cd $OUT && tar czf logs.tgz *.log
