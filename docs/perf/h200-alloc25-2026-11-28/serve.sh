#!/bin/bash
# Issue 25, alloc25 (fewer allocations per small request): before =
# ${BEFORE:-.gpu/h28} (main at 27836ea, staged by the lead), after =
# ${AFTER:-.gpu/alloc25}, beside echo_server and sync_echo_server; server on
# cores 0-1, load on 2-15; 1 KiB only, both engines. About 250 s; writes
# $OUT/summary.txt and the logs. Same shape as
# docs/perf/h200-srv25-2026-11-28/serve.sh, whose staged folders are fixed.
#   OUT=/tmp/out bash docs/perf/h200-alloc25-2026-11-28/serve.sh
# POINTS (the GPU points), CPU_ROUNDS and CPU_TIMEOUT (of
# bench/cpu_per_request.sh) trim or widen it.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
before=${BEFORE:-.gpu/h28} after=${AFTER:-.gpu/alloc25}
for d in "$before" "$after"; do
  [[ -x $d/server/dmlserve ]] || { echo "no $d/server/dmlserve" >&2; exit 2; }
done
source bench/gpu_env.sh
export LD_LIBRARY_PATH=$rt
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nproc; } > "$OUT/machine.log" 2>&1
bash bench/serving.sh --build="$after" --device=gpu --duration=6s --warmup=1s \
  --baseline="$before/server/dmlserve" \
  --server_args="--log_level=warn --drain_seconds=0 --adapters=0" \
  --server_cpus=0-1 --load_cpus=2-15 --points="${POINTS:-1KiB:256}" \
  --out="$OUT/s2" > "$OUT/s2.log" 2>&1
bash bench/serving.sh --build="$after" --device=cpu --duration=6s --warmup=1s \
  --baseline="$before/server/dmlserve" --server_args="--log_level=warn --drain_seconds=0" \
  --server_cpus=0-1 --load_cpus=2-15 --points="1KiB:256" --out="$OUT/c2" > "$OUT/c2.log" 2>&1
DMLS_LOAD=$after/bench/load/dmls_load timeout "${CPU_TIMEOUT:-240}" bash bench/cpu_per_request.sh \
  --rounds="${CPU_ROUNDS:-3}" --concurrency=256 --duration=6s --server_cpus=0-1 --load_cpus=2-15 \
  "echo=$after/bench/echo/echo_server" \
  "cpu-before=$before/server/dmlserve --device=cpu --log_level=warn" \
  "cpu-after=$after/server/dmlserve --device=cpu --log_level=warn" \
  "gpu-before=$before/server/dmlserve --device=gpu --log_level=warn --adapters=0" \
  "gpu-after=$after/server/dmlserve --device=gpu --log_level=warn --adapters=0" \
  > "$OUT/cpu_per_request.txt" 2>&1
{ echo "== two server cores, GPU (before $before, after $after)"; tail -18 "$OUT/s2.log"
  echo "== two server cores, CPU engine"; tail -7 "$OUT/c2.log"
  echo "== us of server CPU per request (${CPU_ROUNDS:-3} rounds)"; cat "$OUT/cpu_per_request.txt"; } \
  > "$OUT/summary.txt"
cat "$OUT/summary.txt"
tar czf "$OUT/raw.tgz" -C "$OUT" s2 c2 2>/dev/null
