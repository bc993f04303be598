#!/bin/bash
# Session 30, one visit. Issue 25: malloc thresholds (TuneAllocator) --
# before = main at 89894cd (.gpu/m30/before/dmlserve), after = the staged
# build (.gpu/m30, with TuneAllocator) -- beside echo_server and
# sync_echo_server; server on cores 0-1, load on 2-15. Then the MVN GPU
# tests of the same build on the hardware (issue 26: the kernels of
# 3b5f48d had not run the numerics suite on a GPU).
#   OUT=/tmp/out bash docs/perf/h200-malloc-2026-11-29/visit.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
b=.gpu/m30
source bench/gpu_env.sh
export LD_LIBRARY_PATH=$rt
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nproc; } > "$OUT/machine.log" 2>&1
cat "$OUT/machine.log"
bash bench/serving.sh --build="$b" --device=gpu --duration=6s --warmup=1s \
  --baseline="$b/before/dmlserve" \
  --server_args="--log_level=warn --drain_seconds=0 --adapters=0" \
  --server_cpus=0-1 --load_cpus=2-15 --points="${POINTS:-1KiB:256 64KiB:64 4MiB:8 64MiB:4}" \
  --out="$OUT/s2" > "$OUT/s2.log" 2>&1
bash bench/serving.sh --build="$b" --device=cpu --duration=6s --warmup=1s \
  --baseline="$b/before/dmlserve" --server_args="--log_level=warn --drain_seconds=0" \
  --server_cpus=0-1 --load_cpus=2-15 --points="1KiB:256" --out="$OUT/c2" > "$OUT/c2.log" 2>&1
DMLS_LOAD=$b/bench/load/dmls_load timeout "${CPU_TIMEOUT:-200}" bash bench/cpu_per_request.sh \
  --rounds="${CPU_ROUNDS:-3}" --concurrency=256 --duration=5s --server_cpus=0-1 --load_cpus=2-15 \
  "echo=$b/bench/echo/echo_server" \
  "cpu-before=$b/before/dmlserve --device=cpu --log_level=warn" \
  "cpu-after=$b/server/dmlserve --device=cpu --log_level=warn" \
  "gpu-before=$b/before/dmlserve --device=gpu --log_level=warn --adapters=0" \
  "gpu-after=$b/server/dmlserve --device=gpu --log_level=warn --adapters=0" \
  > "$OUT/cpu_per_request.txt" 2>&1
{ echo "== two server cores, GPU (before $b/before, after $b)"; tail -24 "$OUT/s2.log"
  echo "== two server cores, CPU engine"; tail -7 "$OUT/c2.log"
  echo "== us of server CPU per request (${CPU_ROUNDS:-3} rounds)"; cat "$OUT/cpu_per_request.txt"; } \
  > "$OUT/summary.txt"
cat "$OUT/summary.txt"
tar czf "$OUT/raw.tgz" -C "$OUT" s2 c2 2>/dev/null
for t in mvn/mvn_schedule_gpu_test mvn/mvn_numerics_gpu_test; do
  s=$(date +%s)
  DMLS_KERNELS_TEST_ADAPTER=gpu timeout "${TEST_TIMEOUT:-150}" $b/tests/$t 2>&1 |
    grep -E "PASSED|FAILED|tests ran|Failure" | tail -6
  echo "$t in $(( $(date +%s) - s )) s"
done 2>&1 | tee "$OUT/gpu_tests.log"
