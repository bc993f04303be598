#!/usr/bin/env bash
# Session 34 (issue 25): where a 1 KiB request's server CPU goes, by thread
# (our threads named since abce0f4), on the H200 machine: echo, the CPU
# engine and the GPU engine, server on cores 0-1, load on 2-15, c=256,
# ROUNDS alternating rounds (default 3). Build: A (default .gpu/s34,
# `bash bench/stage_gpu.sh build .gpu/s34`). Carry .gpu/root .gpu/lib and A.
set -uo pipefail
FINAL=${OUT:-/tmp/out}; mkdir -p "$FINAL"
source bench/gpu_env.sh
export LD_LIBRARY_PATH=$rt
a=${A:-.gpu/s34}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$FINAL/machine.log"
DMLS_LOAD=$a/bench/load/dmls_load timeout 400 bash bench/cpu_per_request.sh --threads \
  --rounds="${ROUNDS:-3}" --concurrency=256 --duration=5s --server_cpus=0-1 --load_cpus=2-15 \
  "echo=$a/bench/echo/echo_server" \
  "cpu=$a/server/dmlserve --device=cpu --log_level=warn" \
  "gpu=$a/server/dmlserve --device=gpu --log_level=warn --adapters=0" \
  > "$FINAL/threads.txt" 2>&1
cat "$FINAL/threads.txt"
