#!/usr/bin/env bash
# Cooperative MVN variants (kernel-build-time env knobs of an experiment
# build): DMLS_COOP_EXP bit 1 = no ticket (hardware group order), bit 2 =
# the last chunk in combines and publishes the final statistic;
# DMLS_COOP_BACKOFF=N dependent integer ops between polls.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source bench/gpu_env.sh
b=.gpu/build; B=$b/bench/dmls_bench
ours() { LD_LIBRARY_PATH=$rt "$@"; }
run() { local tag=$1; shift; ours env "$@" $B --device=gpu --data_type=$t --ops=mvn1 --sizes=$((r * c)) --mvn_rows=$r --no_dispatch_cost --engine_requests=0 $EXTRA 2>&1 | grep -E "^  mvn1" | sed "s/^/$t $s $tag /"; }
{
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for cfg in "float32 512x262143" "float32 4096x32768" "float16 512x262143" "float16 4096x32768"; do
  t=${cfg% *}; s=${cfg#* }; r=${s%x*}; c=${s#*x}
  python3 bench/torch_anchors.py --dtype=$t --rows=$r --cols=$c --elements=$((r * c)) --iters=100 2>&1 | grep -E "^layer_norm" | sed "s/^/$t $s /"
  EXTRA=--mvn_no_coop run nocoop X=1
  EXTRA= run exp0 DMLS_COOP_EXP=0
  EXTRA=--mvn_coop_spin_limit=1048576 run exp0_spin1M DMLS_COOP_EXP=0
  EXTRA= run exp1 DMLS_COOP_EXP=1
  EXTRA= run exp2 DMLS_COOP_EXP=2
  EXTRA= run exp3 DMLS_COOP_EXP=3
  EXTRA= run exp3_bo16 DMLS_COOP_EXP=3 DMLS_COOP_BACKOFF=16
  EXTRA= run exp1_bo16 DMLS_COOP_EXP=1 DMLS_COOP_BACKOFF=16
  EXTRA= run exp0_bo64 DMLS_COOP_EXP=0 DMLS_COOP_BACKOFF=64
done
} 2>&1 | tee $OUT/bench.log
