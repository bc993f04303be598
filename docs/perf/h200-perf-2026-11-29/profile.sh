#!/bin/bash
# Session 30: where the server's CPU goes per 1 KiB request on the H200
# machine (issue 25). perf (Debian's linux-perf 6.1 and its libraries,
# .gpu/perf) records echo_server and dmlserve (GPU and CPU engines; the
# build of docs/perf/h200-malloc-2026-11-29, with its symbol tables:
# .gpu/m30/sym) on cores 0-1 under dmls_load on 2-15, 5 s each, and prints
# the self time by thread, by library and by symbol.
#   OUT=/tmp/out bash docs/perf/h200-perf-2026-11-29/profile.sh
# Session 33 ran it on 69123c8 (symbol builds in .gpu/s33p), echo and GPU
# only, with the thread split (records in docs/perf/h200-s33-2026-11-29/):
#   BUILD=.gpu/s33p SKIP_CPU=1 OUT=/tmp/out bash docs/perf/h200-perf-2026-11-29/profile.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source bench/gpu_env.sh
for f in .gpu/perf/*.deb; do dpkg -x "$f" /tmp/rt; done
export LD_LIBRARY_PATH=$rt
PERF=/tmp/rt/usr/bin/perf
b=${BUILD:-.gpu/m30}
echo "paranoid $(cat /proc/sys/kernel/perf_event_paranoid)"; $PERF --version
profile() {
  local label=$1; shift
  taskset -c 0-1 "$@" --port=0 > "$OUT/$label.out" 2> "$OUT/$label.err" &
  local pid=$! t=""
  for _ in $(seq 100); do t=$(sed -n 's/.* listening on //p' "$OUT/$label.out" | head -1); [[ -n $t ]] && break; sleep 0.1; done
  [[ -n $t ]] || { echo "$label: did not start"; cat "$OUT/$label.err"; kill $pid; return; }
  taskset -c 2-15 $b/bench/load/dmls_load --target="$t" --concurrency=256 --bytes=1KiB --duration=2s --warmup=0s > /dev/null 2>&1
  taskset -c 2-15 $b/bench/load/dmls_load --target="$t" --concurrency=256 --bytes=1KiB --duration=8s --warmup=0s > "$OUT/$label.load" 2>&1 &
  local load=$!
  sleep 1
  $PERF record -F 1999 -g -p $pid -o "/tmp/$label.data" -- sleep 5 > "$OUT/$label.record" 2>&1
  wait $load; kill $pid; wait $pid 2>/dev/null
  echo "== $label: $(grep -E '^throughput' "$OUT/$label.load")"
  $PERF report -i "/tmp/$label.data" --no-children --sort comm --stdio -g none 2>/dev/null | grep -v '^#' | grep . | head -15
  $PERF report -i "/tmp/$label.data" --no-children --sort pid --stdio -g none 2>/dev/null | grep -v "^#" | grep . | head -12
  $PERF report -i "/tmp/$label.data" --no-children --sort dso --stdio -g none 2>/dev/null | grep -v '^#' | grep . | head -15
  $PERF report -i "/tmp/$label.data" --no-children --sort sym --stdio -g none 2>/dev/null | grep -v '^#' | grep . | head -60 > "$OUT/$label.sym.txt"
  head -35 "$OUT/$label.sym.txt"
}
{
profile echo $b/sym/echo_server
profile gpu $b/sym/dmlserve --device=gpu --log_level=warn --adapters=0
[[ -n ${SKIP_CPU:-} ]] || profile cpu $b/sym/dmlserve --device=cpu --log_level=warn
} 2>&1 | tee "$OUT/summary.txt"
