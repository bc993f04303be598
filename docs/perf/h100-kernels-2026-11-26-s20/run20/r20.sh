#!/usr/bin/env bash
# Session 20, run 20: MVN1 with Scale/Bias texels, row kernels loading
# them after the reduction (.gpu/build, main at HEAD) against loading them
# with the input (.gpu/build_sbfirst: dmls_bench at 23b06da), one operator
# per process; the wide row forced at 4,096 x 32,768; GPU tests.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source bench/gpu_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/device.txt
run() { local tag=$1 bin=$2 op=$3; shift 3; LD_LIBRARY_PATH=$rt timeout 60 $bin --device=gpu --data_type=$t --ops=$op --sizes=$((r * c)) --mvn_rows=$r --cache_mib=50 --no_dispatch_cost --engine_requests=0 "$@" 2>&1 | grep -E "^mvn1" | sed "s/^/$t $s $tag /"; }
NEW=.gpu/build/bench/dmls_bench; OLD=.gpu/build_sbfirst/bench/dmls_bench
{
cat $OUT/device.txt
for t in float32 float16; do for s in 4096x32768 65536x1024 16384x4096; do r=${s%x*}; c=${s#*x}
  for round in 1 2; do
    run deferred $NEW mvn1_affine
    run with_input $OLD mvn1_affine
    if [ $s = 4096x32768 ]; then
      run deferred_wide $NEW mvn1_affine --mvn_wide_row
      run with_input_wide $OLD mvn1_affine --mvn_wide_row
      run plain_wide $NEW mvn1
    fi
  done
done; done
} 2>&1 | tee $OUT/bench.log
export DMLS_KERNELS_TEST_ADAPTER=gpu
t() { LD_LIBRARY_PATH=$rt timeout ${2:-150} .gpu/build/$1 2>&1 | grep -vE "fixme|\[info\]" ; }
t tests/mvn/mvn_schedule_gpu_test > $OUT/schedule.log
t tests/mvn/mvn_numerics_gpu_test 200 > $OUT/numerics.log
cat $OUT/device.txt; grep -hE "^\[  (PASSED|FAILED)|FAILED  \]" $OUT/schedule.log $OUT/numerics.log
