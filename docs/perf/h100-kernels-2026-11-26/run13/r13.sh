#!/usr/bin/env bash
# Session 19, run 13: FLOAT16 MVN1 with word pairs that follow the output's
# words (6d215fe) against main before it (4b684cf, .gpu/build_prev), beside
# PyTorch's layer_norm, FLOAT32 too; then the GPU tests (r7.sh's set).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source bench/gpu_env.sh
NEW=.gpu/build/bench/dmls_bench; OLD=.gpu/build_prev/bench/dmls_bench
run() { local tag=$1 bin=$2 op=$3; shift 3; LD_LIBRARY_PATH=$rt timeout 60 $bin --device=gpu --data_type=$t --ops=$op --sizes=$((r * c)) --mvn_rows=$r --cache_mib=50 --no_dispatch_cost --engine_requests=0 "$@" 2>&1 | grep -E "^ *mvn1" | sed "s/^/$t $s $tag /"; }
{
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for t in float16 float32; do for s in 512x262143 4096x32768 65536x1024; do r=${s%x*}; c=${s#*x}
  timeout 60 python3 bench/torch_anchors.py --dtype=$t --rows=$r --cols=$c --elements=$((r * c)) --iters=100 2>&1 | grep -E "^(layer_norm|copy)" | sed "s/^/$t $s /"
  run new $NEW mvn1
  run prev $OLD mvn1
  run new $NEW mvn1
  run prev $OLD mvn1
  [ $s = 512x262143 ] && { LD_LIBRARY_PATH=$rt timeout 60 $NEW --device=gpu --data_type=$t --ops=mvn1 --sizes=$((r * c)) --mvn_rows=$r --cache_mib=50 --engine_requests=0 --show_plan > $OUT/plan_$t.txt 2>&1; run new_nv0 $NEW mvn1_nv0; run prev_nv0 $OLD mvn1_nv0; }
done; done
} 2>&1 | tee $OUT/bench.log
b=.gpu/build
export DMLS_KERNELS_TEST_ADAPTER=gpu
t() { LD_LIBRARY_PATH=$rt timeout ${2:-150} $b/$1 2>&1 | grep -vE "fixme|\[info\]" ; }
t tests/mvn/mvn_schedule_gpu_test > $OUT/schedule.log
t tests/mvn/mvn_numerics_gpu_test 200 > $OUT/numerics.log
DMLS_CONFORMANCE_DATA_DIR=tests/data t tests/conformance/conformance_gpu_test 200 > $OUT/corpus.log
grep -hE "^\[  (PASSED|FAILED)|cases passed|FAIL " $OUT/*.log | head -40
