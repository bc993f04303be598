#!/usr/bin/env bash
# Stop 18, run 11: the MVN numerics GPU tests after SHRINK's beyond-range
# form stopped using a denormal immediate (2^-127).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source bench/gpu_env.sh
export DMLS_KERNELS_TEST_ADAPTER=gpu
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/device.txt
LD_LIBRARY_PATH=$rt timeout 200 .gpu/build/tests/mvn/mvn_numerics_gpu_test 2>&1 | grep -vE "fixme|\[info\]" > $OUT/numerics.log
grep -hE "^\[  (PASSED|FAILED)|Failure" $OUT/numerics.log | head -20
