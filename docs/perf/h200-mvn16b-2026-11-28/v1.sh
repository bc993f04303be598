#!/usr/bin/env bash
# Visit 1 (issue 26, experiment): the kMvnCombine dispatch (each group's
# partials combined once; kMvnNormalise reads the group statistic).
# .gpu/mvn16b/before = main's dmls_bench (stripped), .gpu/mvn16b/exp = branch mvn16b with
# kMvnCombine (PlannerOptions::mvn_combine_min_chunks, default 16; flag
# --mvn_combine_min_chunks, 0 = never = main's two dispatches).
# 512 x 262,143 whole plan and per pass; the threshold: groups of 8, 16, 32
# and 64 chunks two-pass (--mvn_no_row), combined (2) or not (0).
# Run from a folder holding bench/ (gpu_env.sh, torch_anchors.py) and
# .gpu/{root,lib} and .gpu/mvn16b/{before,exp} (the run tool works in /work/main).
set -uo pipefail
FINAL=${OUT:-/tmp/out}; OUT=/tmp/logs; mkdir -p "$OUT" "$FINAL"
source bench/gpu_env.sh
ours() { LD_LIBRARY_PATH=$rt "$@"; }
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee "$OUT/machine.log"
common="--device=gpu --ops=mvn1 --cache_mib=50 --no_dispatch_cost --engine_requests=0 --iters=50"
r=512; c=262143
for t in float16 float32; do
  python3 bench/torch_anchors.py --dtype=$t --rows=$r --cols=$c --elements=$((r * c)) --iters=100 \
    > "$OUT/torch_${t}_512x262143.log" 2>&1
  ours .gpu/mvn16b/before/bench/dmls_bench $common --data_type=$t --sizes=$((r * c)) --mvn_rows=$r \
    --show_plan > "$OUT/before_${t}_512x262143.log" 2>&1
  ours .gpu/mvn16b/exp/bench/dmls_bench $common --data_type=$t --sizes=$((r * c)) --mvn_rows=$r \
    --show_plan > "$OUT/exp_${t}_512x262143.log" 2>&1
  for d in 0 1 2; do
    ours .gpu/mvn16b/exp/bench/dmls_bench $common --data_type=$t --sizes=$((r * c)) --mvn_rows=$r \
      --only_dispatch=$d > "$OUT/pass${d}_exp_${t}_512x262143.log" 2>&1
  done
  for d in 0 1; do
    ours .gpu/mvn16b/exp/bench/dmls_bench $common --data_type=$t --sizes=$((r * c)) --mvn_rows=$r \
      --mvn_combine_min_chunks=0 --only_dispatch=$d > "$OUT/pass${d}_nocombine_${t}_512x262143.log" 2>&1
  done
done
# Threshold: 128 Mi elements as 4,096 x 32,768 (8 chunks), 2,048 x 65,535 (16),
# 1,024 x 131,071 (32), 512 x 262,143 (64), two passes.
for t in float16 float32; do
  for s in 4096x32768 2048x65535 1024x131071 512x262143; do
    r=${s%x*}; c=${s#*x}
    for m in 0 2; do
      ours .gpu/mvn16b/exp/bench/dmls_bench $common --data_type=$t --sizes=$((r * c)) --mvn_rows=$r \
        --mvn_no_row --mvn_combine_min_chunks=$m --show_plan > "$OUT/thr_m${m}_${t}_$s.log" 2>&1
    done
  done
done
{
  echo "== torch (copy, layer_norm ms)"
  for f in "$OUT"/torch_*.log; do echo "$(basename $f): $(awk '/^copy|^layer_norm /{printf "%s %s  ", $1, $3}' $f)"; done
  echo "== dmls_bench us/exec"
  for f in "$OUT"/before_*.log "$OUT"/exp_*.log "$OUT"/pass*.log "$OUT"/thr_*.log; do
    echo "$(basename $f): $(awk '$1=="mvn1" && $3 ~ /^[0-9]+$/ {print $7}' $f) $(grep -m1 -i error $f)"
  done
} > "$OUT/summary.txt"
cat "$OUT/summary.txt"
cp "$OUT/summary.txt" "$FINAL/"; tar czf "$FINAL/logs.tgz" -C "$OUT" .
