#!/usr/bin/env bash
# Visit 4 (issue 26, session 28): where the wide row (1,024 threads of 32
# elements, every row of 4,097-32,768 elements whose groups are whole
# texels) loses to the two passes (--mvn_no_row): rows of 6,144 to 32,768
# elements, about 2^27 elements in all, both types, main at d6a1ba5
# (.gpu/m5). Two rounds alternating.
set -uo pipefail
FINAL=${OUT:-/tmp/out}; OUT=/tmp/logs; mkdir -p "$OUT" "$FINAL"
source bench/gpu_env.sh
ours() { LD_LIBRARY_PATH=$rt timeout 120 "$@"; }
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee "$OUT/machine.log"
common="--device=gpu --ops=mvn1 --cache_mib=50 --no_dispatch_cost --engine_requests=0 --iters=50"
for round in 1 2; do
  for t in float16 float32; do
    for c in 4104 6144 8192 12288 16384 20480 24576 28672 32768; do
      r=$(( (1 << 27) / c ))
      for v in "row:" "norow:--mvn_no_row"; do
        name=${v%%:*}; flags=${v#*:}
        ours .gpu/m5/bench/dmls_bench $common --sizes=$((r * c)) --mvn_rows=$r --data_type=$t $flags \
          > "$OUT/r${round}_${t}_${r}x${c}_$name.log" 2>&1
      done
    done
  done
done
{
  echo "== dmls_bench us/exec"
  for f in "$OUT"/r*.log; do
    echo "$(basename $f): $(awk '$1=="mvn1" && $3 ~ /^[0-9]+$/ {print $7}' $f) $(grep -m1 -i error $f)"
  done
} > "$OUT/summary.txt"
cat "$OUT/summary.txt"
cp "$OUT/summary.txt" "$FINAL/"; tar czf "$FINAL/logs.tgz" -C "$OUT" .
