#!/bin/bash
# Session 33's serving visits. Issue 25 (CPU per small request): before =
# .gpu/s33a (53679e1, main at the session's start: dmlserve only), after =
# $AFTER. Server on cores 0-1, load on 2-15, the same dmls_load (after's)
# for both.
#   first visit:  OUT=/tmp/out bash docs/perf/h200-s33-2026-11-29/visit.sh
#     (.gpu/s33 = e3ce93a: CELU skips expm1 for x > 0, operator fields
#     through a table built once, Work's step inline, FLOAT32 activations
#     without the type switch, CoalesceKey as bytes)
#   second visit: AFTER=.gpu/s33b CPU_ROUNDS=4 OUT=/tmp/out bash docs/perf/h200-s33-2026-11-29/visit.sh
#     (.gpu/s33b = 6f4b2da: and the unary reactor's reactions inline)
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
a=${AFTER:-.gpu/s33}
b=.gpu/s33a/server/dmlserve
source bench/gpu_env.sh
export LD_LIBRARY_PATH=$rt
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nproc; } > "$OUT/machine.log" 2>&1
cat "$OUT/machine.log"
bash bench/serving.sh --build="$a" --device=gpu --duration=6s --warmup=1s \
  --baseline="$b" \
  --server_args="--log_level=warn --drain_seconds=0 --adapters=0" \
  --server_cpus=0-1 --load_cpus=2-15 --points="${POINTS:-1KiB:256 64KiB:64}" \
  --out="$OUT/s2" > "$OUT/s2.log" 2>&1
bash bench/serving.sh --build="$a" --device=cpu --duration=6s --warmup=1s \
  --baseline="$b" --server_args="--log_level=warn --drain_seconds=0" \
  --server_cpus=0-1 --load_cpus=2-15 --points="1KiB:256" --out="$OUT/c2" > "$OUT/c2.log" 2>&1
DMLS_LOAD=$a/bench/load/dmls_load timeout "${CPU_TIMEOUT:-220}" bash bench/cpu_per_request.sh \
  --rounds="${CPU_ROUNDS:-3}" --concurrency=256 --duration=5s --server_cpus=0-1 --load_cpus=2-15 \
  "echo=$a/bench/echo/echo_server" \
  "cpu-before=$b --device=cpu --log_level=warn" \
  "cpu-after=$a/server/dmlserve --device=cpu --log_level=warn" \
  "gpu-before=$b --device=gpu --log_level=warn --adapters=0" \
  "gpu-after=$a/server/dmlserve --device=gpu --log_level=warn --adapters=0" \
  > "$OUT/cpu_per_request.txt" 2>&1
{ echo "== two server cores, GPU (before $b, after $a)"; tail -24 "$OUT/s2.log"
  echo "== two server cores, CPU engine"; tail -12 "$OUT/c2.log"
  echo "== us of server CPU per request (${CPU_ROUNDS:-3} rounds)"; cat "$OUT/cpu_per_request.txt"; } \
  > "$OUT/summary.txt"
cat "$OUT/summary.txt"
tar czf "$OUT/raw.tgz" -C "$OUT" s2 c2 2>/dev/null
