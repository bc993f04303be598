#!/usr/bin/env bash
# Visit 1 (issue 26, session 29): the 1,024-thread row of 16 elements a
# thread (KernelKey::long_row) for groups of 8,193 to 16,384 elements
# against the two passes that took them (--mvn_no_long_row), same binary,
# .gpu/l1 (9d6b741). MVN1 alone and with a Scale and Bias per column
# (mvn1_affine), FLOAT16 and FLOAT32, 2^27 elements a tensor; the issue's
# shapes for the record; kernel statistics. Two rounds.
set -uo pipefail
FINAL=${OUT:-/tmp/out}; OUT=/tmp/logs; mkdir -p "$OUT" "$FINAL"
source bench/gpu_env.sh
ours() { LD_LIBRARY_PATH=$rt timeout 120 "$@"; }
B=${B:-.gpu/l1}/bench/dmls_bench
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee "$OUT/machine.log"
for t in float16 float32; do
  ours $B --kernel_stats --ops=mvn1,mvn1_affine --cache_mib=50 --sizes=$((8192 * 16384)) \
    --mvn_rows=8192 --data_type=$t > "$OUT/stats_${t}.log" 2>&1
done
common="--device=gpu --cache_mib=50 --no_dispatch_cost --engine_requests=0 --iters=50"
for round in 1 2; do
  for t in float16 float32; do
    for c in 8200 12288 16384; do
      r=$(( (1 << 27) / c ))
      for op in mvn1 mvn1_affine; do
        for v in "long:" "twopass:--mvn_no_long_row"; do
          name=${v%%:*}; flags=${v#*:}
          ours $B $common --ops=$op --sizes=$((r * c)) --mvn_rows=$r --data_type=$t $flags \
            > "$OUT/r${round}_${t}_${op}_${r}x${c}_$name.log" 2>&1
        done
      done
    done
    for shape in 512x262143 4096x32768 65536x1024; do
      r=${shape%x*}; c=${shape#*x}
      ours $B $common --ops=mvn1 --sizes=$((r * c)) --mvn_rows=$r --data_type=$t \
        > "$OUT/r${round}_${t}_issue_${shape}.log" 2>&1
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
cp "$OUT/summary.txt" "$FINAL/v1-summary.txt"; tar czf "$FINAL/v1-logs.tgz" -C "$OUT" .
