#!/usr/bin/env bash
# The MVN and conformance GPU tests of .gpu/l1 (9d6b741: the long row, the
# reductions' temps trimmed) on the hardware.
set -uo pipefail
FINAL=${OUT:-/tmp/out}; mkdir -p "$FINAL"
source bench/gpu_env.sh
A=${A:-.gpu/l1}
{
  for t in mvn/mvn_schedule_gpu_test mvn/mvn_numerics_gpu_test conformance/conformance_gpu_test; do
    s=$(date +%s)
    DMLS_KERNELS_TEST_ADAPTER=gpu DMLS_CONFORMANCE_DATA_DIR=tests/data timeout 280 \
      env LD_LIBRARY_PATH=$rt $A/tests/$t 2>&1 | grep -E "PASSED|FAILED|tests ran" | tail -6
    echo "$t in $(( $(date +%s) - s )) s"
  done
} 2>&1 | tee "$FINAL/gpu_tests.log"
