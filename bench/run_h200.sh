#!/usr/bin/env bash
# The H200 measurement run (../shared/GPU.md): binaries built on Debian 12 in
# .gpu/bin, Debian runtime packages in .gpu/root (GL/Vulkan loaders, unpacked
# into /) and .gpu/lib (vkd3d, gRPC, abseil, ... unpacked into /tmp/rt).
# Writes every log under $OUT (default /tmp/out). Leaves the card's settings
# alone. Usage, on the GPU machine, from the repository root:
#   bash bench/run_h200.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
source bench/gpu_env.sh  # GPU.md step 2; sets $rt
# Our binaries get the Debian libraries; PyTorch keeps the machine's own.
ours() { LD_LIBRARY_PATH=$rt "$@"; }

{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  ours /tmp/rt/usr/bin/vulkaninfo --summary 2>&1 | grep -E 'deviceName|driverVersion|apiVersion'
  ours .gpu/bin/dmls_bench --list_adapters
} 2>&1 | tee "$OUT/machine.log"

# 1. Anchors: PyTorch copy, CELU, clamp_min, sigmoid, GELU, layer_norm.
python3 bench/torch_anchors.py 2>&1 | tee "$OUT/torch.log"
# 2. dmls_bench: elementwise and MVN1 at 1M/16M/128M with the D3D12 copy
#    anchor, per-dispatch and submit cost, engine throughput; then MVN1 at
#    the 512 x 262143 bar shape; then the anchors again (drift check).
ours .gpu/bin/dmls_bench --device=gpu 2>&1 | tee "$OUT/bench.log"
ours .gpu/bin/dmls_bench --device=gpu --ops=mvn1 --sizes=134217216 --mvn_rows=512 \
  --no_dispatch_cost --engine_requests=0 2>&1 | tee "$OUT/bench_mvn1.log"
ours .gpu/bin/dmls_bench --device=gpu --ops=elu,gelu,identity --sizes=128M \
  --no_dispatch_cost --engine_requests=0 2>&1 | tee "$OUT/bench_more.log"
python3 bench/torch_anchors.py 2>&1 | tee "$OUT/torch_after.log"
# 3. The oracle corpus through the D3D12 engine on the GPU, outputs poisoned
#    (the randomized cases too; every failing id is in the full log).
DMLS_KERNELS_TEST_ADAPTER=gpu DMLS_CONFORMANCE_DATA_DIR=tests/data \
  ours .gpu/bin/conformance_gpu_test 2>&1 | tee "$OUT/gpu_conformance_full.log" \
  | tail -30 | tee "$OUT/gpu_conformance.log"
# 4. The server on the GPU: capabilities, three operators, SIGTERM -> exit 0.
{
  LD_LIBRARY_PATH=$rt .gpu/bin/dmlserve --device=gpu --port=50199 > /tmp/server.out 2>&1 &
  pid=$!
  for _ in $(seq 50); do grep -q listening /tmp/server.out && break; sleep 0.2; done
  ours .gpu/bin/dmlctl --server=127.0.0.1:50199 caps | head -8
  python3 -c "import numpy as n; n.save('/tmp/x.npy', n.linspace(-4, 4, 4096, dtype=n.float32).reshape(4, 1024))"
  for op in celu threshold; do
    ours .gpu/bin/dmlctl --server=127.0.0.1:50199 run client/examples/$op.json \
      --input=/tmp/x.npy --output=/tmp/$op.npy --json
    python3 -c "import numpy as n; y=n.load('/tmp/$op.npy'); print('$op', y.shape, y.ravel()[:4], y.ravel()[-4:])"
  done
  ours .gpu/bin/dmlctl --server=127.0.0.1:50199 run client/examples/mvn1_fused_celu.json \
    --random=7 --output=/tmp/mvn1.npy --json
  kill -TERM $pid; wait $pid; echo "dmlserve exit status $?"
  echo "--- server log"; cat /tmp/server.out
} 2>&1 | tee "$OUT/server.log"
