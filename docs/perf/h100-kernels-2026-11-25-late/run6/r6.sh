#!/usr/bin/env bash
# Stop 18, run 6: MVN1 with 16-byte texel loads (kMvnVariantVec4) beside
# one word per element (--mvn_vec4=0) and PyTorch's layer_norm, FLOAT32 and
# FLOAT16, two rounds, one process per measurement (as run1/r1.sh); the
# wide-row kernel at 4,096 x 32,768; MVN1 with NormalizeVariance FALSE
# (exact-mean statistics) beside NormalizeVariance TRUE. Needs .gpu/build.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source bench/gpu_env.sh
b=.gpu/build; B=$b/bench/dmls_bench
run() { local tag=$1 op=$2; shift 2; LD_LIBRARY_PATH=$rt timeout 60 $B --device=gpu --data_type=$t --ops=$op --sizes=$((r * c)) --mvn_rows=$r --cache_mib=50 --no_dispatch_cost --engine_requests=0 "$@" 2>&1 | grep -E "^ *mvn1|mvn schedule|schedule" | sed "s/^/$round $t $s $tag /"; }
{
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for t in float32 float16; do timeout 60 python3 bench/torch_anchors.py --dtype=$t --elements=134217728 --iters=50 2>&1 | grep -E "^copy"; done
for round in 1 2; do for t in float32 float16; do for s in 512x262143 4096x32768 65536x1024; do r=${s%x*}; c=${s#*x}
  timeout 60 python3 bench/torch_anchors.py --dtype=$t --rows=$r --cols=$c --elements=$((r * c)) --iters=100 2>&1 | grep -E "^layer_norm" | sed "s/^/$round $t $s /"
  run words mvn1 --mvn_vec4=0 $([ $round = 1 ] && echo --show_plan)
  run vec4 mvn1 --mvn_vec4=1 $([ $round = 1 ] && echo --show_plan)
  [ $s = 4096x32768 ] && run vec4wide mvn1 --mvn_vec4=1 --mvn_wide_row
  [ $round = 1 ] && run nv0 mvn1_nv0
done; done; done
} 2>&1 | tee $OUT/bench.log
