#!/usr/bin/env bash
# Visit 6 (issue 26, session 28): groups of 8,193-24,576 elements, which
# take the two passes: FLOAT16 with each group's partials combined once
# (--mvn_combine_min_chunks=2) against the default (no combine below 16
# chunks), and FLOAT32 with the combine too; .gpu/m7 (main at fee2960).
set -uo pipefail
FINAL=${OUT:-/tmp/out}; OUT=/tmp/logs6; mkdir -p "$OUT" "$FINAL"
source bench/gpu_env.sh
ours() { LD_LIBRARY_PATH=$rt timeout 60 "$@"; }
B=${B:-.gpu/m7/bench/dmls_bench}
common="--device=gpu --ops=mvn1 --cache_mib=50 --no_dispatch_cost --engine_requests=0 --iters=50"
for round in 1 2; do
  for t in float16 float32; do
    for c in 12288 16384 24576; do
      r=$(( (1 << 27) / c ))
      for v in "default:" "combine2:--mvn_combine_min_chunks=2 --mvn_combine_float32"; do
        name=${v%%:*}; flags=${v#*:}
        ours $B $common --sizes=$((r * c)) --mvn_rows=$r --data_type=$t $flags \
          > "$OUT/r${round}_${t}_${r}x${c}_$name.log" 2>&1
      done
    done
  done
done
for f in "$OUT"/r*.log; do
  echo "$(basename $f): $(awk '$1=="mvn1" && $3 ~ /^[0-9]+$/ {print $7}' $f) $(grep -m1 -i error $f)"
done > "$FINAL/v6-summary.txt"
cat "$FINAL/v6-summary.txt"
