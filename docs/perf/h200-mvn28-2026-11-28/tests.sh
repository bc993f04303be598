#!/usr/bin/env bash
# The MVN GPU tests of a build (A, default .gpu/m7 = main at fee2960: two
# levels a barrier, the wide row where it fills, the 512-thread row) on the
# hardware. SCHEDULE_ONLY=1 runs mvn_schedule_gpu_test alone.
set -uo pipefail
FINAL=${OUT:-/tmp/out}; mkdir -p "$FINAL"
source bench/gpu_env.sh
A=${A:-.gpu/m7}
tests="mvn_schedule_gpu_test"
[[ ${SCHEDULE_ONLY:-0} == 1 ]] || tests="$tests mvn_numerics_gpu_test"
{
  for t in $tests; do
    s=$(date +%s)
    DMLS_KERNELS_TEST_ADAPTER=gpu timeout 280 env LD_LIBRARY_PATH=$rt $A/tests/mvn/$t 2>&1 |
      grep -E "PASSED|FAILED|tests ran" | tail -4
    echo "$t in $(( $(date +%s) - s )) s"
  done
} 2>&1 | tee "$FINAL/gpu_tests.log"
