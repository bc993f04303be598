#!/usr/bin/env bash
# Visit 3 (issue 26, stop 27): the statistics pass computing each deviation
# once (m4: 61399cc plus kMvnPartial's unmasked chunks overwriting x[j]
# with its deviation) against m3 (61399cc), 512 x 262,143, two rounds
# alternating, whole MVN1 and the statistics pass; then the MVN GPU tests
# of m4 (numerics with a longer limit than tests.sh's 150 s).
set -uo pipefail
FINAL=${OUT:-/tmp/out}; OUT=/tmp/logs; mkdir -p "$OUT" "$FINAL"
source bench/gpu_env.sh
ours() { LD_LIBRARY_PATH=$rt timeout 60 "$@"; }
declare -A bin=([m3]=.gpu/m3/bench/dmls_bench [m4]=.gpu/m4/bench/dmls_bench)
common="--device=gpu --ops=mvn1 --cache_mib=50 --no_dispatch_cost --engine_requests=0 --iters=50"
r=512; c=262143
for round in 1 2; do
  for t in float16 float32; do
    for l in m3 m4; do
      sz="--sizes=$((r * c)) --mvn_rows=$r --data_type=$t"
      ours ${bin[$l]} $common $sz > "$OUT/r${round}_${t}_$l.log" 2>&1
      ours ${bin[$l]} $common $sz --only_dispatch=0 > "$OUT/r${round}_pass0_${t}_$l.log" 2>&1
    done
  done
done
{
  echo "== dmls_bench us/exec (512 x 262,143)"
  for f in "$OUT"/r*.log; do
    echo "$(basename $f): $(awk '$1=="mvn1" && $3 ~ /^[0-9]+$/ {print $7}' $f) $(grep -m1 -i error $f)"
  done
  for t in mvn_schedule_gpu_test mvn_numerics_gpu_test; do
    s=$(date +%s)
    DMLS_KERNELS_TEST_ADAPTER=gpu timeout 280 env LD_LIBRARY_PATH=$rt .gpu/m4/tests/mvn/$t 2>&1 | grep -E "PASSED|FAILED|tests ran" | tail -4
    echo "$t (m4) in $(( $(date +%s) - s )) s"
  done
} > "$OUT/summary.txt" 2>&1
cat "$OUT/summary.txt"
cp "$OUT/summary.txt" "$FINAL/"; tar czf "$FINAL/logs.tgz" -C "$OUT" .
