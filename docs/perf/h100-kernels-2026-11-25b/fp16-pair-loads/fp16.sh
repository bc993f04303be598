#!/usr/bin/env bash
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source bench/gpu_env.sh
b=.gpu/build; B=$b/bench/dmls_bench
ours() { LD_LIBRARY_PATH=$rt "$@"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/machine.log
for round in 1 2; do
for t in float16 float32; do
  for s in 512x262143 65536x1024 4096x32768; do
    r=${s%x*}; c=${s#*x}
    python3 bench/torch_anchors.py --dtype=$t --rows=$r --cols=$c --elements=$((r * c)) --iters=100 > "$OUT/torch_${t}_${s}_$round.log" 2>&1
    ours $B --device=gpu --data_type=$t --ops=mvn1 --sizes=$((r * c)) --mvn_rows=$r --cache_mib=50 --no_dispatch_cost --engine_requests=0 > "$OUT/bench_${t}_${s}_$round.log" 2>&1
    tl=$(awk '/^layer_norm/ {print $NF}' "$OUT/torch_${t}_${s}_$round.log")
    m=$(awk '/^  mvn1/ {for (i=1;i<=NF;i++) if ($i=="kernel") print $(i+1)}' "$OUT/bench_${t}_${s}_$round.log")
    echo "round $round $t $s layer_norm $tl GB/s  mvn1 $m GB/s" | tee -a $OUT/table.log
  done
done
done
{
DMLS_KERNELS_TEST_ADAPTER=gpu ours $b/tests/mvn/mvn_numerics_gpu_test 2>&1 | tail -2
for f in '*Row*:*Wide*' '*Blocked*' '*TwoPass*:*MoreChunks*'; do DMLS_KERNELS_TEST_ADAPTER=gpu ours $b/tests/mvn/mvn_schedule_gpu_test --gtest_filter="$f" 2>&1 | tail -2; done
DMLS_CONFORMANCE_FILTER=mvn DMLS_KERNELS_TEST_ADAPTER=gpu DMLS_CONFORMANCE_DATA_DIR=tests/data ours $b/tests/conformance/conformance_gpu_test 2>&1 | grep "FAIL\|PASSED" | tail -8
} 2>&1 | tee $OUT/tests.log
cd $OUT; tar czf logs.tgz *.log
