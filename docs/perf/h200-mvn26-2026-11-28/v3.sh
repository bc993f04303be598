#!/usr/bin/env bash
# Visit 3 (issue 26, stop 26): (a) statistics with 64 elements a thread in
# the long span (.gpu/mvn26/exp64: 3fb00fd with kMvnLongSpanElementsPerThread
# = 64) against 32 (.gpu/mvn26/after3 = 22b7b0a + winx); (b) MVN1 with a
# Scale and a Bias per column (--ops=mvn1_affine) normalised by texels
# (default) and by words (--mvn_span_normalise=0). Two rounds alternating.
set -uo pipefail
FINAL=${OUT:-/tmp/out}; OUT=/tmp/logs; mkdir -p "$OUT" "$FINAL"
source bench/gpu_env.sh
ours() { LD_LIBRARY_PATH=$rt timeout 60 "$@"; }
A=.gpu/mvn26/after3/dmls_bench; X=.gpu/mvn26/exp64/dmls_bench
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee "$OUT/machine.log"
r=512; c=262143
common="--device=gpu --cache_mib=50 --no_dispatch_cost --engine_requests=0 --iters=50 --sizes=$((r * c)) --mvn_rows=$r"
for round in 1 2; do
  for t in float16 float32; do
    for d in 0 all; do
      od=""; [[ $d == 0 ]] && od="--only_dispatch=0"
      ours $A $common --ops=mvn1 --data_type=$t $od > "$OUT/r${round}_${t}_p${d}_32.log" 2>&1
      ours $X $common --ops=mvn1 --data_type=$t $od > "$OUT/r${round}_${t}_p${d}_64.log" 2>&1
    done
    ours $A $common --ops=mvn1_affine --data_type=$t > "$OUT/r${round}_${t}_affine_texels.log" 2>&1
    ours $A $common --ops=mvn1_affine --data_type=$t --mvn_span_normalise=0 > "$OUT/r${round}_${t}_affine_words.log" 2>&1
  done
done
{
  echo "== dmls_bench us/exec"
  for f in "$OUT"/r*.log; do
    echo "$(basename $f): $(awk '($1=="mvn1" || $1=="mvn1_affine") && $3 ~ /^[0-9]+$/ {print $7}' $f) $(grep -m1 -i error $f)"
  done
} > "$OUT/summary.txt"
cat "$OUT/summary.txt"
cp "$OUT/summary.txt" "$FINAL/"; tar czf "$FINAL/logs.tgz" -C "$OUT" .
