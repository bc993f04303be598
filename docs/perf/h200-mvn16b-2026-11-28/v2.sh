#!/usr/bin/env bash
# Visit 2 (issue 26): before (.gpu/mvn16b/before = main's build, 5e14cf0)
# and after (.gpu/mvn16b/after = branch mvn16b: kMvnCombine + kMvnNormalise
# for FLOAT16 from 16 chunks, texel-span statistics for FLOAT16 odd N) side
# by side with PyTorch's copy and layer_norm, every shape of the issue,
# FLOAT16 and FLOAT32, two rounds alternating; per pass (--only_dispatch) at
# 512 x 262,143; the options off and on (span, combine, FLOAT32); then the
# MVN GPU tests of the after build on the hardware adapter. The run tool
# works in /work/main: binaries under .gpu/mvn16b, .gpu/{root,lib} beside.
set -uo pipefail
FINAL=${OUT:-/tmp/out}; OUT=/tmp/logs; mkdir -p "$OUT" "$FINAL"
source bench/gpu_env.sh
ours() { LD_LIBRARY_PATH=$rt "$@"; }
G=.gpu/mvn16b
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee "$OUT/machine.log"
common="--device=gpu --ops=mvn1 --cache_mib=50 --no_dispatch_cost --engine_requests=0 --iters=50"
for t in float16 float32; do
  for s in 512x262143 4096x32768 65536x1024; do
    r=${s%x*}; c=${s#*x}
    python3 bench/torch_anchors.py --dtype=$t --rows=$r --cols=$c --elements=$((r * c)) --iters=100 \
      > "$OUT/torch_${t}_$s.log" 2>&1
    for round in 1 2; do
      for v in before after; do
        ours $G/$v/bench/dmls_bench $common --data_type=$t --sizes=$((r * c)) --mvn_rows=$r \
          --show_plan > "$OUT/${v}_${t}_${s}_r$round.log" 2>&1
      done
    done
  done
done
r=512; c=262143
for t in float16 float32; do
  for v in before after; do
    for d in 0 1 2; do
      [[ $v == before && $d == 2 ]] && continue
      [[ $t == float32 && $d == 2 ]] && continue
      ours $G/$v/bench/dmls_bench $common --data_type=$t --sizes=$((r * c)) --mvn_rows=$r \
        --only_dispatch=$d > "$OUT/pass${d}_${v}_${t}_512x262143.log" 2>&1
    done
  done
done
# Options: FLOAT16 without the span, without the combine; FLOAT32 with
# the span, with the combine, with both (per pass where it has three).
A="ours $G/after/bench/dmls_bench $common --sizes=$((r * c)) --mvn_rows=$r"
$A --data_type=float16 --mvn_texel_span=0 > "$OUT/opt_f16_nospan.log" 2>&1
$A --data_type=float16 --mvn_texel_span=0 --only_dispatch=0 > "$OUT/opt_f16_nospan_pass0.log" 2>&1
$A --data_type=float16 --mvn_combine_min_chunks=0 > "$OUT/opt_f16_nocombine.log" 2>&1
$A --data_type=float32 --mvn_texel_span_float32=1 > "$OUT/opt_f32_span.log" 2>&1
$A --data_type=float32 --mvn_texel_span_float32=1 --only_dispatch=0 > "$OUT/opt_f32_span_pass0.log" 2>&1
$A --data_type=float32 --mvn_combine_float32 > "$OUT/opt_f32_combine.log" 2>&1
$A --data_type=float32 --mvn_combine_float32 --mvn_texel_span_float32=1 > "$OUT/opt_f32_both.log" 2>&1
{
  for t in mvn_schedule_gpu_test mvn_numerics_gpu_test; do
    DMLS_KERNELS_TEST_ADAPTER=gpu timeout 200 env LD_LIBRARY_PATH=$rt $G/after/tests/mvn/$t 2>&1 | tail -3
  done
} > "$OUT/gpu_tests.log" 2>&1
{
  echo "== torch (copy, layer_norm ms)"
  for f in "$OUT"/torch_*.log; do echo "$(basename $f): $(awk '/^copy|^layer_norm /{printf "%s %s  ", $1, $3}' $f)"; done
  echo "== dmls_bench us/exec"
  for f in "$OUT"/before_*.log "$OUT"/after_*.log "$OUT"/pass*.log "$OUT"/opt_*.log; do
    echo "$(basename $f): $(awk '$1=="mvn1" && $3 ~ /^[0-9]+$/ {print $7}' $f) $(grep -m1 -i error $f)"
  done
  echo "== GPU tests (after)"; cat "$OUT/gpu_tests.log"
} > "$OUT/summary.txt"
cat "$OUT/summary.txt"
cp "$OUT/summary.txt" "$FINAL/"; tar czf "$FINAL/logs.tgz" -C "$OUT" .
