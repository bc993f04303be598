#!/bin/bash
# Issue 25: serving before (717eac2's dmlserve as --baseline) and after,
# beside echo_server and sync_echo_server, eight-core then two-core server.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source bench/gpu_env.sh
export LD_LIBRARY_PATH=$rt
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nproc; } > "$OUT/machine.log" 2>&1
common=(--build=.gpu/after --device=gpu --duration=6s --warmup=1s
  --baseline=.gpu/before/server/dmlserve
  --server_args="--log_level=warn --drain_seconds=0 --adapters=0")
bash bench/serving.sh "${common[@]}" --server_cpus=0-7 --load_cpus=8-15 \
  --points="1KiB:256 64KiB:64 4MiB:8 64MiB:4" --out="$OUT/s8" > "$OUT/s8.log" 2>&1
tail -18 "$OUT/s8.log"
bash bench/serving.sh "${common[@]}" --server_cpus=0-1 --load_cpus=2-15 \
  --points="1KiB:256 64KiB:64 4MiB:8 64MiB:4" --out="$OUT/s2" > "$OUT/s2.log" 2>&1
tail -18 "$OUT/s2.log"
bash bench/serving.sh --build=.gpu/after --device=cpu --duration=6s --warmup=1s \
  --baseline=.gpu/before/server/dmlserve --server_args="--log_level=warn --drain_seconds=0" \
  --server_cpus=0-1 --load_cpus=2-15 --points="1KiB:256" --out="$OUT/c2" > "$OUT/c2.log" 2>&1
tail -7 "$OUT/c2.log"
tar czf "$OUT/raw.tgz" -C "$OUT" s8 s2 c2 2>/dev/null
