#!/usr/bin/env bash
# Visit 1 (issue 26, stop 27): statistics without masks where a chunk lies
# wholly inside its group (213ff7c), every shape of the issue, before and
# after, beside PyTorch's copy and layer_norm on the same GPU.
# before = .gpu/h0 (main at 7183e63); after = .gpu/m2 (213ff7c);
# x64 = .gpu/x64 (213ff7c with kMvnLongSpanElementsPerThread = 64, an
# experiment build: does the unmasked path let 64 elements a thread win?).
# Two rounds alternating; per pass at 512 x 262,143; GPU tests of `after`.
set -uo pipefail
FINAL=${OUT:-/tmp/out}; OUT=/tmp/logs; mkdir -p "$OUT" "$FINAL"
source bench/gpu_env.sh
ours() { LD_LIBRARY_PATH=$rt timeout 60 "$@"; }
B=.gpu/h0/bench/dmls_bench; A=.gpu/m2/bench/dmls_bench; X=.gpu/x64/bench/dmls_bench
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee "$OUT/machine.log"
common="--device=gpu --ops=mvn1 --cache_mib=50 --no_dispatch_cost --engine_requests=0 --iters=50"
for t in float16 float32; do
  for s in 512x262143 4096x32768 65536x1024; do
    r=${s%x*}; c=${s#*x}
    python3 bench/torch_anchors.py --dtype=$t --rows=$r --cols=$c --elements=$((r * c)) --iters=100 \
      > "$OUT/torch_${t}_$s.log" 2>&1
  done
done
for round in 1 2; do
  for t in float16 float32; do
    for s in 512x262143 4096x32768 65536x1024; do
      r=${s%x*}; c=${s#*x}
      sz="--sizes=$((r * c)) --mvn_rows=$r --data_type=$t"
      ours $B $common $sz > "$OUT/r${round}_${t}_${s}_before.log" 2>&1
      ours $A $common $sz > "$OUT/r${round}_${t}_${s}_after.log" 2>&1
      [[ $s == 512x262143 ]] && ours $X $common $sz > "$OUT/r${round}_${t}_${s}_x64.log" 2>&1
    done
  done
done
r=512; c=262143
for t in float16 float32; do
  sz="--sizes=$((r * c)) --mvn_rows=$r --data_type=$t"
  for l in before after x64; do
    bin=$B; [[ $l == after ]] && bin=$A; [[ $l == x64 ]] && bin=$X
    ours $bin $common $sz --only_dispatch=0 > "$OUT/pass0_${t}_$l.log" 2>&1
  done
done
{
  echo "== torch (copy, layer_norm ms)"
  for f in "$OUT"/torch_*.log; do echo "$(basename $f): $(awk '/^copy|^layer_norm /{printf "%s %s  ", $1, $3}' $f)"; done
  echo "== dmls_bench us/exec"
  for f in "$OUT"/r*.log "$OUT"/pass*.log; do
    echo "$(basename $f): $(awk '$1=="mvn1" && $3 ~ /^[0-9]+$/ {print $7}' $f) $(grep -m1 -i error $f)"
  done
} > "$OUT/summary.txt"
cat "$OUT/summary.txt"
cp "$OUT/summary.txt" "$FINAL/"; tar czf "$FINAL/logs.tgz" -C "$OUT" .
