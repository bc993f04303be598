#!/usr/bin/env bash
# Device run: multi-GPU resident scaling with phase timings, then a perf
# profile of the server under the two-GPU MVN1 load.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source bench/gpu_env.sh
export LD_LIBRARY_PATH=$rt
nproc; lscpu | grep -i "numa\|model name\|socket\|thread" | tee "$OUT/cpu.log"
nvidia-smi topo -m 2>&1 | tee "$OUT/topo.log" | head -20
ROUNDS=1 bash bench/run_multi_gpu_resident.sh > "$OUT/scaling.log" 2>&1
cat "$OUT/scaling.log" | grep -v "^\[" | tail -40
echo "== perf"
b=.gpu/build
export PERF_LIB=$PWD/.gpu/perf/lib
perf() { LD_LIBRARY_PATH=$PERF_LIB:$rt $PWD/.gpu/perf/perf "$@"; }
cat /proc/sys/kernel/perf_event_paranoid
for adapters in 0 0,1; do
  log=$OUT/perf-server-$adapters.log
  taskset -c 0-15 $b/server/dmlserve --device=gpu --adapters=$adapters --port=50072 --drain_seconds=0 --max_chain_steps=64 > $log 2>&1 &
  srv=$!
  for _ in $(seq 1 300); do grep -q "listening on" "$log" && break; sleep 0.1; done
  taskset -c 16-31 $b/bench/resident/dmls_resident_bench --target=127.0.0.1:50072 --mode=chainload --clients=32 --seconds=8 --op=mvn1 --steps=64 --bytes=$((16<<20)) --chunk_bytes=$((4<<20)) > $OUT/perf-load-$adapters.log 2>&1 &
  ld=$!
  sleep 3
  perf record -F 1999 -g -p $srv -o /tmp/perf-$adapters.data -- sleep 4 > $OUT/perf-record-$adapters.log 2>&1
  wait $ld; cat $OUT/perf-load-$adapters.log | tail -1
  kill -INT $srv; wait $srv
  perf report -i /tmp/perf-$adapters.data --no-children -g none --sort pid 2>/dev/null | grep -v "^#" | grep -v "^$" | head -20 > $OUT/perf-$adapters-threads.txt
  perf report -i /tmp/perf-$adapters.data --no-children -g none --sort comm,dso 2>/dev/null | grep -v "^#" | grep -v "^$" | head -40 > $OUT/perf-$adapters-dso.txt
  for t in $(awk '{print $2}' $OUT/perf-$adapters-threads.txt | cut -d: -f1 | head -6); do
    echo "== tid $t" >> $OUT/perf-$adapters-syms.txt
    perf report -i /tmp/perf-$adapters.data --no-children -g none --tid $t --sort dso,sym 2>/dev/null | grep -v "^#" | grep -v "^$" | head -30 >> $OUT/perf-$adapters-syms.txt
    echo "== tid $t callers" >> $OUT/perf-$adapters-calls.txt
    perf report -i /tmp/perf-$adapters.data --no-children -G --tid $t --sort dso 2>/dev/null | grep -v "^#" | grep -v "^$" | head -80 >> $OUT/perf-$adapters-calls.txt
  done
  head -12 $OUT/perf-$adapters-threads.txt; head -25 $OUT/perf-$adapters-dso.txt
done
tar czf $OUT/perf-txt.tgz -C $OUT $(cd $OUT; ls perf-*.txt perf-*.log) 2>/dev/null
