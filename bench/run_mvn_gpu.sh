#!/usr/bin/env bash
# On the GPU machine (../shared/GPU.md): MVN1 against PyTorch's layer_norm,
# side by side in one run, at the shapes:
#   FLOAT32 512 x 262,143, 4,096 x 32,768, 65,536 x 1,024; FLOAT16 512 x 262,143
#   (and the FLOAT16 form of the other two).
# For each: the plan the planner chooses (dmls_bench --plan_only, cache 50
# MiB as on H100/H200), PyTorch's layer_norm (bench/torch_anchors.py, CUDA
# events), dmls_bench's MVN1 with the D3D12 copy of the same bytes, and the
# other schedules of the same shape: blocked with a sweep of the row-block
# budget (--mvn_no_row --mvn_block_kib), and 1048576 KiB (the whole tensor in
# one block: the old two-pass schedule, the baseline of the same run).
# Then the MVN GPU tests on the hardware adapter, and PyTorch again (drift).
# Expects .gpu/root and .gpu/lib (GPU.md step 1) and .gpu/build laid out
# like a build directory (bench/dmls_bench, tests/mvn/*). Logs under $OUT;
# a short table last. Usage, from the repository root:
#   bash bench/run_mvn_gpu.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
source bench/gpu_env.sh  # GPU.md step 2; sets $rt
b=.gpu/build
B=$b/bench/dmls_bench
ours() { LD_LIBRARY_PATH=$rt "$@"; }
CACHE=${CACHE_MIB:-50}
shapes="512x262143 4096x32768 65536x1024"

{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  ours $B --list_adapters
} 2>&1 | tee "$OUT/machine.log"

for t in float32 float16; do
  for s in $shapes; do
    r=${s%x*}; c=${s#*x}
    ours $B --plan_only --ops=mvn1 --sizes=$((r * c)) --mvn_rows=$r --data_type=$t \
      --cache_mib=$CACHE 2>&1 | tee -a "$OUT/plans.log"
  done
done

for t in float32 float16; do
  for s in $shapes; do
    r=${s%x*}; c=${s#*x}
    python3 bench/torch_anchors.py --dtype=$t --rows=$r --cols=$c --elements=$((r * c)) \
      --iters=100 2>&1 | tee "$OUT/torch_${t}_$s.log"
    ours $B --device=gpu --data_type=$t --ops=mvn1 --sizes=$((r * c)) --mvn_rows=$r \
      --cache_mib=$CACHE --show_plan --no_dispatch_cost --engine_requests=0 2>&1 \
      | tee "$OUT/bench_${t}_$s.log"
    for kib in 6400 12800 25600 51200 1048576; do
      ours $B --device=gpu --data_type=$t --ops=mvn1 --sizes=$((r * c)) --mvn_rows=$r \
        --cache_mib=$CACHE --mvn_no_row --mvn_block_kib=$kib --no_dispatch_cost \
        --engine_requests=0 --show_plan 2>&1 | grep -v '^      ' \
        | tee "$OUT/bench_${t}_${s}_block$kib.log"
    done
  done
done

{
  for t in mvn_schedule_gpu_test mvn_numerics_gpu_test; do
    DMLS_KERNELS_TEST_ADAPTER=gpu ours $b/tests/mvn/$t 2>&1 | tail -3
  done
} 2>&1 | tee "$OUT/gpu_tests.log"

python3 bench/torch_anchors.py --dtype=float32 2>&1 | tee "$OUT/torch_after.log"

# Short table: PyTorch's layer_norm and our MVN1 (the planner's schedule,
# then the blocked sweep without the row kernel, 1048576 = old two-pass) in
# GB/s, (read + write) / time as both tools count it; time ratios follow
# from the GB/s ratios (same bytes).
{
  echo "dtype    shape        torch_layer_norm  mvn1(planner)  no-row block sweep (KiB:GB/s)"
  for t in float32 float16; do
    for s in $shapes; do
      tl=$(awk '/^layer_norm/ {print $NF}' "$OUT/torch_${t}_$s.log")
      m=$(awk '/^  mvn1/ {for (i=1;i<=NF;i++) if ($i=="kernel") print $(i+1)}' \
          "$OUT/bench_${t}_$s.log")
      sweep=""
      for kib in 6400 12800 25600 51200 1048576; do
        v=$(awk '/^  mvn1/ {for (i=1;i<=NF;i++) if ($i=="kernel") print $(i+1)}' \
            "$OUT/bench_${t}_${s}_block$kib.log")
        sweep="$sweep $kib:${v:-?}"
      done
      printf "%-8s %-12s %16s  %13s %s\n" "$t" "$s" "${tl:-?}" "${m:-?}" "$sweep"
    done
  done
} 2>&1 | tee "$OUT/summary.txt"
