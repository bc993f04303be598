#!/usr/bin/env bash
# The request-pipeline measurement run on the GPU machine (../shared/GPU.md),
# everything side by side with its anchor in one visit:
#   1. the engine alone (dmls_bench): small CELU requests through GpuEngine,
#      batching on and off, resources and views created while measuring;
#      CELU at 128M against the PyTorch copy (kernels stay at the copy
#      limit) and MVN1 at the 512 x 262,143 bar shape against layer_norm;
#   2. serving (bench/serving.sh): dmlserve --device=gpu against echo_server
#      and sync_echo_server (and .gpu/before/server/dmlserve, when staged,
#      as --baseline), dmls_load, at the issue's points, in two
#      configurations: server on cores 0-7 and load on 8-15, then the
#      server on 0-1 (one replica's two cores) and load on 2-15; batching
#      off (--max_batch_requests=1) at 1 KiB c=256;
#   3. p99 of 1 KiB requests alone and while another client streams 64 MiB
#      requests;
#   4. the same points through ghz (if .gpu/bin/ghz exists);
#   5. correctness on the GPU: the oracle corpus, view-base and operator
#      tests (coalescing included) on the hardware adapter.
# Expects .gpu/root and .gpu/lib (GPU.md step 1) and .gpu/build laid out
# like a build directory (server/dmlserve, bench/load/dmls_load,
# bench/echo/echo_server, bench/dmls_bench, engine/...tests). Logs under
# $OUT. Usage, on the GPU machine, from the repository root:
#   bash bench/run_gpu_serving.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
source bench/gpu_env.sh  # GPU.md step 2; sets $rt
b=.gpu/build
ours() { LD_LIBRARY_PATH=$rt "$@"; }
[ -x .gpu/bin/ghz ] && export PATH=$PWD/.gpu/bin:$PATH

{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  nproc; lscpu | grep -E 'Model name|^CPU\(s\)'
  ours $b/bench/dmls_bench --list_adapters
} 2>&1 | tee "$OUT/machine.log"

# 1. Engine alone, kernels, anchors.
python3 bench/torch_anchors.py 2>&1 | tee "$OUT/torch.log"
taskset -c 0-15 env LD_LIBRARY_PATH=$rt $b/bench/dmls_bench --device=gpu --ops=celu \
  --sizes=128M --no_dispatch_cost --engine_requests=400000 --engine_elements=256 \
  --engine_in_flight=2048 --engine_threads=8 --engine_max_batch=256,1 2>&1 | tee "$OUT/engine.log"
ours $b/bench/dmls_bench --device=gpu --ops=mvn1 --sizes=134217216 --mvn_rows=512 \
  --no_dispatch_cost --engine_requests=0 2>&1 | tee -a "$OUT/engine.log"

# 2. Serving against the echo anchor (LD_LIBRARY_PATH reaches the servers
#    and the load tool through the environment).
export LD_LIBRARY_PATH=$rt
baseline=()
[ -x .gpu/before/server/dmlserve ] && baseline=(--baseline=.gpu/before/server/dmlserve)
bash bench/serving.sh --build=$b --device=gpu --duration=8s --warmup=1s \
  --server_cpus=0-7 --load_cpus=8-15 "${baseline[@]}" \
  --points="1KiB:64 1KiB:256 64KiB:64 4MiB:8 4MiB:32 64MiB:4" \
  --server_args="--log_level=info --drain_seconds=0 --adapters=0" \
  --out="$OUT/serving" > "$OUT/serving.log" 2>&1
grep -h "engine counters" "$OUT"/serving/*.log 2>/dev/null | tail -2
tail -26 "$OUT/serving.log"
bash bench/serving.sh --build=$b --device=gpu --duration=8s --warmup=1s \
  --server_cpus=0-1 --load_cpus=2-15 "${baseline[@]}" \
  --points="1KiB:256 64KiB:64 4MiB:8 64MiB:4" \
  --server_args="--log_level=info --drain_seconds=0 --adapters=0" \
  --out="$OUT/serving_2core" > "$OUT/serving_2core.log" 2>&1
tail -18 "$OUT/serving_2core.log"
bash bench/serving.sh --build=$b --device=gpu --duration=8s --warmup=1s \
  --server_cpus=0-7 --load_cpus=8-15 --points="1KiB:256" \
  --server_args="--max_batch_requests=1 --drain_seconds=0 --adapters=0" --out="$OUT/serving_nobatch" \
  > "$OUT/serving_nobatch.log" 2>&1
tail -5 "$OUT/serving_nobatch.log"

# 3. Small requests alone, then beside a client streaming 64 MiB requests.
{
  taskset -c 0-7 $b/server/dmlserve --device=gpu --port=50311 --log_level=info --drain_seconds=0 --adapters=0 \
    > /tmp/mixed.out 2> /tmp/mixed.err &
  pid=$!
  for _ in $(seq 100); do grep -q listening /tmp/mixed.out && break; sleep 0.2; done
  load="$b/bench/load/dmls_load --target=127.0.0.1:50311 --op=celu"
  taskset -c 8-11 $load --bytes=1KiB --concurrency=64 --duration=8s --warmup=1s \
    --json=/tmp/small_alone.json | tail -6
  echo "--- with 64 MiB requests streaming beside"
  taskset -c 12-15 $load --bytes=64MiB --concurrency=2 --rpc=stream --duration=12s \
    --warmup=0s --json=/tmp/big_beside.json > /tmp/big.out 2>&1 &
  big=$!
  sleep 2
  taskset -c 8-11 $load --bytes=1KiB --concurrency=64 --duration=8s --warmup=1s \
    --json=/tmp/small_mixed.json | tail -6
  wait $big; tail -6 /tmp/big.out
  kill -TERM $pid; wait $pid; echo "dmlserve exit $?"
  cat /tmp/mixed.err | tail -3
  cp /tmp/small_alone.json /tmp/small_mixed.json /tmp/big_beside.json "$OUT/serving/" 2>/dev/null
} > "$OUT/mixed.log" 2>&1
cat "$OUT/mixed.log" | grep -E "p99|latency|ok/s|exit" | head -20

# 4. ghz at the small points.
if command -v ghz > /dev/null; then
  bash bench/serving.sh --build=$b --device=gpu --ghz=proto --server_cpus=0-7 \
    --load_cpus=8-15 --points="1KiB:64 1KiB:256 64KiB:64" --server_args="--drain_seconds=0 --adapters=0" \
    --out="$OUT/ghz" \
    > "$OUT/ghz.log" 2>&1
  tail -6 "$OUT/ghz.log"
fi
unset LD_LIBRARY_PATH

# 5. Correctness on the GPU.
{
  DMLS_KERNELS_TEST_ADAPTER=gpu DMLS_CONFORMANCE_DATA_DIR=tests/data \
    ours $b/tests/conformance/conformance_gpu_test 2>&1 | tail -4
  DMLS_KERNELS_TEST_ADAPTER=gpu ours $b/engine/d3d12/dxbc_view_base_gpu_test 2>&1 | tail -4
  DMLS_KERNELS_TEST_ADAPTER=gpu ours $b/engine/d3d12/d3d12_operators_test 2>&1 | tail -4
} 2>&1 | tee "$OUT/gpu_tests.log"

# Everything the run wrote, in one file (the device tool returns few files).
tar czf "$OUT/raw.tgz" -C "$OUT" serving serving_2core serving_nobatch $( [ -d "$OUT/ghz" ] && echo ghz ) \
  torch.log 2>/dev/null
