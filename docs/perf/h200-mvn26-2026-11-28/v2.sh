#!/usr/bin/env bash
# Visit 2 (issue 26, stop 26): every shape of the issue, before and after.
# before = .gpu/prof/HEAD (main's dmls_bench, kernels of c175892);
# after  = .gpu/mvn26/after2 (masks per texel, long spans, FLOAT32 spans,
#          and the normalisation by texels of the tensor, all on by
#          default; --mvn_span_normalise=0 for the words).
# Two rounds alternating, beside PyTorch's copy and layer_norm; per pass at
# 512 x 262,143; then the GPU tests of the after build on the hardware.
set -uo pipefail
FINAL=${OUT:-/tmp/out}; OUT=/tmp/logs; mkdir -p "$OUT" "$FINAL"
source bench/gpu_env.sh
ours() { LD_LIBRARY_PATH=$rt timeout 60 "$@"; }
B=.gpu/prof/HEAD; A=.gpu/mvn26/after2
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee "$OUT/machine.log"
common="--device=gpu --ops=mvn1 --cache_mib=50 --no_dispatch_cost --engine_requests=0 --iters=50"
for t in float16 float32; do
  for s in 512x262143 4096x32768 65536x1024; do
    r=${s%x*}; c=${s#*x}
    python3 bench/torch_anchors.py --dtype=$t --rows=$r --cols=$c --elements=$((r * c)) --iters=100 \
      > "$OUT/torch_${t}_$s.log" 2>&1
    sz="--sizes=$((r * c)) --mvn_rows=$r --data_type=$t"
    for round in 1 2; do
      ours $B $common $sz > "$OUT/r${round}_${t}_${s}_before.log" 2>&1
      ours $A/dmls_bench $common $sz > "$OUT/r${round}_${t}_${s}_after.log" 2>&1
      [[ $s == 512x262143 ]] && ours $A/dmls_bench $common $sz --mvn_span_normalise=0 \
        > "$OUT/r${round}_${t}_${s}_words.log" 2>&1
    done
  done
done
r=512; c=262143
for t in float16 float32; do
  sz="--sizes=$((r * c)) --mvn_rows=$r --data_type=$t"
  for d in 0 1 2; do
    ours $A/dmls_bench $common $sz --only_dispatch=$d > "$OUT/pass${d}_${t}_after.log" 2>&1
  done
  ours $A/dmls_bench $common $sz --mvn_span_normalise=0 --only_dispatch=2 > "$OUT/pass2_${t}_words.log" 2>&1
done
ours $A/dmls_bench $common --sizes=$((r * c)) --mvn_rows=$r --data_type=float16 --show_plan \
  > "$OUT/plan_f16.log" 2>&1
{
  s=$(date +%s)
  DMLS_KERNELS_TEST_ADAPTER=gpu DMLS_CONFORMANCE_DATA_DIR=tests/data \
    timeout 200 env LD_LIBRARY_PATH=$rt $A/conformance_gpu_test 2>&1 | grep -E "PASSED|FAILED|tests ran" | tail -4
  echo "conformance_gpu_test in $(( $(date +%s) - s )) s"
  for t in mvn_schedule_gpu_test mvn_numerics_gpu_test; do
    DMLS_KERNELS_TEST_ADAPTER=gpu timeout 150 env LD_LIBRARY_PATH=$rt $A/$t 2>&1 | grep -E "PASSED|FAILED|tests ran" | tail -4
  done
} > "$OUT/gpu_tests.log" 2>&1
{
  echo "== torch (copy, layer_norm ms)"
  for f in "$OUT"/torch_*.log; do echo "$(basename $f): $(awk '/^copy|^layer_norm /{printf "%s %s  ", $1, $3}' $f)"; done
  echo "== dmls_bench us/exec"
  for f in "$OUT"/r*.log "$OUT"/pass*.log; do
    echo "$(basename $f): $(awk '$1=="mvn1" && $3 ~ /^[0-9]+$/ {print $7}' $f) $(grep -m1 -i error $f)"
  done
  echo "== plan (FLOAT16 512 x 262,143)"; grep -A14 "plan mvn1" "$OUT/plan_f16.log" | head -16
  echo "== GPU tests (after)"; cat "$OUT/gpu_tests.log"
} > "$OUT/summary.txt"
cat "$OUT/summary.txt"
cp "$OUT/summary.txt" "$FINAL/"; tar czf "$FINAL/logs.tgz" -C "$OUT" .
