#!/usr/bin/env bash
# Several GPUs with resident tensors (issues #11 and #7): with the data on
# the devices, is the work GPU-bound, and does a second GPU double it?
#
# On a 2-GPU machine (kind nvidia-h200-x2: 32 cores), dmlserve --device=gpu
# with --adapters=0 (one engine) and then --adapters=0,1 (one engine per
# GPU), each point twice, alternating. Load: dmls_resident_bench
# --mode=chainload, 32 client threads, each with its own connection and
# tenant (so its tensors live on one device: the tenant's hash), a resident
# tensor of its own and a closed loop of chains:
#   MVN1: chains of 64 MVN1 steps on a 16 MiB tensor (4096-element rows):
#         the compute-bound case (one RPC per 64 kernels on 16 MiB);
#   CELU: chains of 1 CELU step in place on a 64 KiB tensor: the per-call
#         path, host-bound.
# Server on cores 0-15, clients on 16-31, 10 s measured after warm-up.
# ROUNDS (default 2) is how many times each point runs. ADAPTER_SETS
# (default "0 0,1") lists the --adapters values to compare;
# "0,0" (two engines on one GPU) tells whether recording slows down when two
# engines record at once even without a second device.
# The server logs per-engine counters at shutdown (gpuN.chains), which show
# how the tenants split over the devices.
# Then the resident executor's tests on the hardware adapter.
# Expects .gpu/root, .gpu/lib (GPU.md step 1) and .gpu/build laid out like a
# build directory. Logs under $OUT. Usage, on the GPU machine, from the
# repository root:   bash bench/run_multi_gpu_resident.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
source bench/gpu_env.sh  # GPU.md step 2
export LD_LIBRARY_PATH=$rt
b=.gpu/build
M=$((1 << 20))
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 | tee "$OUT/machine.log"

point() {  # label adapters bench-args...
  local label=$1 adapters=$2; shift 2
  local log="$OUT/server-$label-${adapters//,/-}.log"
  taskset -c 0-15 $b/server/dmlserve --device=gpu --adapters=$adapters --port=50071 \
    --drain_seconds=0 --max_chain_steps=64 > "$log" 2>&1 &
  local srv=$!
  for _ in $(seq 1 300); do grep -q "listening on" "$log" && break; sleep 0.1; done
  echo "-- $label, adapters=$adapters"
  taskset -c 16-31 $b/bench/resident/dmls_resident_bench --target=127.0.0.1:50071 \
    --mode=chainload --clients=32 --seconds=10 "$@"
  kill -INT $srv; wait $srv
  grep -o "gpu[0-9]*\.chains=[0-9]*" "$log" | tr '\n' ' '; echo
  # Recording time per step, per engine (the host side of a chain), and its
  # phases: planning and buffers, binding, barriers, Dispatch calls.
  grep -o "\(gpu[0-9]*\.\)\?chain_\(record\|plan\|bind\|barrier\|dispatch\)_us=[0-9]*\|\(gpu[0-9]*\.\)\?chain_steps=[0-9]*" "$log" | \
    tr '\n' ' ' | \
    awk '{for (i = 1; i <= NF; i++) {split($i, kv, "="); k = split(kv[1], e, ".");
                                      g = k > 1 ? e[1] : "engine"; v[g "," e[k]] = kv[2]; n[g] = 1}}
         END {for (g in n) if ((s = v[g ",chain_steps"]) > 0)
                printf "%s us/step: record %.1f (plan %.1f bind %.1f barrier %.1f dispatch %.1f)  ", g,
                       v[g ",chain_record_us"] / s, v[g ",chain_plan_us"] / s, v[g ",chain_bind_us"] / s,
                       v[g ",chain_barrier_us"] / s, v[g ",chain_dispatch_us"] / s; print ""}'

}
{
  for round in $(seq 1 ${ROUNDS:-2}); do
    for adapters in ${ADAPTER_SETS:-0 0,1}; do
      point mvn1-r$round $adapters --op=mvn1 --steps=64 --bytes=$((16 * M)) --chunk_bytes=$((4 * M))
    done
  done
  for round in $(seq 1 ${ROUNDS:-2}); do
    for adapters in ${ADAPTER_SETS:-0 0,1}; do
      point celu-r$round $adapters --op=celu --steps=1 --bytes=$((64 << 10)) --chunk_bytes=$((64 << 10))
    done
  done
} 2>&1 | tee "$OUT/multi_gpu_resident.log"
echo "== the resident executor's tests on the hardware adapter"
DMLS_KERNELS_TEST_ADAPTER=gpu $b/engine/d3d12/d3d12_operators_test --gtest_filter='Resident*' \
  2>&1 | tee "$OUT/tests.log" | tail -3
