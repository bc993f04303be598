#!/usr/bin/env bash
# The MVN GPU tests of .gpu/l1 (9d6b741: the long row, since reverted, and
# the reductions' temps trimmed) on the hardware, as run in session 29's
# visit 2 (340 s limit; the numerics test did not finish in its 160 s).
set -uo pipefail
source bench/gpu_env.sh
for t in mvn/mvn_schedule_gpu_test mvn/mvn_numerics_gpu_test; do
  s=$(date +%s)
  DMLS_KERNELS_TEST_ADAPTER=gpu timeout 160 env LD_LIBRARY_PATH=$rt .gpu/l1/tests/$t 2>&1 |
    grep -E "PASSED|FAILED|tests ran|Failure" | tail -6
  echo "$t in $(( $(date +%s) - s )) s"
done 2>&1 | tee "${OUT:-/tmp}/gpu_tests.log"
