#!/usr/bin/env bash
# Session 20, run 23 (experiment build, not committed: .gpu/build_exp is
# main at b3ea499 with DMLS_EXP_SB_BATCH, read at kernel build time, for
# how many texels' Scale/Bias the row kernels load at once in the
# normalisation; 1 = main). MVN1 with Scale/Bias, one operator per process.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source bench/gpu_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/device.txt
EXP=.gpu/build_exp/bench/dmls_bench
run() { local tag=$1; shift 1; LD_LIBRARY_PATH=$rt timeout 60 $EXP --device=gpu --data_type=$t --ops=mvn1_affine --sizes=$((r * c)) --mvn_rows=$r --cache_mib=50 --no_dispatch_cost --engine_requests=0 "$@" 2>&1 | grep -E "^mvn1" | sed "s/^/$t $s $tag /"; }
{
cat $OUT/device.txt
for t in float32 float16; do for s in 4096x32768 65536x1024 16384x4096; do r=${s%x*}; c=${s#*x}
  for round in 1 2; do for b in 1 2 4 8; do
    if [ $s = 4096x32768 ]; then DMLS_EXP_SB_BATCH=$b run wide_batch$b --mvn_wide_row; else DMLS_EXP_SB_BATCH=$b run batch$b; fi
  done; done
  [ $s = 4096x32768 ] && run two_pass
done; done
} 2>&1 | tee $OUT/bench.log
