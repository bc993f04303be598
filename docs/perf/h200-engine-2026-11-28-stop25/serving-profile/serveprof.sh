#!/bin/bash
# perf profiles of echo_server and dmlserve --device=gpu on cores 0-1 under
# dmls_load (1 KiB CELU, c=256) on cores 2-15 (H200).
source bench/gpu_env.sh
export LD_LIBRARY_PATH=$rt
P=$PWD/.gpu/perf/lib
PERF="env LD_LIBRARY_PATH=$P:$rt $PWD/.gpu/perf/perf"
B=.gpu/c3b
for name in echo dmlserve; do
  if [[ $name == echo ]]; then cmd=($B/bench/echo/echo_server --port=0)
  else cmd=($B/server/dmlserve --port=0 --device=gpu --log_level=warn --drain_seconds=0 --adapters=0); fi
  taskset -c 0-1 "${cmd[@]}" > /tmp/$name.out 2>/tmp/$name.err &
  pid=$!
  for i in $(seq 100); do grep -q ' listening on ' /tmp/$name.out && break; sleep 0.2; done
  target=$(sed -n 's/.* listening on //p' /tmp/$name.out | head -1)
  echo "== $name pid $pid at $target"
  taskset -c 2-15 $B/bench/load/dmls_load --target=$target --rpc=unary --op=celu --bytes=1KiB --concurrency=256 --duration=8s --warmup=0s > $OUT/$name.load.txt 2>&1 &
  lp=$!
  sleep 2
  $PERF record -F 1999 --call-graph dwarf,16384 -p $pid -o /tmp/$name.data -- sleep 4 2>&1 | tail -1
  wait $lp; tail -3 $OUT/$name.load.txt
  kill -INT $pid; sleep 1; kill -KILL $pid 2>/dev/null; wait $pid 2>/dev/null
  $PERF report -i /tmp/$name.data --no-children --sort dso,sym --stdio -g none 2>/dev/null | grep -v "^#" | grep -v "^$" | head -80 > $OUT/$name.self.txt
  $PERF report -i /tmp/$name.data --children --sort sym --stdio -g none 2>/dev/null | grep -v "^#" | grep -v "^$" | head -250 > $OUT/$name.children.txt
  $PERF report -i /tmp/$name.data --no-children --sort comm --stdio -g none 2>/dev/null | grep -v "^#" | grep -v "^$" | head -20 > $OUT/$name.comm.txt
  $PERF report -i /tmp/$name.data --no-children --sort pid --stdio -g none 2>/dev/null | grep -v "^#" | grep -v "^$" | head -30 > $OUT/$name.tid.txt
done
