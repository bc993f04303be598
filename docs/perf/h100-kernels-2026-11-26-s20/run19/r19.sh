#!/usr/bin/env bash
# Session 20, run 19: Scale/Bias texel loads (kMvnVariantVec4ScaleBias).
# GPU tests (schedule with ScaleAndBiasTexels, numerics, corpus), then
# mvn1_affine one operator per process: default (Scale/Bias texels),
# --mvn_vec4_scale_bias=0 (one load per element, as before), and the wide
# row forced, beside PyTorch's layer_norm with weight and bias.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source bench/gpu_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/device.txt
export DMLS_KERNELS_TEST_ADAPTER=gpu
t() { LD_LIBRARY_PATH=$rt timeout ${2:-150} .gpu/build/$1 2>&1 | grep -vE "fixme|\[info\]" ; }
t tests/mvn/mvn_schedule_gpu_test > $OUT/schedule.log
t tests/mvn/mvn_numerics_gpu_test 200 > $OUT/numerics.log
DMLS_CONFORMANCE_DATA_DIR=tests/data t tests/conformance/conformance_gpu_test 200 > $OUT/corpus.log
unset DMLS_KERNELS_TEST_ADAPTER
NEW=.gpu/build/bench/dmls_bench
run() { local tag=$1 op=$2; shift 2; LD_LIBRARY_PATH=$rt timeout 60 $NEW --device=gpu --data_type=$t --ops=$op --sizes=$((r * c)) --mvn_rows=$r --cache_mib=50 --no_dispatch_cost --engine_requests=0 "$@" 2>&1 | grep -E "^mvn1|schedule" | sed "s/^/$t $s $tag /"; }
{
cat $OUT/device.txt
for t in float32 float16; do for s in 4096x32768 65536x1024 16384x4096; do r=${s%x*}; c=${s#*x}
  timeout 60 python3 bench/torch_anchors.py --dtype=$t --rows=$r --cols=$c --elements=$((r * c)) --iters=100 2>&1 | grep -E "^layer_norm" | sed "s/^/$t $s /"
  for round in 1 2; do
    run sb_texels mvn1_affine --show_plan
    run sb_words mvn1_affine --mvn_vec4_scale_bias=0
    if [ $s = 4096x32768 ]; then run sb_texels_wide mvn1_affine --mvn_wide_row --show_plan; fi
  done
done; done
} 2>&1 | tee $OUT/bench.log
cat $OUT/device.txt; grep -hE "^\[  (PASSED|FAILED)|FAILED  \]" $OUT/schedule.log $OUT/numerics.log $OUT/corpus.log
