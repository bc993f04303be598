#!/usr/bin/env bash
# Visit 1 (issue 26, stop 26): the FLOAT16 statistics pass at 512 x 262,143.
# before = .gpu/prof/HEAD (main's dmls_bench, kernels of c175892);
# after  = .gpu/mvn26/after (texel masks once per texel; --mvn_long_span).
# Per pass (--only_dispatch=0: statistics) and whole, two rounds alternating,
# beside PyTorch's copy and layer_norm; FLOAT32 with the span options; then
# the MVN GPU tests of the after build on the hardware adapter.
set -uo pipefail
FINAL=${OUT:-/tmp/out}; OUT=/tmp/logs; mkdir -p "$OUT" "$FINAL"
source bench/gpu_env.sh
ours() { LD_LIBRARY_PATH=$rt timeout 60 "$@"; }
B=.gpu/prof/HEAD; A=.gpu/mvn26/after/dmls_bench
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee "$OUT/machine.log"
r=512; c=262143
common="--device=gpu --ops=mvn1 --cache_mib=50 --no_dispatch_cost --engine_requests=0 --iters=50 --sizes=$((r * c)) --mvn_rows=$r"
for t in float16 float32; do
  python3 bench/torch_anchors.py --dtype=$t --rows=$r --cols=$c --elements=$((r * c)) --iters=100 \
    > "$OUT/torch_$t.log" 2>&1
done
for round in 1 2; do
  for d in 0 all; do
    od=""; [[ $d == 0 ]] && od="--only_dispatch=0"
    ours $B $common --data_type=float16 $od > "$OUT/r${round}_f16_p${d}_before.log" 2>&1
    ours $A $common --data_type=float16 $od > "$OUT/r${round}_f16_p${d}_after.log" 2>&1
    ours $A $common --data_type=float16 --mvn_long_span=1 $od > "$OUT/r${round}_f16_p${d}_long.log" 2>&1
    ours $B $common --data_type=float32 $od > "$OUT/r${round}_f32_p${d}_before.log" 2>&1
    ours $B $common --data_type=float32 --mvn_texel_span_float32=1 $od > "$OUT/r${round}_f32_p${d}_spanbefore.log" 2>&1
    ours $A $common --data_type=float32 --mvn_texel_span_float32=1 $od > "$OUT/r${round}_f32_p${d}_span.log" 2>&1
    ours $A $common --data_type=float32 --mvn_texel_span_float32=1 --mvn_combine_float32 --mvn_long_span=1 $od > "$OUT/r${round}_f32_p${d}_long.log" 2>&1
  done
done
# The normalisation pass alone (for the record): dispatch 2 of three.
ours $A $common --data_type=float16 --only_dispatch=2 > "$OUT/f16_p2_after.log" 2>&1
ours $A $common --data_type=float16 --mvn_long_span=1 --only_dispatch=1 > "$OUT/f16_p1_long.log" 2>&1
ours $A $common --data_type=float16 --mvn_long_span=1 --show_plan > "$OUT/f16_plan_long.log" 2>&1
{
  for t in mvn_schedule_gpu_test mvn_numerics_gpu_test; do
    DMLS_KERNELS_TEST_ADAPTER=gpu timeout 200 env LD_LIBRARY_PATH=$rt .gpu/mvn26/after/$t 2>&1 | tail -3
  done
} > "$OUT/gpu_tests.log" 2>&1
{
  echo "== torch (copy, layer_norm ms)"
  for f in "$OUT"/torch_*.log; do echo "$(basename $f): $(awk '/^copy|^layer_norm /{printf "%s %s  ", $1, $3}' $f)"; done
  echo "== dmls_bench us/exec"
  for f in "$OUT"/r*.log "$OUT"/f16_p*.log; do
    echo "$(basename $f): $(awk '$1=="mvn1" && $3 ~ /^[0-9]+$/ {print $7}' $f) $(grep -m1 -i error $f)"
  done
  echo "== plan (long span)"; grep -i -A12 "plan" "$OUT/f16_plan_long.log" | head -30
  echo "== GPU tests (after)"; cat "$OUT/gpu_tests.log"
} > "$OUT/summary.txt"
cat "$OUT/summary.txt"
cp "$OUT/summary.txt" "$FINAL/"; tar czf "$FINAL/logs.tgz" -C "$OUT" .
