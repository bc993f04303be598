#!/usr/bin/env bash
# The GPU tests of a build (A, default .gpu/m2 = 213ff7c) on the hardware.
set -uo pipefail
FINAL=${OUT:-/tmp/out}; mkdir -p "$FINAL"
source bench/gpu_env.sh
A=${A:-.gpu/m2}
{
  s=$(date +%s)
  DMLS_KERNELS_TEST_ADAPTER=gpu DMLS_CONFORMANCE_DATA_DIR=tests/data \
    timeout 250 env LD_LIBRARY_PATH=$rt $A/tests/conformance/conformance_gpu_test 2>&1 | grep -E "PASSED|FAILED|tests ran" | tail -4
  echo "conformance_gpu_test in $(( $(date +%s) - s )) s"
  for t in mvn_schedule_gpu_test mvn_numerics_gpu_test; do
    DMLS_KERNELS_TEST_ADAPTER=gpu timeout 150 env LD_LIBRARY_PATH=$rt $A/tests/mvn/$t 2>&1 | grep -E "PASSED|FAILED|tests ran" | tail -4
  done
} 2>&1 | tee "$FINAL/gpu_tests.log"
