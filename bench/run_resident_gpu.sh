#!/usr/bin/env bash
# The resident-tensor measurement run on the GPU machine (../shared/GPU.md),
# side by side with the anchors in one visit (server on cores 0-7, client
# on 8-15):
#   1. three operators (CELU, MVN1, THRESHOLD) on a resident 64 MiB tensor
#      as one ExecuteChain against the same three as inline Execute round
#      trips (dmls_resident_bench --mode=chain);
#   2. WriteTensor / ReadTensor of 1 GiB in chunks of 1, 4 and 16 MiB
#      against echo_server's TensorService with the same flags, the two
#      servers alternating, twice each;
#   3. a 3 GiB tensor created, written, run through CELU and read back,
#      every element checked (--mode=roundtrip);
#   4. the resident executor's tests on the hardware adapter.
# Expects .gpu/root, .gpu/lib (GPU.md step 1) and .gpu/build laid out like a
# build directory. Logs under $OUT. Usage, on the GPU machine, from the
# repository root:   bash bench/run_resident_gpu.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
source bench/gpu_env.sh  # GPU.md step 2
export LD_LIBRARY_PATH=$rt
b=.gpu/build
M=$((1 << 20))
G=$((1 << 30))
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 | tee "$OUT/machine.log"

wait_ready() {  # log file
  for _ in $(seq 1 300); do grep -q "listening on" "$1" 2>/dev/null && return 0; sleep 0.1; done
  echo "server did not start: $(tail -3 "$1")"; return 1
}
taskset -c 0-7 $b/server/dmlserve --device=gpu --adapters=0 --port=50061 --drain_seconds=0 \
  --max_message_bytes=$((128 * M)) --max_tensor_bytes=$((4 * G)) \
  --resident_bytes_per_principal=$((16 * G)) --resident_bytes_total=$((32 * G)) \
  > "$OUT/dmlserve.log" 2>&1 &
srv=$!
taskset -c 0-7 $b/bench/echo/echo_server --port=50062 --max_message_bytes=$((128 * M)) \
  > "$OUT/echo.log" 2>&1 &
echo_pid=$!
wait_ready "$OUT/dmlserve.log" && wait_ready "$OUT/echo.log"
bench() { taskset -c 8-15 $b/bench/resident/dmls_resident_bench "$@"; }

{
  echo "== 1. chain vs inline round trips"
  bench --target=127.0.0.1:50061 --mode=chain --bytes=$((64 * M)) --chunk_bytes=$((16 * M)) --iters=20
  echo "== 2. chunked transfers of 1 GiB: dmlserve vs echo"
  for chunk in 1 4 16; do
    for round in 1 2; do
      for t in dmlserve:50061 echo:50062; do
        echo "-- ${t%%:*} chunk ${chunk} MiB round $round"
        bench --target=127.0.0.1:${t##*:} --mode=transfer --bytes=$G --chunk_bytes=$((chunk * M)) --iters=5
      done
    done
  done
  echo "== 3. 3 GiB round trip"
  bench --target=127.0.0.1:50061 --mode=roundtrip --bytes=$((3 * G)) --chunk_bytes=$((16 * M))
} 2>&1 | tee "$OUT/resident.log"
kill -INT $srv $echo_pid; wait $srv
grep "engine counters" "$OUT/dmlserve.log" | tail -1 | cut -c1-2000

echo "== 4. resident executor tests on the GPU"
DMLS_KERNELS_TEST_ADAPTER=gpu $b/engine/d3d12/d3d12_operators_test --gtest_filter='Resident*' \
  2>&1 | tee "$OUT/tests.log" | tail -5
