#!/usr/bin/env bash
# Session 19, run 17: main at 0d150dd (the final kernels): the MVN numerics
# (with BiasCancellingTheDeviation) and the fresh-seed randomized corpus
# (seed 20261126, 4,000 cases, .gpu/rand2) on the H100.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source bench/gpu_env.sh
export DMLS_KERNELS_TEST_ADAPTER=gpu
t() { LD_LIBRARY_PATH=$rt timeout ${2:-150} .gpu/build/$1 2>&1 | grep -vE "fixme|\[info\]" ; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/device.txt
t tests/mvn/mvn_numerics_gpu_test 200 > $OUT/numerics.log
DMLS_CONFORMANCE_DATA_DIR=.gpu/rand2 DMLS_CONFORMANCE_FILTER=random/ t tests/conformance/conformance_gpu_test 200 > $OUT/rand2.log
cat $OUT/device.txt; grep -hE "^\[  (PASSED|FAILED)|cases passed|FAIL " $OUT/*.log | head -20
