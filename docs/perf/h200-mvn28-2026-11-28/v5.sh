#!/usr/bin/env bash
# Visit 5 (issue 26, session 28): the 512-thread row (kMvnVariantMediumRow,
# 16 elements a thread) for groups of 4,097 to 8,192 elements against the
# two passes that took them (--mvn_no_medium_row), .gpu/m6 (0db998a + the
# medium row). Texel loads, word loads (--mvn_vec4=0, odd N) and MVN1 with
# a Scale and Bias per column (mvn1_affine); kernel statistics. Two rounds.
set -uo pipefail
FINAL=${OUT:-/tmp/out}; OUT=/tmp/logs; mkdir -p "$OUT" "$FINAL"
source bench/gpu_env.sh
ours() { LD_LIBRARY_PATH=$rt timeout 120 "$@"; }
B=.gpu/m6/bench/dmls_bench
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee "$OUT/machine.log"
for t in float16 float32; do
  ours $B --kernel_stats --ops=mvn1,mvn1_affine --cache_mib=50 --sizes=$((16384 * 8192)) \
    --mvn_rows=16384 --data_type=$t > "$OUT/stats_${t}.log" 2>&1
done
common="--device=gpu --cache_mib=50 --no_dispatch_cost --engine_requests=0 --iters=50"
for round in 1 2; do
  for t in float16 float32; do
    for c in 4104 6144 8192 8191; do
      r=$(( (1 << 27) / c ))
      for op in mvn1 mvn1_affine; do
        for v in "medium:" "twopass:--mvn_no_medium_row"; do
          name=${v%%:*}; flags=${v#*:}
          ours $B $common --ops=$op --sizes=$((r * c)) --mvn_rows=$r --data_type=$t $flags \
            > "$OUT/r${round}_${t}_${op}_${r}x${c}_$name.log" 2>&1
        done
      done
    done
  done
done
{
  echo "== kernel stats"
  for f in "$OUT"/stats_*.log; do echo "-- $(basename $f)"; grep -E "stats|rror" $f | cut -c1-300; done
  echo "== dmls_bench us/exec"
  for f in "$OUT"/r*.log; do
    echo "$(basename $f): $(awk '$1 ~ /^mvn1/ && $3 ~ /^[0-9]+$/ {print $7}' $f) $(grep -m1 -i error $f)"
  done
} > "$OUT/summary.txt"
cat "$OUT/summary.txt"
cp "$OUT/summary.txt" "$FINAL/"; tar czf "$FINAL/logs.tgz" -C "$OUT" .
