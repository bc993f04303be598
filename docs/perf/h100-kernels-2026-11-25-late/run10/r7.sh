#!/usr/bin/env bash
# Stop 18, run 7: the GPU tests after the pre-activation, cancellation and
# exact-mean fixes and the texel kernels: MVN schedule and numerics tests,
# view bases, operators, accuracy regression, the conformance corpus, and a
# fresh randomized corpus (seed 20261126, 4,000 cases, .gpu/rand2).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source bench/gpu_env.sh
b=.gpu/build
export DMLS_KERNELS_TEST_ADAPTER=gpu
t() { LD_LIBRARY_PATH=$rt timeout ${2:-150} $b/$1 2>&1 | grep -vE "fixme|\[info\]" ; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/device.txt
t tests/mvn/mvn_numerics_gpu_test 200 > $OUT/numerics.log
t tests/mvn/mvn_schedule_gpu_test > $OUT/schedule.log
{ t engine/dxbc/dxbc_view_base_gpu_test; t engine/d3d12/d3d12_operators_test; t engine/d3d12/d3d12_accuracy_regression_test; } > $OUT/other.log
DMLS_CONFORMANCE_DATA_DIR=tests/data t tests/conformance/conformance_gpu_test 200 > $OUT/corpus.log
DMLS_CONFORMANCE_DATA_DIR=.gpu/rand2 DMLS_CONFORMANCE_FILTER=random/ t tests/conformance/conformance_gpu_test 200 > $OUT/rand2.log
grep -hE "^\[  (PASSED|FAILED)|cases passed|FAIL " $OUT/*.log | head -40
