#!/usr/bin/env bash
# Visit 4 (issue 26, session 35): with the second pass reversed (3a8b065,
# .gpu/s35b = its dmls_bench, stripped), does the blocked schedule (row
# blocks that fit the L2: statistics then normalisation per block) or the
# cooperative one now beat the plain two passes? Two rounds.
set -uo pipefail
FINAL=${OUT:-/tmp/out}; OUT=/tmp/logs; mkdir -p "$OUT" "$FINAL"
source bench/gpu_env.sh
common="--device=gpu --cache_mib=50 --no_dispatch_cost --engine_requests=0 --iters=50 --ops=mvn1"
shapes="float16:512x262143 float32:512x262143 float16:8192x16384 float32:8192x16384"
for round in 1 2; do
  for s in $shapes; do
    t=${s%%:*} rc=${s#*:} r=${rc%x*} c=${rc#*x}
    for v in "default:" "b8m:--mvn_block_kib=8192" "b16m:--mvn_block_kib=16384" \
             "b24m:--mvn_block_kib=24576" "b40m:--mvn_block_kib=40960" "coop:--mvn_coop_max_chunks=4"; do
      LD_LIBRARY_PATH=$rt timeout 120 .gpu/s35b/bench/dmls_bench $common --sizes=$((r * c)) \
        --mvn_rows=$r --data_type=$t ${v#*:} > "$OUT/x6r${round}_${t}_${rc}_${v%%:*}.log" 2>&1
    done
  done
done
for f in "$OUT"/x6r*.log; do
  echo "$(basename $f .log): $(awk '$1 ~ /^mvn1/ && $3 ~ /^[0-9]+$/ {print $7}' $f) $(grep -m1 -iE 'error' $f)"
done | tee "$FINAL/x6-summary.txt"
