#!/bin/bash
# Issue 25, srv25 (small CPU requests inline, allocation-free admission):
# before = .gpu/h0 (main at 7183e63), after = .gpu/srv25, beside
# echo_server and sync_echo_server; server on cores 0-1, load on 2-15.
# About 300 s; writes $OUT/summary.txt and the logs. POINTS (the GPU
# points), CPU_ROUNDS and CPU_TIMEOUT (of bench/cpu_per_request.sh) trim it
# (serve2.sh, what ran on the H200 machine).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source bench/gpu_env.sh
export LD_LIBRARY_PATH=$rt
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nproc; } > "$OUT/machine.log" 2>&1
bash bench/serving.sh --build=.gpu/srv25 --device=gpu --duration=6s --warmup=1s \
  --baseline=.gpu/h0/server/dmlserve \
  --server_args="--log_level=warn --drain_seconds=0 --adapters=0" \
  --server_cpus=0-1 --load_cpus=2-15 --points="${POINTS:-1KiB:256 64KiB:64 4MiB:8 64MiB:4}" \
  --out="$OUT/s2" > "$OUT/s2.log" 2>&1
bash bench/serving.sh --build=.gpu/srv25 --device=cpu --duration=6s --warmup=1s \
  --baseline=.gpu/h0/server/dmlserve --server_args="--log_level=warn --drain_seconds=0" \
  --server_cpus=0-1 --load_cpus=2-15 --points="1KiB:256" --out="$OUT/c2" > "$OUT/c2.log" 2>&1
DMLS_LOAD=.gpu/srv25/bench/load/dmls_load timeout ${CPU_TIMEOUT:-200} bash bench/cpu_per_request.sh \
  --rounds=${CPU_ROUNDS:-3} --concurrency=256 --duration=6s --server_cpus=0-1 --load_cpus=2-15 \
  "echo=.gpu/srv25/bench/echo/echo_server" \
  "cpu-before=.gpu/h0/server/dmlserve --device=cpu --log_level=warn" \
  "cpu-after=.gpu/srv25/server/dmlserve --device=cpu --log_level=warn" \
  "gpu-before=.gpu/h0/server/dmlserve --device=gpu --log_level=warn --adapters=0" \
  "gpu-after=.gpu/srv25/server/dmlserve --device=gpu --log_level=warn --adapters=0" \
  > "$OUT/cpu_per_request.txt" 2>&1
{ echo "== two server cores, GPU"; tail -18 "$OUT/s2.log"
  echo "== two server cores, CPU engine"; tail -7 "$OUT/c2.log"
  echo "== us of server CPU per request (${CPU_ROUNDS:-3} rounds)"; cat "$OUT/cpu_per_request.txt"; } \
  > "$OUT/summary.txt"
cat "$OUT/summary.txt"
tar czf "$OUT/raw.tgz" -C "$OUT" s2 c2 2>/dev/null
