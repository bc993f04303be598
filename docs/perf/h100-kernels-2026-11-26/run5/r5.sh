#!/usr/bin/env bash
# Lag sweep of the cooperative MVN1 schedule (--cache_mib sets it: lag =
# cache/4 / row bytes), beside the two passes, FLOAT32.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source bench/gpu_env.sh
B=.gpu/build/bench/dmls_bench
ours() { LD_LIBRARY_PATH=$rt "$@"; }
{
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for s in 512x262143 4096x32768; do r=${s%x*}; c=${s#*x}
  for m in nocoop 1 4 8 16; do
    if [ $m = nocoop ]; then x=--mvn_no_coop; else x=--cache_mib=$m; fi
    ours $B --device=gpu --data_type=float32 --ops=mvn1 --sizes=$((r * c)) --mvn_rows=$r --no_dispatch_cost --engine_requests=0 $x 2>&1 | grep -E "^  mvn1" | sed "s/^/$s cache=$m /"
  done
done
} 2>&1 | tee $OUT/bench.log
