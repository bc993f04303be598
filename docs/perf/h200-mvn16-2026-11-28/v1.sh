#!/usr/bin/env bash
# Visit 1 (issue 26): where FLOAT16 MVN1 512 x 262,143 spends its time.
# .gpu/before = main 717eac2's binaries (stripped), .gpu/exp = this branch
# with DMLS_MVN_EXP read by the emitter (experiment only, not committed):
#   0 = main's LoadPair (a branch per pair), 1 = two loads a pair, no branch,
#   2 = one load a pair, one branch per thread around all loads.
# Per pass: --only_dispatch=0 (statistics) and 1 (normalisation).
set -uo pipefail
FINAL=${OUT:-/tmp/out}; OUT=/tmp/logs; mkdir -p "$OUT" "$FINAL"
source bench/gpu_env.sh
ours() { LD_LIBRARY_PATH=$rt "$@"; }
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee "$OUT/machine.log"
common="--device=gpu --ops=mvn1 --cache_mib=50 --no_dispatch_cost --engine_requests=0 --iters=50"
for t in float16 float32; do
  for s in 512x262143 4096x32768 65536x1024; do
    r=${s%x*}; c=${s#*x}
    python3 bench/torch_anchors.py --dtype=$t --rows=$r --cols=$c --elements=$((r * c)) --iters=100 \
      > "$OUT/torch_${t}_$s.log" 2>&1
    ours .gpu/before/bench/dmls_bench $common --data_type=$t --sizes=$((r * c)) --mvn_rows=$r \
      --show_plan > "$OUT/before_${t}_$s.log" 2>&1
  done
done
s=512x262143; r=512; c=262143
for t in float16 float32; do
  for e in 0 1 2; do
    for d in -1 0 1; do
      DMLS_MVN_EXP=$e ours .gpu/exp/bench/dmls_bench $common --data_type=$t --sizes=$((r * c)) \
        --mvn_rows=$r --only_dispatch=$d > "$OUT/exp${e}_${t}_${s}_d$d.log" 2>&1
    done
  done
done
# FLOAT32 4,096 x 32,768: wide row (default) against two passes and blocked.
for opt in "" "--mvn_no_row" "--mvn_no_row --mvn_block_kib=12800" "--mvn_no_row --mvn_block_kib=25600"; do
  for d in -1 0 1; do
    ours .gpu/exp/bench/dmls_bench $common --data_type=float32 --sizes=134217728 --mvn_rows=4096 \
      $opt --only_dispatch=$d --show_plan > "$OUT/f32_4096_${opt// /_}_d$d.log" 2>&1
  done
done
{
  echo "== torch (copy, layer_norm ms)"
  for f in "$OUT"/torch_*.log; do echo "$(basename $f): $(awk '/^copy|^layer_norm /{printf "%s %s  ", $1, $3}' $f)"; done
  echo "== dmls_bench us/exec"
  for f in "$OUT"/before_*.log "$OUT"/exp*.log "$OUT"/f32_*.log; do
    echo "$(basename $f): $(awk '$1=="mvn1" && $3 ~ /^[0-9]+$/ {print $7, "copy", $5}' $f) $(grep -m1 -i error $f)"
  done
} | tee "$OUT/summary.txt"
cp "$OUT/summary.txt" "$FINAL/"; tar czf "$FINAL/logs.tgz" -C "$OUT" .
