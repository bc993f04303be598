#!/usr/bin/env bash
# Multi-GPU serving (issue #11): does a second GPU add throughput?
#
# On a 2-GPU machine (../shared/GPU.md, kind nvidia-h200-x2: 32 cores), the
# same dmlserve --device=gpu run twice per point:
#   one GPU:  --adapters=0        (one engine)
#   two GPUs: default             (one engine per discrete GPU, requests to
#                                  the least-loaded one)
# at concurrencies that saturate one GPU, and twice that:
#   CELU 64 KiB, c=256 and c=512, 2 connections (small requests: the
#     per-request path, batching and coalescing per engine);
#   MVN1 on 16 MiB tensors (4096-element rows), c=16 and c=32, 2
#     connections (large requests: copies and kernels).
# Server on cores 0-15, load (bench/load/dmls_load) on 16-31, 1 s warm-up,
# 8 s measured per point. Prints a table of ok/s and p50/p99 latency per
# configuration with the two-GPU/one-GPU ratio, and how the two-GPU server
# split the requests (gpu0.requests / gpu1.requests from the engine counters
# it logs at shutdown). What to expect: close to 2x where one GPU is the
# bottleneck (MVN1 16 MiB); less where the server's CPU side (gRPC, copies)
# is (CELU 64 KiB) -- the table says which.
#
# Expects .gpu/root and .gpu/lib (GPU.md step 1) and .gpu/build laid out
# like a build directory (server/dmlserve, bench/load/dmls_load), as
# bench/run_gpu_serving.sh. Logs and JSON under $OUT. Usage, on the GPU
# machine, from the repository root:
#   bash bench/run_multi_gpu.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT/multi_gpu"
source bench/gpu_env.sh  # GPU.md step 2
export LD_LIBRARY_PATH=$rt
b=.gpu/build
SERVER_CPUS=${SERVER_CPUS:-0-15}
LOAD_CPUS=${LOAD_CPUS:-16-31}
DURATION=${DURATION:-8s}
WARMUP=${WARMUP:-1s}
PORT=50411
# op:bytes:concurrency
POINTS=${POINTS:-"celu:64KiB:256 celu:64KiB:512 mvn1:16MiB:16 mvn1:16MiB:32"}

{
  nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv
  nproc; lscpu | grep -E 'Model name|^CPU\(s\)'
} 2>&1 | tee "$OUT/multi_gpu/machine.log"

# run_config NAME SERVER_ARGS...: starts dmlserve, runs every point, stops it.
run_config() {
  local name=$1; shift
  local log="$OUT/multi_gpu/server_$name.log"
  taskset -c "$SERVER_CPUS" $b/server/dmlserve --device=gpu --port=$PORT \
    --log_level=info --max_in_flight=4096 --drain_seconds=0 "$@" \
    > "$OUT/multi_gpu/server_$name.out" 2> "$log" &
  local pid=$!
  for _ in $(seq 150); do
    grep -q listening "$OUT/multi_gpu/server_$name.out" 2>/dev/null && break
    sleep 0.2
  done
  if ! grep -q listening "$OUT/multi_gpu/server_$name.out"; then
    echo "dmlserve ($name) did not start:"; tail -20 "$log"; kill $pid; return 1
  fi
  grep -E "d3d12 engine: adapter|device [0-9]+ of|dmlserve .* on " "$log"
  for point in $POINTS; do
    IFS=: read -r op bytes conc <<< "$point"
    local extra=""
    [ "$op" = mvn1 ] && extra="--mvn_cols=4096"
    local json="$OUT/multi_gpu/${name}_${op}_${bytes}_c${conc}.json"
    taskset -c "$LOAD_CPUS" $b/bench/load/dmls_load --target=127.0.0.1:$PORT \
      --op=$op --bytes=$bytes $extra --concurrency=$conc --connections=2 \
      --duration=$DURATION --warmup=$WARMUP --json="$json" \
      > "$OUT/multi_gpu/${name}_${op}_${bytes}_c${conc}.txt" 2>&1 \
      || { echo "dmls_load failed at $name $point:"; \
           tail -5 "$OUT/multi_gpu/${name}_${op}_${bytes}_c${conc}.txt"; }
  done
  kill -TERM $pid; wait $pid; echo "dmlserve ($name) exit $?"
  grep "engine counters" "$log" | tail -1
}

run_config one --adapters=0 2>&1 | tee "$OUT/multi_gpu/one.log"
run_config two 2>&1 | tee "$OUT/multi_gpu/two.log"

python3 - "$OUT/multi_gpu" $POINTS <<'PY' | tee "$OUT/multi_gpu/table.txt"
import json, os, re, sys
out, points = sys.argv[1], sys.argv[2:]
def load(name, op, size, c):
    path = os.path.join(out, "%s_%s_%s_c%s.json" % (name, op, size, c))
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None
def cell(r):
    if r is None:
        return "%28s" % "-"
    lat = r.get("latency_ms", {})
    return "%10.0f %7.2f %8.2f %s" % (r["ok_per_s"], lat.get("p50", 0),
                                      lat.get("p99", 0),
                                      "err=%d" % r["errors"] if r["errors"] else "")
print("%-22s | %-28s | %-28s | %s" % ("point", "1 GPU ok/s p50ms p99ms",
                                       "2 GPUs ok/s p50ms p99ms", "ratio"))
for p in points:
    op, size, c = p.split(":")
    one, two = load("one", op, size, c), load("two", op, size, c)
    ratio = "%.2f" % (two["ok_per_s"] / one["ok_per_s"]) \
        if one and two and one["ok_per_s"] else "-"
    print("%-22s | %s | %s | %s" % ("%s %s c=%s" % (op, size, c), cell(one),
                                   cell(two), ratio))
try:
    log = open(os.path.join(out, "server_two.log")).read()
    m = re.findall(r"engine counters: (.*)", log)
    if m:
        kv = dict(x.split("=") for x in m[-1].split())
        split = ["%s=%s" % (k, v) for k, v in sorted(kv.items())
                 if k.endswith(".requests") or k in ("routed", "retried",
                                                     "engines_lost")]
        print("two-GPU split:", " ".join(split))
except OSError:
    pass
PY
