#!/usr/bin/env bash
# Visit 3 (issue 26, session 28): m5 = .gpu/m5 (two tree levels between
# barriers in workgroups of 256 and 1,024 threads, LevelsPerBarrier) against
# k0 = .gpu/k0 (main at 54649b5) at the issue's shapes and at shapes whose
# kernels also changed (the 256-thread row of 4,096 elements, the wide row
# at 8,192 and 16,384, the word-load two passes); then, for FLOAT16 and
# FLOAT32 4,096 x 32,768, the other schedules (blocked at several block
# sizes, cooperative) with m5. Two rounds alternating.
set -uo pipefail
FINAL=${OUT:-/tmp/out}; OUT=/tmp/logs; mkdir -p "$OUT" "$FINAL"
source bench/gpu_env.sh
ours() { LD_LIBRARY_PATH=$rt timeout 120 "$@"; }
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee "$OUT/machine.log"
shapes="512x262143 4096x32768 65536x1024 32768x4096 16384x8192 8192x16384 512x262144"
common="--device=gpu --ops=mvn1 --cache_mib=50 --no_dispatch_cost --engine_requests=0 --iters=50"
for round in 1 2; do
  for t in float16 float32; do
    for s in $shapes; do
      r=${s%x*}; c=${s#*x}
      for l in k0 m5; do
        ours .gpu/$l/bench/dmls_bench $common --sizes=$((r * c)) --mvn_rows=$r --data_type=$t \
          > "$OUT/r${round}_${t}_${s}_$l.log" 2>&1
      done
    done
  done
done
for t in float16 float32; do
  sz="--sizes=$((4096 * 32768)) --mvn_rows=4096 --data_type=$t"
  for v in "norow:--mvn_no_row" "blocked:--mvn_no_row --mvn_blocked" \
           "block2m:--mvn_no_row --mvn_block_kib=2048" "block8m:--mvn_no_row --mvn_block_kib=8192" \
           "coop8:--mvn_no_row --mvn_coop_max_chunks=8"; do
    name=${v%%:*}; flags=${v#*:}
    ours .gpu/m5/bench/dmls_bench $common $sz $flags --show_plan > "$OUT/alt_${t}_$name.log" 2>&1
  done
done
{
  echo "== dmls_bench us/exec"
  for f in "$OUT"/r*.log "$OUT"/alt*.log; do
    echo "$(basename $f): $(awk '$1=="mvn1" && $3 ~ /^[0-9]+$/ {print $7}' $f) $(grep -m1 'mvn schedule' $f | cut -c1-60) $(grep -m1 -i error $f)"
  done
} > "$OUT/summary.txt"
cat "$OUT/summary.txt"
cp "$OUT/summary.txt" "$FINAL/"; tar czf "$FINAL/logs.tgz" -C "$OUT" .
