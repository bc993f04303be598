#!/usr/bin/env bash
# Visit 2 (issue 26, session 28): the workgroup reduction of the MVN
# statistics with two (e2) or three (e3) tree levels between barriers
# (MvnStatsEmitter::ReduceByBarriers; the same bits as one level a barrier,
# checked on lavapipe), against k0 (.gpu/k0, main at 54649b5). Kernel
# statistics of each, then every shape of the issue, two rounds alternating.
set -uo pipefail
FINAL=${OUT:-/tmp/out}; OUT=/tmp/logs; mkdir -p "$OUT" "$FINAL"
source bench/gpu_env.sh
ours() { LD_LIBRARY_PATH=$rt timeout 120 "$@"; }
builds=${BUILDS:-"k0 e2 e3"}
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee "$OUT/machine.log"
shapes="512x262143 4096x32768 65536x1024"
for l in $builds; do
  for t in float16 float32; do
    for s in $shapes; do
      r=${s%x*}; c=${s#*x}
      ours .gpu/$l/bench/dmls_bench --kernel_stats --ops=mvn1 --cache_mib=50 --sizes=$((r * c)) \
        --mvn_rows=$r --data_type=$t > "$OUT/stats_${l}_${t}_$s.log" 2>&1
    done
  done
done
common="--device=gpu --ops=mvn1 --cache_mib=50 --no_dispatch_cost --engine_requests=0 --iters=50"
for round in 1 2; do
  for t in float16 float32; do
    for s in $shapes; do
      r=${s%x*}; c=${s#*x}
      for l in $builds; do
        ours .gpu/$l/bench/dmls_bench $common --sizes=$((r * c)) --mvn_rows=$r --data_type=$t \
          > "$OUT/r${round}_${t}_${s}_$l.log" 2>&1
      done
    done
  done
done
{
  echo "== kernel stats (registers, local memory - 2^36)"
  for f in "$OUT"/stats_*.log; do
    echo "-- $(basename $f)"
    awk -F'; ' '/stats/ {split($1, a, ": "); k=a[2]; sub(/ op=.*variant=/, " v", k);
      for (i = 2; i <= NF; i++) { split($i, kv, " = "); if (kv[1] == "Register Count") r = kv[2];
        if (kv[1] == "Local Memory Size") lm = kv[2] - 68719476736 }
      print "  " k " regs " r " local " lm}' $f
    grep -i error $f
  done
  echo "== dmls_bench us/exec"
  for f in "$OUT"/r*.log; do
    echo "$(basename $f): $(awk '$1=="mvn1" && $3 ~ /^[0-9]+$/ {print $7}' $f) $(grep -m1 -i error $f)"
  done
} > "$OUT/summary.txt"
cat "$OUT/summary.txt"
cp "$OUT/summary.txt" "$FINAL/"; tar czf "$FINAL/logs.tgz" -C "$OUT" .
