#!/usr/bin/env bash
# Stop 18, run 9: after run 8's fixes (no overflow branch in plain MVN1;
# exact-mean statistics as compensated sums): defaults, word loads, and
# NormalizeVariance FALSE against main before this stop (b1926f3,
# .gpu/build_old), beside layer_norm; one round.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source bench/gpu_env.sh
NEW=.gpu/build/bench/dmls_bench; OLD=.gpu/build_old/bench/dmls_bench
run() { local tag=$1 bin=$2 op=$3; shift 3; LD_LIBRARY_PATH=$rt timeout 60 $bin --device=gpu --data_type=$t --ops=$op --sizes=$((r * c)) --mvn_rows=$r --cache_mib=50 --no_dispatch_cost --engine_requests=0 "$@" 2>&1 | grep -E "^ *mvn1 " | sed "s/^/$t $s $tag /"; }
{
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for t in float32 float16; do for s in 512x262143 4096x32768 65536x1024; do r=${s%x*}; c=${s#*x}
  timeout 60 python3 bench/torch_anchors.py --dtype=$t --rows=$r --cols=$c --elements=$((r * c)) --iters=100 2>&1 | grep -E "^layer_norm" | sed "s/^/$t $s /"
  run default $NEW mvn1
  run words $NEW mvn1 --mvn_vec4=0
  run old $OLD mvn1
  run nv0 $NEW mvn1_nv0
  run nv0_words $NEW mvn1_nv0 --mvn_vec4=0
  run nv0_old $OLD mvn1_nv0
done; done
} 2>&1 | tee $OUT/bench.log
