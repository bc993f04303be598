#!/usr/bin/env bash
# Visit 4 (issue 26, session 34): where the FLOAT16 wide row (512 threads of
# 64 elements since 49e1fae) stops beating the two passes, .gpu/f1, two
# rounds: rows of 28,672 to 32,768 elements, about 2^27 elements a tensor,
# the wide row (default above 24,576 at 49e1fae) against --mvn_no_row.
set -uo pipefail
FINAL=${OUT:-/tmp/out}; OUT=/tmp/logs; mkdir -p "$OUT" "$FINAL"
source bench/gpu_env.sh
common="--device=gpu --cache_mib=50 --no_dispatch_cost --engine_requests=0 --iters=50 --ops=mvn1"
for round in 1 2; do
  for c in 28672 29696 30720 31744 32768; do
    r=$(( (1 << 27) / c ))
    for v in "wide:" "twopass:--mvn_no_row"; do
      LD_LIBRARY_PATH=$rt timeout 120 .gpu/f1/bench/dmls_bench $common --sizes=$((r * c)) \
        --mvn_rows=$r --data_type=float16 ${v#*:} > "$OUT/x4r${round}_${r}x${c}_${v%%:*}.log" 2>&1
    done
  done
done
for f in "$OUT"/x4r*.log; do
  echo "$(basename $f .log): $(awk '$1 ~ /^mvn1/ && $3 ~ /^[0-9]+$/ {print $7}' $f) $(grep -m1 -iE 'error' $f)"
done | tee "$FINAL/x4-summary.txt"
