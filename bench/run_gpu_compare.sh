#!/usr/bin/env bash
# Before/after comparison of two builds on the GPU machine (../shared/GPU.md),
# in one visit, alternating the builds so that drift of the machine shows:
#   a. the engine alone (dmls_bench --device=gpu --ops=celu): small CELU
#      requests through GpuEngine, batching on and off (the flags of
#      run_gpu_serving.sh step 1), kernels at 1M elements only;
#   b. serving (bench/serving.sh): dmlserve --device=gpu against echo_server,
#      server on cores 0-7, load on 8-15, dmls_load at 1KiB:256 64KiB:64
#      4MiB:8 64MiB:4, 6 s per point after 1 s of warm-up, in the order
#      before, after, before, after;
#   c. the resident chain (dmls_resident_bench --mode=chain, as in
#      run_resident_gpu.sh step 1: CELU, MVN1, THRESHOLD on a resident
#      64 MiB tensor against three inline round trips), before, after,
#      before, after, each with a fresh server.
# Then a short summary table (summary.md). About 7 minutes in all: a ~10 s
# setup, a ~55 s, b ~4 x 70 s, c ~4 x 17 s.
#
# Expects .gpu/root and .gpu/lib (GPU.md step 1) and the two builds staged
# like build directories (server/dmlserve, bench/dmls_bench,
# bench/load/dmls_load, bench/echo/echo_server,
# bench/resident/dmls_resident_bench), e.g. by bench/stage_gpu.sh, which copies them
# stripped. Environment: BEFORE (.gpu/before), AFTER (.gpu/after),
# OUT (/tmp/out), SERVER_CPUS (0-7), LOAD_CPUS (8-15), POINTS, DURATION (6s),
# WARMUP (1s), RES_ITERS (10). Every step runs even when another failed.
# Files under $OUT: machine.log, engine.log, serving.log, resident.log,
# summary.md and raw.tgz (each serving.sh output folder, the servers' logs).
# Usage, on the GPU machine, from the repository root:
#   bash bench/run_gpu_compare.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}
BEFORE=${BEFORE:-.gpu/before}
AFTER=${AFTER:-.gpu/after}
SERVER_CPUS=${SERVER_CPUS:-0-7}
LOAD_CPUS=${LOAD_CPUS:-8-15}
POINTS=${POINTS:-"1KiB:256 64KiB:64 4MiB:8 64MiB:4"}
DURATION=${DURATION:-6s}
WARMUP=${WARMUP:-1s}
RES_ITERS=${RES_ITERS:-10}
mkdir -p "$OUT"
raw=$OUT/raw
rm -rf "$raw"; mkdir -p "$raw"
source bench/gpu_env.sh  # GPU.md step 2; sets $rt
export LD_LIBRARY_PATH=$rt
M=$((1 << 20))
G=$((1 << 30))
labels=(before after)
declare -A dir=([before]=$BEFORE [after]=$AFTER)
all_cpus=0-$(( $(nproc) - 1 ))
start=$(date +%s)
stamp() { echo "[$(date +%T), +$(( $(date +%s) - start )) s] $*"; }

# --- the machine and the two builds -----------------------------------------
{
  date -u +%Y-%m-%dT%H:%M:%SZ
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  echo "nproc: $(nproc)"; lscpu | grep -E 'Model name|^CPU\(s\)|NUMA node\(s\)'
  for l in "${labels[@]}"; do
    d=${dir[$l]}
    echo "--- $l: $d"
    cat "$d/STAGED_FROM" 2>/dev/null
    for f in server/dmlserve bench/dmls_bench bench/load/dmls_load bench/echo/echo_server \
             bench/resident/dmls_resident_bench; do
      [[ -x $d/$f ]] || echo "MISSING: $d/$f"
    done
  done
  timeout 60 "${dir[after]}/bench/dmls_bench" --list_adapters
} 2>&1 | tee "$OUT/machine.log"

# --- a. the engine alone ------------------------------------------------------
: > "$OUT/engine.log"
for l in "${labels[@]}"; do
  stamp "a. engine alone: $l" | tee -a "$OUT/engine.log"
  timeout -k 10 150 taskset -c "$all_cpus" "${dir[$l]}/bench/dmls_bench" --device=gpu \
    --ops=celu --sizes=1M --no_dispatch_cost --engine_requests=400000 \
    --engine_elements=256 --engine_in_flight=2048 --engine_threads=8 \
    --engine_max_batch=256,1 > "$raw/engine_$l.log" 2>&1
  echo "exit $?" >> "$raw/engine_$l.log"
  grep -vE '^fixme:' "$raw/engine_$l.log" | tee -a "$OUT/engine.log" | grep -E '^engine:|kernel|exit'
done

