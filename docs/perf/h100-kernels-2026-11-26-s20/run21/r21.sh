#!/usr/bin/env bash
# Session 20, run 21: MVN1 row kernels with Scale/Bias texels loaded a
# texel at a time in the normalisation (.gpu/build, HEAD) against all after
# the reduction (.gpu/build_defer: dmls_bench of run 20), one operator per
# process, beside PyTorch's layer_norm_affine; the wide row forced at
# 4,096 x 32,768; GPU tests.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source bench/gpu_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/device.txt
run() { local tag=$1 bin=$2 op=$3; shift 3; LD_LIBRARY_PATH=$rt timeout 60 $bin --device=gpu --data_type=$t --ops=$op --sizes=$((r * c)) --mvn_rows=$r --cache_mib=50 --no_dispatch_cost --engine_requests=0 "$@" 2>&1 | grep -E "^mvn1" | sed "s/^/$t $s $tag /"; }
NEW=.gpu/build/bench/dmls_bench; OLD=.gpu/build_defer/bench/dmls_bench
{
cat $OUT/device.txt
for t in float32 float16; do for s in 4096x32768 65536x1024 16384x4096; do r=${s%x*}; c=${s#*x}
  timeout 60 python3 bench/torch_anchors.py --dtype=$t --rows=$r --cols=$c --elements=$((r * c)) --iters=100 2>&1 | grep -E "^layer_norm" | sed "s/^/$t $s /"
  for round in 1 2; do
    if [ $s = 4096x32768 ]; then
      run per_texel_wide $NEW mvn1_affine --mvn_wide_row
      run deferred_wide $OLD mvn1_affine --mvn_wide_row
      run two_pass $NEW mvn1_affine
    else
      run per_texel $NEW mvn1_affine
      run deferred $OLD mvn1_affine
    fi
  done
done; done
} 2>&1 | tee $OUT/bench.log
export DMLS_KERNELS_TEST_ADAPTER=gpu
t() { LD_LIBRARY_PATH=$rt timeout ${2:-150} .gpu/build/$1 2>&1 | grep -vE "fixme|\[info\]" ; }
t tests/mvn/mvn_schedule_gpu_test > $OUT/schedule.log
t tests/mvn/mvn_numerics_gpu_test 200 > $OUT/numerics.log
cat $OUT/device.txt; grep -hE "^\[  (PASSED|FAILED)|FAILED  \]" $OUT/schedule.log $OUT/numerics.log
