#!/bin/bash
# perf call graphs of dmlserve --device=gpu on cores 0-1 under dmls_load
# (1 KiB CELU, c=256) on cores 2-15 (H200).
source bench/gpu_env.sh
export LD_LIBRARY_PATH=$rt
P=$PWD/.gpu/perf/lib
PERF="env LD_LIBRARY_PATH=$P:$rt $PWD/.gpu/perf/perf"
B=.gpu/c3b
name=dmlserve
taskset -c 0-1 $B/server/dmlserve --port=0 --device=gpu --log_level=warn --drain_seconds=0 --adapters=0 > /tmp/$name.out 2>/tmp/$name.err &
pid=$!
for i in $(seq 100); do grep -q ' listening on ' /tmp/$name.out && break; sleep 0.2; done
target=$(sed -n 's/.* listening on //p' /tmp/$name.out | head -1)
taskset -c 2-15 $B/bench/load/dmls_load --target=$target --rpc=unary --op=celu --bytes=1KiB --concurrency=256 --duration=8s --warmup=0s > /tmp/load.txt 2>&1 &
lp=$!
sleep 2
$PERF record -F 1999 --call-graph dwarf,16384 -p $pid -o /tmp/$name.data -- sleep 4 2>&1 | tail -1
wait $lp; tail -3 /tmp/load.txt
kill -INT $pid; sleep 1; kill -KILL $pid 2>/dev/null; wait $pid 2>/dev/null
$PERF report -i /tmp/$name.data --no-children --sort sym --stdio -g caller,0.5,callee,function,percent --percent-limit 0.7 2>/dev/null | grep -v "^$" | head -3000 > $OUT/self_callers.txt
$PERF report -i /tmp/$name.data --children --sort sym --stdio -g callee,0.5,caller,function,percent --percent-limit 3 2>/dev/null | grep -v "^$" | head -6000 > $OUT/children_callees.txt