# --- b. serving, alternating ------------------------------------------------
: > "$OUT/serving.log"
for round in 1 2; do
  for l in "${labels[@]}"; do
    run=serving_${l}_$round
    stamp "b. serving: $l, round $round" | tee -a "$OUT/serving.log"
    timeout -k 20 240 bash bench/serving.sh --build="${dir[$l]}" --device=gpu \
      --duration="$DURATION" --warmup="$WARMUP" \
      --server_cpus="$SERVER_CPUS" --load_cpus="$LOAD_CPUS" --points="$POINTS" \
      --server_args="--log_level=info --drain_seconds=0 --adapters=0" \
      --out="$raw/$run" > "$raw/$run.log" 2>&1
    rc=$?
    {
      echo "serving.sh exit $rc"
      cat "$raw/$run/table.md" 2>/dev/null || tail -5 "$raw/$run.log"
      grep -ho "engine counters: .*" "$raw/$run/dmlserve.log" 2>/dev/null | tail -1 | cut -c1-600
    } 2>&1 | tee -a "$OUT/serving.log"
  done
done

# --- c. the resident chain, alternating -------------------------------------
# resident LABEL ROUND: a fresh server of that build on the server cores,
# the chain bench on the load cores, then the server stopped.
resident() {
  local l=$1 round=$2 d=${dir[$1]} base=$raw/resident_$1_$2 target="" srv
  taskset -c "$SERVER_CPUS" "$d/server/dmlserve" --device=gpu --adapters=0 --port=0 \
    --drain_seconds=0 --log_level=info \
    --max_message_bytes=$((128 * M)) --max_tensor_bytes=$((4 * G)) \
    --resident_bytes_per_principal=$((16 * G)) --resident_bytes_total=$((32 * G)) \
    > "$base.stdout" 2> "$base.server.log" &
  srv=$!
  for _ in $(seq 300); do
    target=$(sed -n 's/.* listening on //p' "$base.stdout" 2>/dev/null | head -1)
    [[ -n $target ]] && break
    kill -0 "$srv" 2>/dev/null || break
    sleep 0.2
  done
  if [[ -z $target ]]; then
    echo "server did not start: $(tail -3 "$base.server.log")"
  else
    timeout -k 10 120 taskset -c "$LOAD_CPUS" "$d/bench/resident/dmls_resident_bench" \
      --target="$target" --mode=chain --bytes=$((64 * M)) --chunk_bytes=$((16 * M)) \
      --iters="$RES_ITERS"
    echo "dmls_resident_bench exit $?"
  fi
  kill -TERM "$srv" 2>/dev/null
  for _ in $(seq 100); do kill -0 "$srv" 2>/dev/null || break; sleep 0.2; done
  kill -KILL "$srv" 2>/dev/null
  wait "$srv" 2>/dev/null
  echo "dmlserve exit $?"
  grep -ho "engine counters: .*" "$base.server.log" | tail -1 | cut -c1-600
}
: > "$OUT/resident.log"
for round in 1 2; do
  for l in "${labels[@]}"; do
    stamp "c. resident chain: $l, round $round" | tee -a "$OUT/resident.log"
    resident "$l" "$round" 2>&1 | tee "$raw/resident_${l}_$round.log" >> "$OUT/resident.log"
    grep -E 'median|ratio|identical|exit' "$raw/resident_${l}_$round.log"
  done
done

# --- summary --------------------------------------------------------------------
stamp "summary"
python3 - "$raw" "$POINTS" > "$OUT/summary.md" 2>&1 <<'PY'
import json, os, re, sys

raw, points = sys.argv[1], sys.argv[2].split()
labels = ["before", "after"]
runs = ["%s_%d" % (l, r) for r in (1, 2) for l in labels]  # the order they ran in


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def ratio(a, b):
    return "%.2f" % (b / a) if a and b else "-"


def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def table(rows):
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    for n, r in enumerate(rows):
        print("| " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths)) + " |")
        if n == 0:
            print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    print()


# a. engine alone
print("## a. engine alone (dmls_bench, 400,000 CELU requests of 256 elements, 8 threads)\n")
eng = {}
for l in labels:
    text = read(os.path.join(raw, "engine_%s.log" % l))
    e = {}
    for m in re.finditer(r"engine: max_batch=(\d+):.*?: ([\d.]+) requests/s, ([\d.]+) us per "
                         r"request, ([\d.]+) requests per command list.*?(\d+) resources and "
                         r"(\d+) views created while measuring, (\d+) failed", text):
        e[m.group(1)] = dict(rps=float(m.group(2)), per_list=float(m.group(4)),
                             res=m.group(5), views=m.group(6), failed=m.group(7))
    k = re.search(r"celu\s+\d+\s+kernel\s+([\d.]+) GB/s\s+copy\s+([\d.]+) GB/s", text)
    e["kernel"] = float(k.group(1)) if k else None
    eng[l] = e
