#!/bin/bash
# Session 34 (issue 25): what the GPU engine's own threads do per 1 KiB
# request on the H200 machine. perf (.gpu/perf) records dmlserve
# --device=gpu (symbols: .gpu/s34p/sym, `strip --strip-debug` of abce0f4's
# build) on cores 0-1 under dmls_load (.gpu/s34) on 2-15, c=256, 5 s, and
# prints self time by thread name, then by library and by symbol for
# dmls-dispatch, dmls-complete and dmls-copy.
#   OUT=/tmp/out bash docs/perf/h200-s34-2026-11-29/profile_threads.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source bench/gpu_env.sh
for f in .gpu/perf/*.deb; do dpkg -x "$f" /tmp/rt; done
export LD_LIBRARY_PATH=$rt
PERF=/tmp/rt/usr/bin/perf
taskset -c 0-1 .gpu/s34p/sym/dmlserve --device=gpu --log_level=warn --adapters=0 --port=0 \
  > "$OUT/gpu.out" 2> "$OUT/gpu.err" &
pid=$! t=""
for _ in $(seq 100); do t=$(sed -n 's/.* listening on //p' "$OUT/gpu.out" | head -1); [[ -n $t ]] && break; sleep 0.1; done
load=.gpu/s34/bench/load/dmls_load
taskset -c 2-15 $load --target="$t" --concurrency=256 --bytes=1KiB --duration=2s --warmup=0s > /dev/null 2>&1
taskset -c 2-15 $load --target="$t" --concurrency=256 --bytes=1KiB --duration=8s --warmup=0s > "$OUT/gpu.load" 2>&1 &
lp=$!
sleep 1
$PERF record -F 1999 -g -p $pid -o /tmp/gpu.data -- sleep 5 > "$OUT/gpu.record" 2>&1
wait $lp; kill $pid; wait $pid 2>/dev/null
{
  echo "== $(grep -E '^throughput' "$OUT/gpu.load")"
  $PERF report -i /tmp/gpu.data --no-children --sort comm --stdio -g none 2>/dev/null | grep -v '^#' | grep .
  for c in dmls-dispatch dmls-complete dmls-copy; do
    echo "== $c by library"
    $PERF report -i /tmp/gpu.data --no-children --comm=$c --sort dso --stdio -g none 2>/dev/null | grep -v '^#' | grep . | head -12
    echo "== $c by symbol"
    $PERF report -i /tmp/gpu.data --no-children --comm=$c --sort sym --stdio -g none 2>/dev/null | grep -v '^#' | grep . | head -45 | cut -c1-160
  done
  echo "== dmls-dispatch, callers of its top entries"
  $PERF report -i /tmp/gpu.data --no-children --comm=dmls-dispatch --sort dso --stdio -g caller,0.5,callee --percent-limit 3 2>/dev/null | grep -v '^#' | grep . | head -120 | cut -c1-160
} > "$OUT/profile_threads.txt" 2>&1
cat "$OUT/profile_threads.txt"
