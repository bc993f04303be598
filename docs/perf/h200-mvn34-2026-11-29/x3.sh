#!/usr/bin/env bash
# Visit 3 (issue 26, session 34): before (.gpu/xp1, main at 9c9bbc1 plus
# the experiment's variables, none set here) against after (.gpu/f1,
# 49e1fae: FLOAT16 texel kernels with half the threads, MvnEmitter::
# HalvesThreads), two rounds alternating, µs per MVN1 at the issue's shapes
# and at the shapes each FLOAT16 kernel kind runs; the wide-row and
# medium-row thresholds (mvn_plan.cc) with the new kernels; PyTorch's copy
# and layer_norm beside them; then the MVN GPU tests of the after build.
set -uo pipefail
FINAL=${OUT:-/tmp/out}; OUT=/tmp/logs; mkdir -p "$OUT" "$FINAL"
source bench/gpu_env.sh
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee "$OUT/machine.log"
common="--device=gpu --cache_mib=50 --no_dispatch_cost --engine_requests=0 --iters=50"
# type:shape:flags
cases="float16:512x262143:
float16:4096x32768:
float16:65536x1024:
float32:512x262143:
float32:4096x32768:
float32:65536x1024:
float16:32768x4096:
float16:16384x8192:
float16:8192x16384:
float16:16386x8191:
float16:65536x1023:
float16:65536x1024:--ops=mvn1_affine
float16:16384x8192:--ops=mvn1_affine
float16:4096x32768:--ops=mvn1_affine
float16:10922x12288:--mvn_wide_row
float16:5461x24576:
float16:5461x24576:--mvn_wide_row
float16:4681x28672:
float16:4681x28672:--mvn_no_row
float16:16384x8192:--mvn_no_medium_row"
for round in 1 2; do
  while IFS=: read -r t s flags; do
    r=${s%x*}; c=${s#*x}
    tag=$(echo "$flags" | tr -d ' -' | tr '=' '_')
    for b in xp1 f1; do
      LD_LIBRARY_PATH=$rt timeout 120 .gpu/$b/bench/dmls_bench $common --ops=mvn1 --sizes=$((r * c)) \
        --mvn_rows=$r --data_type=$t $flags --show_plan \
        > "$OUT/r${round}_${t}_${s}${tag:+_$tag}_$b.log" 2>&1
    done
  done <<< "$cases"
done
for t in float16 float32; do
  for s in 65536x1024 4096x32768 512x262143; do
    r=${s%x*}; c=${s#*x}
    timeout 120 python3 bench/torch_anchors.py --elements $((r * c)) --rows $r --cols $c --dtype $t \
      > "$OUT/torch_${t}_${s}.log" 2>&1
  done
done
{
  echo "== dmls_bench us/exec (before xp1, after f1)"
  for f in "$OUT"/r*_f1.log; do
    b=${f%_f1.log}_xp1.log
    echo "$(basename ${f%_f1.log}): $(awk '$1 ~ /^mvn1/ && $3 ~ /^[0-9]+$/ {print $7}' $b) -> $(awk '$1 ~ /^mvn1/ && $3 ~ /^[0-9]+$/ {print $7}' $f) | $(grep -m1 'mvn schedule' $f | cut -c17-60) $(grep -m1 -iE 'error|bad ' $f)"
  done
  echo "== torch"
  for f in "$OUT"/torch_*.log; do echo "-- $(basename $f .log)"; grep -E "^(copy|layer_norm) " $f; done
} > "$OUT/x3-summary.txt"
cat "$OUT/x3-summary.txt"
cp "$OUT/x3-summary.txt" "$FINAL/"
A=.gpu/f1 OUT=$FINAL bash docs/perf/h200-mvn28-2026-11-28/tests.sh
tar czf "$FINAL/x3-logs.tgz" -C "$OUT" .