rows = [("", "before", "after", "after/before")]
def erow(name, key, field, fmt):
    vals = [eng[l].get(key, {}).get(field) for l in labels]
    rows.append((name,) + tuple(fmt % v if v is not None else "-" for v in vals)
                + (ratio(*vals) if None not in vals else "-",))
erow("batching on (256): requests/s", "256", "rps", "%.0f")
erow("  requests per command list", "256", "per_list", "%.1f")
erow("batching off (1): requests/s", "1", "rps", "%.0f")
rows.append(("resources / views created (on)",)
            + tuple("%s / %s" % (eng[l]["256"]["res"], eng[l]["256"]["views"])
                    if "256" in eng[l] else "-" for l in labels) + ("",))
rows.append(("failed (on, off)",)
            + tuple("%s, %s" % (eng[l].get("256", {}).get("failed", "-"),
                                eng[l].get("1", {}).get("failed", "-")) for l in labels) + ("",))
kv = [eng[l]["kernel"] for l in labels]
rows.append(("CELU 1M kernel GB/s",) + tuple("%.0f" % v if v else "-" for v in kv)
            + (ratio(*kv) if None not in kv else "-",))
table(rows)

# b. serving
print("## b. serving (dmls_load ok/s, p99 ms; dmlserve/echo of the same run)\n")
def load(run, point, label):
    b, c = point.split(":")
    path = os.path.join(raw, "serving_" + run, "%s_c%s_%s.json" % (b, c, label))
    try:
        with open(path) as f:
            r = json.load(f)
        return r["ok_per_s"], r["latency_ms"]["p99"], r["errors"]
    except (OSError, ValueError, KeyError):
        return None
rows = [("point", "") + tuple(r.replace("_", " r") for r in runs) + ("after/before (mean)",)]
for p in points:
    dml = {r: load(r, p, "dmlserve-gpu") for r in runs}
    echo = {r: load(r, p, "echo") for r in runs}
    def cell(x):
        if not x:
            return "-"
        return "%s (%.1f ms)%s" % ("%.0f" % x[0] if x[0] >= 100 else "%.1f" % x[0], x[1],
                                   " %d err" % x[2] if x[2] else "")
    def mean_of(d, l):
        return mean([d[r][0] for r in runs if r.startswith(l) and d[r]])
    rows.append((p.replace(":", " c="), "dmlserve") + tuple(cell(dml[r]) for r in runs)
                + (ratio(mean_of(dml, "before"), mean_of(dml, "after")),))
    rows.append(("", "echo") + tuple(cell(echo[r]) for r in runs)
                + (ratio(mean_of(echo, "before"), mean_of(echo, "after")),))
    shares = {r: dml[r][0] / echo[r][0] if dml[r] and echo[r] and echo[r][0] else None
              for r in runs}
    rows.append(("", "dmlserve/echo")
                + tuple("%.2f" % shares[r] if shares[r] is not None else "-" for r in runs)
                + (ratio(mean([shares[r] for r in runs if r.startswith("before")]),
                         mean([shares[r] for r in runs if r.startswith("after")])),))
table(rows)

# c. resident chain
print("## c. resident chain (dmls_resident_bench --mode=chain, 64 MiB, median ms)\n")
rows = [("", ) + tuple(r.replace("_", " r") for r in runs) + ("after/before (mean)",)]
res = {}
for r in runs:
    text = read(os.path.join(raw, "resident_%s.log" % r))
    d = {}
    for name, key in (("chain, result resident", "chain"), ("chain + ReadTensor", "read"),
                      ("3 inline round trips", "inline")):
        m = re.search(re.escape(name) + r"\s+median\s+([\d.]+) ms", text)
        d[key] = float(m.group(1)) if m else None
    m = re.search(r"results identical: (\S+)", text)
    d["same"] = m.group(1) if m else "-"
    c = re.search(r"chain_record_us=(\d+)", text), re.search(r"chain_steps=(\d+)", text)
    d["rec"] = (int(c[0].group(1)) / int(c[1].group(1))
                if c[0] and c[1] and int(c[1].group(1)) else None)
    res[r] = d
for name, key, fmt in (("chain, result resident", "chain", "%.3f"),
                       ("chain + ReadTensor", "read", "%.1f"),
                       ("3 inline round trips", "inline", "%.1f"),
                       ("recording us/step (server)", "rec", "%.1f")):
    vals = [res[r][key] for r in runs]
    rows.append((name,) + tuple(fmt % v if v is not None else "-" for v in vals)
                + (ratio(mean([res[r][key] for r in runs if r.startswith("before")]),
                         mean([res[r][key] for r in runs if r.startswith("after")])),))
rows.append(("results identical",) + tuple(res[r]["same"] for r in runs) + ("",))
table(rows)
print("after/before: above 1 means more for the after build (for times: slower).")
PY
cat "$OUT/summary.md"

# Everything raw in one file (the device tool returns few files).
tar czf "$OUT/raw.tgz" -C "$OUT" raw && rm -rf "$raw"
stamp "done"
