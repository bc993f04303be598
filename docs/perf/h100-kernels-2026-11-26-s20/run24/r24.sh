#!/usr/bin/env bash
# Session 20, run 24: main at HEAD (FLOAT16 wide row loading Scale/Bias
# four texels at a time): FLOAT16 MVN1 with Scale/Bias at 4,096 x 32,768
# beside layer_norm_affine, two rounds; the MVN GPU tests and the corpus.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source bench/gpu_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/device.txt
NEW=.gpu/build/bench/dmls_bench
run() { local tag=$1 op=$2; shift 2; LD_LIBRARY_PATH=$rt timeout 60 $NEW --device=gpu --data_type=$t --ops=$op --sizes=$((r * c)) --mvn_rows=$r --cache_mib=50 --no_dispatch_cost --engine_requests=0 "$@" 2>&1 | grep -E "^mvn1|schedule" | sed "s/^/$t $s $tag /"; }
{
cat $OUT/device.txt
t=float16; s=4096x32768; r=4096; c=32768
timeout 60 python3 bench/torch_anchors.py --dtype=$t --rows=$r --cols=$c --elements=$((r * c)) --iters=100 2>&1 | grep -E "^layer_norm" | sed "s/^/$t $s /"
run default mvn1_affine --show_plan
run default mvn1_affine
} 2>&1 | tee $OUT/bench.log
export DMLS_KERNELS_TEST_ADAPTER=gpu
t() { LD_LIBRARY_PATH=$rt timeout ${2:-150} .gpu/build/$1 2>&1 | grep -vE "fixme|\[info\]" ; }
t tests/mvn/mvn_schedule_gpu_test > $OUT/schedule.log
t tests/mvn/mvn_numerics_gpu_test 200 > $OUT/numerics.log
DMLS_CONFORMANCE_DATA_DIR=tests/data t tests/conformance/conformance_gpu_test 200 > $OUT/corpus.log
cat $OUT/device.txt; grep -hE "^\[  (PASSED|FAILED)|FAILED  \]" $OUT/schedule.log $OUT/numerics.log $OUT/corpus.log
