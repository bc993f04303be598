#!/usr/bin/env bash
# Visit 5 (issue 26, session 35): FLOAT16 rows of 8,193-31,744 elements
# (about 2^27 elements a tensor), which take the two passes: the default
# plan against the planner's other choices that need no new kernel (a
# combine dispatch from 2 chunks, the wide row). .gpu/s35b (3a8b065's
# dmls_bench); two rounds.
set -uo pipefail
FINAL=${OUT:-/tmp/out}; OUT=/tmp/logs; mkdir -p "$OUT" "$FINAL"
source bench/gpu_env.sh
common="--device=gpu --cache_mib=50 --no_dispatch_cost --engine_requests=0 --iters=50 --ops=mvn1"
for round in 1 2; do
  for c in 10240 12288 16384 20480 24576 28672; do
    r=$(( (1 << 27) / c ))
    for v in "default:" "combine2:--mvn_combine_min_chunks=2" "wide:--mvn_wide_row"; do
      LD_LIBRARY_PATH=$rt timeout 120 .gpu/s35b/bench/dmls_bench $common --sizes=$((r * c)) \
        --mvn_rows=$r --data_type=float16 ${v#*:} > "$OUT/x7r${round}_${r}x${c}_${v%%:*}.log" 2>&1
    done
  done
done
for f in "$OUT"/x7r*.log; do
  echo "$(basename $f .log): $(awk '$1 ~ /^mvn1/ && $3 ~ /^[0-9]+$/ {print $7}' $f) $(grep -m1 -iE 'error' $f)"
done | tee "$FINAL/x7-summary.txt"
