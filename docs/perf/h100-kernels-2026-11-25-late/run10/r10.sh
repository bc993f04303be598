#!/usr/bin/env bash
# Stop 18, run 10: the FLOAT32 wide row kernel with its per-element branch
# back (run 9 lost 7% without it); NormalizeVariance FALSE (exact-mean
# sums) against main before this stop; then the GPU tests (r7.sh).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source bench/gpu_env.sh
NEW=.gpu/build/bench/dmls_bench; OLD=.gpu/build_old/bench/dmls_bench
run() { local tag=$1 bin=$2 op=$3; shift 3; LD_LIBRARY_PATH=$rt timeout 60 $bin --device=gpu --data_type=$t --ops=$op --sizes=$((r * c)) --mvn_rows=$r --cache_mib=50 --no_dispatch_cost --engine_requests=0 "$@" 2>&1 | grep -E "^ *mvn1" | sed "s/^/$t $s $tag /"; }
{
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for t in float32 float16; do for s in 512x262143 4096x32768 65536x1024; do r=${s%x*}; c=${s#*x}
  [ $t = float32 ] && [ $s = 4096x32768 ] && { timeout 60 python3 bench/torch_anchors.py --dtype=$t --rows=$r --cols=$c --elements=$((r * c)) --iters=100 2>&1 | grep -E "^layer_norm" | sed "s/^/$t $s /"; run default $NEW mvn1; run vec4_two_pass $NEW mvn1 --mvn_no_row; run default $NEW mvn1; }
  run nv0 $NEW mvn1_nv0
  run nv0_words $NEW mvn1_nv0 --mvn_vec4=0
  run nv0_old $OLD mvn1_nv0
done; done
} 2>&1 | tee $OUT/bench.log
bash .gpu/r7.sh
