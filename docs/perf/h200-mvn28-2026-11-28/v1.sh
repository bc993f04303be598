#!/usr/bin/env bash
# Visit 1 (issue 26, session 28): what the NVIDIA driver makes of the MVN
# kernels (dmls_bench --kernel_stats: registers per thread, spills), and the
# FLOAT16 wide row with its texels kept packed through the reduction.
# k0 = .gpu/k0 (main at 54649b5: --kernel_stats, kernels as at a4218b7);
# e1 = .gpu/e1 (54649b5 + the FLOAT16 wide row widening its texels again
# after the reduction, an experiment build). Two rounds alternating; torch
# copy and layer_norm at 4,096 x 32,768 in the same visit.
set -uo pipefail
FINAL=${OUT:-/tmp/out}; OUT=/tmp/logs; mkdir -p "$OUT" "$FINAL"
source bench/gpu_env.sh
ours() { LD_LIBRARY_PATH=$rt timeout 120 "$@"; }
declare -A bin=([k0]=.gpu/k0/bench/dmls_bench [e1]=.gpu/e1/bench/dmls_bench)
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee "$OUT/machine.log"
shapes="512x262143 4096x32768 65536x1024"
for l in k0 e1; do
  for t in float16 float32; do
    for s in $shapes; do
      r=${s%x*}; c=${s#*x}
      ours ${bin[$l]} --kernel_stats --ops=mvn1 --cache_mib=50 --sizes=$((r * c)) --mvn_rows=$r \
        --data_type=$t > "$OUT/stats_${l}_${t}_$s.log" 2>&1
    done
    ours ${bin[$l]} --kernel_stats --ops=mvn1 --cache_mib=50 --sizes=$((4096 * 32768)) \
      --mvn_rows=4096 --data_type=$t --mvn_no_row > "$OUT/stats_${l}_${t}_4096x32768_norow.log" 2>&1
  done
done
ours ${bin[k0]} --kernel_stats --ops=celu,relu,threshold --sizes=16M --data_type=float16 \
  > "$OUT/stats_k0_elementwise.log" 2>&1
for t in float16 float32; do
  python3 bench/torch_anchors.py --dtype=$t --rows=4096 --cols=32768 --elements=$((4096 * 32768)) \
    --iters=100 > "$OUT/torch_${t}_4096x32768.log" 2>&1
done
common="--device=gpu --ops=mvn1 --cache_mib=50 --no_dispatch_cost --engine_requests=0 --iters=50"
for round in 1 2; do
  for t in float16 float32; do
    for s in $shapes; do
      r=${s%x*}; c=${s#*x}
      for l in k0 e1; do
        ours ${bin[$l]} $common --sizes=$((r * c)) --mvn_rows=$r --data_type=$t \
          > "$OUT/r${round}_${t}_${s}_$l.log" 2>&1
      done
    done
    ours ${bin[k0]} $common --sizes=$((4096 * 32768)) --mvn_rows=4096 --data_type=$t --mvn_no_row \
      > "$OUT/r${round}_${t}_4096x32768_k0norow.log" 2>&1
  done
done
{
  echo "== kernel stats"
  for f in "$OUT"/stats_*.log; do echo "-- $(basename $f)"; grep -E "^kernel|stats|rror" $f; done
  echo "== torch (copy, layer_norm ms)"
  for f in "$OUT"/torch_*.log; do echo "$(basename $f): $(awk '/^copy|^layer_norm /{printf "%s %s  ", $1, $3}' $f)"; done
  echo "== dmls_bench us/exec"
  for f in "$OUT"/r*.log; do
    echo "$(basename $f): $(awk '$1=="mvn1" && $3 ~ /^[0-9]+$/ {print $7}' $f) $(grep -m1 -i error $f)"
  done
} > "$OUT/summary.txt"
cat "$OUT/summary.txt"
cp "$OUT/summary.txt" "$FINAL/"; tar czf "$FINAL/logs.tgz" -C "$OUT" .
