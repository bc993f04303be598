#!/bin/bash
# perf profiles of dmls_bench engine mode (H200), reported on the machine (its own libc).
source bench/gpu_env.sh
P=$PWD/.gpu/perf/lib
PERF="env LD_LIBRARY_PATH=$P:$rt $PWD/.gpu/perf/perf"
ARGS="--device=gpu --ops=celu --sizes=1M --no_dispatch_cost --engine_requests=400000 --engine_elements=256 --engine_in_flight=2048 --engine_threads=8 --engine_max_batch=256"
for c in "$@"; do
  echo "== perf $c"
  LD_LIBRARY_PATH=$rt timeout 90 $PERF record -F 1999 --call-graph dwarf,16384 -o /tmp/$c.data .gpu/prof/$c $ARGS 2>&1 | grep -E "^engine:" | cut -c1-200
  $PERF report -i /tmp/$c.data --no-children --sort pid --stdio -g none 2>/dev/null | grep -v "^#" | grep -v "^$" | head -14 > $OUT/$c.pid.txt
  $PERF report -i /tmp/$c.data --no-children --sort pid,dso,sym --stdio -g none 2>/dev/null | grep -v "^#" | grep -v "^$" | head -150 > $OUT/$c.sym.txt
  $PERF report -i /tmp/$c.data --children --sort pid,sym --stdio -g none 2>/dev/null | grep -v "^#" | grep -v "^$" | head -300 > $OUT/$c.children.txt
  $PERF report -i /tmp/$c.data --no-children --sort sym --stdio -g caller,0.5,callee --percent-limit 1.5 2>/dev/null | head -600 > $OUT/$c.callers.txt
done
