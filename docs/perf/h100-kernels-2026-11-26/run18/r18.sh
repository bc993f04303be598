#!/usr/bin/env bash
# Session 19, run 18: MVN1 with Scale and Bias (mvn1_affine) at 4,096 x
# 32,768, one operator per process: the wide row kernel (forced with
# --mvn_wide_row) against the two passes the planner now takes (runs 14-15
# measured the wide row only as the second operator of a process).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source bench/gpu_env.sh
NEW=.gpu/build/bench/dmls_bench
run() { local tag=$1 op=$2; shift 2; LD_LIBRARY_PATH=$rt timeout 60 $NEW --device=gpu --data_type=$t --ops=$op --sizes=$((r * c)) --mvn_rows=$r --cache_mib=50 --no_dispatch_cost --engine_requests=0 "$@" 2>&1 | grep -E "^mvn1" | sed "s/^/$t $s $tag /"; }
{
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for t in float32 float16; do s=4096x32768; r=4096; c=32768
  for round in 1 2; do
    run wide_row mvn1_affine --mvn_wide_row
    run default mvn1_affine
    run plain_wide_row mvn1
  done
done
} 2>&1 | tee $OUT/bench.log
