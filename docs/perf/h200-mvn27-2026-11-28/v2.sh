#!/usr/bin/env bash
# Visit 2 (issue 26, stop 27): the reduction with constant weights where
# every thread's statistic counts the same number of elements (61399cc),
# every shape of the issue: before = .gpu/h0 (7183e63), m2 = .gpu/m2
# (213ff7c: statistics without masks), m3 = .gpu/m3 (61399cc). Two rounds
# alternating; the statistics pass at 512 x 262,143.
set -uo pipefail
FINAL=${OUT:-/tmp/out}; OUT=/tmp/logs; mkdir -p "$OUT" "$FINAL"
source bench/gpu_env.sh
ours() { LD_LIBRARY_PATH=$rt timeout 60 "$@"; }
declare -A bin=([before]=.gpu/h0/bench/dmls_bench [m2]=.gpu/m2/bench/dmls_bench [m3]=.gpu/m3/bench/dmls_bench)
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee "$OUT/machine.log"
common="--device=gpu --ops=mvn1 --cache_mib=50 --no_dispatch_cost --engine_requests=0 --iters=50"
for round in 1 2; do
  for t in float16 float32; do
    for s in 512x262143 4096x32768 65536x1024; do
      r=${s%x*}; c=${s#*x}
      sz="--sizes=$((r * c)) --mvn_rows=$r --data_type=$t"
      for l in before m2 m3; do
        ours ${bin[$l]} $common $sz > "$OUT/r${round}_${t}_${s}_$l.log" 2>&1
      done
    done
  done
done
r=512; c=262143
for t in float16 float32; do
  for l in before m2 m3; do
    ours ${bin[$l]} $common --sizes=$((r * c)) --mvn_rows=$r --data_type=$t --only_dispatch=0 \
      > "$OUT/pass0_${t}_$l.log" 2>&1
  done
done
{
  echo "== dmls_bench us/exec"
  for f in "$OUT"/r*.log "$OUT"/pass*.log; do
    echo "$(basename $f): $(awk '$1=="mvn1" && $3 ~ /^[0-9]+$/ {print $7}' $f) $(grep -m1 -i error $f)"
  done
} > "$OUT/summary.txt"
cat "$OUT/summary.txt"
cp "$OUT/summary.txt" "$FINAL/"; tar czf "$FINAL/logs.tgz" -C "$OUT" .
