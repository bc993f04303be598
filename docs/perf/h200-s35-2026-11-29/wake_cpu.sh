#!/usr/bin/env bash
# Session 35: GPU engine wake-up change (s34 vs s34w) and CPU engine packed activations (s34 vs s35a), server on cores 0-1.
set -uo pipefail
FINAL=${OUT:-/tmp/out}; mkdir -p "$FINAL"
source bench/gpu_env.sh
export LD_LIBRARY_PATH=$rt
a=.gpu/s34
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$FINAL/machine.log"
nproc >> "$FINAL/machine.log"
DMLS_LOAD=$a/bench/load/dmls_load timeout 290 bash bench/cpu_per_request.sh --threads \
  --rounds=6 --concurrency=256 --duration=5s --server_cpus=0-1 --load_cpus=2-15 \
  "echo=$a/bench/echo/echo_server" \
  "before=$a/server/dmlserve --device=gpu --log_level=warn --adapters=0" \
  "wake=.gpu/s34w/server/dmlserve --device=gpu --log_level=warn --adapters=0" \
  > "$FINAL/wake.txt" 2>&1
DMLS_LOAD=$a/bench/load/dmls_load timeout 250 bash bench/cpu_per_request.sh \
  --rounds=6 --concurrency=256 --duration=5s --server_cpus=0-1 --load_cpus=2-15 \
  "echo=$a/bench/echo/echo_server" \
  "cpu_before=$a/server/dmlserve --device=cpu --log_level=warn" \
  "cpu_after=.gpu/s35a/server/dmlserve --device=cpu --log_level=warn" \
  > "$FINAL/cpu.txt" 2>&1
grep -E "^[a-z_]+ [0-9]" "$FINAL/wake.txt" "$FINAL/cpu.txt"
grep -E "dispatch" "$FINAL/wake.txt"
