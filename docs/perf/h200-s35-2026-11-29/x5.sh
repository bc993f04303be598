#!/usr/bin/env bash
# Visit 2 (issue 26, session 35): the normalisation pass of the two-pass
# MVN1 schedules walking the tensor from its end (DMLS_XP_REVERSE=1, the
# experiment reverse.patch) against from its start, so that it first
# reads what the statistics pass read last, while that is still in the
# L2. .gpu/xp2 = the build with reverse.patch (dmls_bench, stripped); two
# rounds, every shape both ways in the same round.
set -uo pipefail
FINAL=${OUT:-/tmp/out}; OUT=/tmp/logs; mkdir -p "$OUT" "$FINAL"
source bench/gpu_env.sh
common="--device=gpu --cache_mib=50 --no_dispatch_cost --engine_requests=0 --iters=50 --ops=mvn1"
shapes=${SHAPES:-"float16:512x262143 float32:512x262143 float16:8192x16384 float32:8192x16384 float16:4681x28672 float16:16386x8191 float32:4096x32768"}
for round in 1 2; do
  for s in $shapes; do
    t=${s%%:*} rc=${s#*:} r=${rc%x*} c=${rc#*x}
    for rev in 0 1; do
      DMLS_XP_REVERSE=$rev LD_LIBRARY_PATH=$rt timeout 120 .gpu/xp2/bench/dmls_bench $common \
        --sizes=$((r * c)) --mvn_rows=$r --data_type=$t > "$OUT/x5r${round}_${t}_${rc}_rev${rev}.log" 2>&1
    done
  done
done
for f in "$OUT"/x5r*.log; do
  echo "$(basename $f .log): $(awk '$1 ~ /^mvn1/ && $3 ~ /^[0-9]+$/ {print $7}' $f) $(grep -m1 -iE 'error' $f)"
done | tee "$FINAL/x5-summary.txt"
