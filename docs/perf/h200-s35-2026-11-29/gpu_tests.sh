#!/usr/bin/env bash
# The MVN GPU tests of the change that reverses the second pass (.gpu/s35m:
# tests/mvn/*_gpu_test of the build, stripped) on the GPU machine.
set -uo pipefail
FINAL=${OUT:-/tmp/out}; mkdir -p "$FINAL"
source bench/gpu_env.sh
for t in mvn_schedule_gpu_test mvn_numerics_gpu_test; do
  s=$(date +%s)
  DMLS_KERNELS_TEST_ADAPTER=gpu timeout 250 env LD_LIBRARY_PATH=$rt .gpu/s35m/tests/mvn/$t 2>&1 |
    grep -E "PASSED|FAILED|tests ran|Failure" | tail -6
  echo "$t in $(( $(date +%s) - s )) s"
done 2>&1 | tee "$FINAL/gpu_tests.log"
