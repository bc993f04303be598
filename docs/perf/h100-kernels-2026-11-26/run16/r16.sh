#!/usr/bin/env bash
# Session 19, run 16: MVN1 with Scale and Bias (mvn1_affine) after the
# planner stopped giving it the wide row kernel (9157ae4), beside PyTorch's
# layer_norm with weight and bias; the MVN schedule GPU test and the corpus.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source bench/gpu_env.sh
NEW=.gpu/build/bench/dmls_bench
run() { local tag=$1 op=$2; shift 2; LD_LIBRARY_PATH=$rt timeout 60 $NEW --device=gpu --data_type=$t --ops=$op --sizes=$((r * c)) --mvn_rows=$r --cache_mib=50 --no_dispatch_cost --engine_requests=0 "$@" 2>&1 | grep -E "^mvn1|schedule" | sed "s/^/$t $s $tag /"; }
{
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for t in float32 float16; do for s in 4096x32768 65536x1024 512x262143; do r=${s%x*}; c=${s#*x}
  timeout 60 python3 bench/torch_anchors.py --dtype=$t --rows=$r --cols=$c --elements=$((r * c)) --iters=100 2>&1 | grep -E "^layer_norm" | sed "s/^/$t $s /"
  for round in 1 2; do run default mvn1_affine --show_plan; done
done; done
} 2>&1 | tee $OUT/bench.log
export DMLS_KERNELS_TEST_ADAPTER=gpu
t() { LD_LIBRARY_PATH=$rt timeout ${2:-150} .gpu/build/$1 2>&1 | grep -vE "fixme|\[info\]" ; }
t tests/mvn/mvn_schedule_gpu_test > $OUT/schedule.log
DMLS_CONFORMANCE_DATA_DIR=tests/data t tests/conformance/conformance_gpu_test 200 > $OUT/corpus.log
grep -hE "^\[  (PASSED|FAILED)" $OUT/schedule.log $OUT/corpus.log
