#!/usr/bin/env bash
# bench/serving.sh: the serving benchmark. Starts two anchors, echo_server
# (the same gRPC service and server settings as dmlserve, no engine) and
# sync_echo_server (independent: gRPC's synchronous API written as gRPC's
# examples are, nothing shared with ours), then dmlserve (and with
# --baseline an older dmlserve binary), each pinned to the server cores, and
# runs the same load points against all of them, back to back, with
# dmls_load (or ghz) pinned to the other cores. For every point and server
# it prints requests/s with p99 latency, the server's CPU time per answered
# request (user + system, from /proc/PID/stat around the run), and two
# ratios to echo_server: of requests/s, and per core (echo's CPU per request
# / this server's; what an operator pays per replica core, and the figure
# that holds when the load tool rather than the server is the limit). It
# keeps every raw report (JSON), the load tool's output, the server logs,
# the table and the machine's details in the output directory.
#
# Usage (from anywhere; paths are the repository's):
#   bash bench/serving.sh [--build=DIR] [--device=cpu|software|gpu|auto]
#        [--points="1KiB:64 1KiB:256 64KiB:64 4MiB:8 4MiB:32 64MiB:4"]
#        [--duration=8s] [--warmup=1s] [--server_cpus=0-7] [--load_cpus=8-15]
#        [--rpc=unary|stream] [--op=celu] [--load_args="--connections=2"]
#        [--server_args="--worker_threads=4"] [--out=DIR]
#        [--ghz[=proto|reflection]] [--baseline=PATH_TO_OLDER_DMLSERVE]
#
# Each point is BYTES:CONCURRENCY (the request's input tensor and the
# calls outstanding). Environment defaults: DMLSERVE_BUILD_DIR, DEVICE,
# POINTS, DURATION, WARMUP, SERVER_CPUS, LOAD_CPUS, OUT_DIR. The default
# core split gives the server the first half of the cores and the load the
# second half (16 cores: 0-7 and 8-15; 2 cores: 0 and 1). The issue's
# two-core configuration (what one replica pays) is --server_cpus=0-1
# --load_cpus=2-15.
#
# --ghz runs the points with ghz (if on PATH) instead of dmls_load, through
# the .proto file (--ghz, --ghz=proto) or server reflection
# (--ghz=reflection); its data files are generated into the output
# directory by bench/ghz/make_data.py. ghz has no time-based warm-up.
#
# Exit status: 0 when every point of both servers had successful requests;
# 1 otherwise (the table still prints what ran); 2 for bad usage or a server
# that did not start.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${DMLSERVE_BUILD_DIR:-$repo/build}
device=${DEVICE:-cpu}
points=${POINTS:-"1KiB:64 1KiB:256 64KiB:64 4MiB:8 4MiB:32 64MiB:4"}
duration=${DURATION:-8s}
warmup=${WARMUP:-1s}
server_cpus=${SERVER_CPUS:-}
load_cpus=${LOAD_CPUS:-}
out=${OUT_DIR:-}
rpc=unary
op=celu
load_args=""
server_args=""
ghz=""
baseline=""

die() { echo "serving.sh: $*" >&2; exit 2; }
usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; }

for arg in "$@"; do
  case $arg in
    --build=*) build=${arg#*=} ;;
    --device=*) device=${arg#*=} ;;
    --points=*) points=${arg#*=} ;;
    --duration=*) duration=${arg#*=} ;;
    --warmup=*) warmup=${arg#*=} ;;
    --server_cpus=*) server_cpus=${arg#*=} ;;
    --load_cpus=*) load_cpus=${arg#*=} ;;
    --out=*) out=${arg#*=} ;;
    --rpc=*) rpc=${arg#*=} ;;
    --op=*) op=${arg#*=} ;;
    --load_args=*) load_args=${arg#*=} ;;
    --server_args=*) server_args=${arg#*=} ;;
    --ghz) ghz=proto ;;
    --ghz=proto|--ghz=reflection) ghz=${arg#*=} ;;
    --baseline=*) baseline=${arg#*=} ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument '$arg' (--help lists them)" ;;
  esac
done

# --- what to run, where ------------------------------------------------------
build=$(cd "$build" 2>/dev/null && pwd) || die "no build directory '$build'"
echo_bin=$build/bench/echo/echo_server
sync_echo_bin=$build/bench/echo/sync_echo_server
dmlserve_bin=$build/server/dmlserve
load_bin=$build/bench/load/dmls_load
for b in "$echo_bin" "$sync_echo_bin" "$dmlserve_bin" "$load_bin"; do
  [[ -x $b ]] || die "missing $b (cmake --build $build --target echo_server sync_echo_server dmlserve dmls_load)"
done
[[ -z $baseline || -x $baseline ]] || die "--baseline: no executable '$baseline'"
command -v taskset >/dev/null || die "needs taskset (Debian util-linux)"
python=/usr/bin/python3
[[ -x $python ]] || python=$(command -v python3) || die "needs python3"
if [[ -n $ghz ]]; then
  command -v ghz >/dev/null || die "--ghz: ghz is not on PATH"
  [[ $rpc == unary ]] || die "--ghz measures unary Execute only"
fi
[[ $rpc == unary || $rpc == stream ]] || die "--rpc must be unary or stream"

cores=$(nproc)
if [[ -z $server_cpus || -z $load_cpus ]]; then
  (( cores >= 2 )) || die "needs at least 2 cores (or --server_cpus and --load_cpus)"
  half=$(( cores / 2 ))
  span() { (( $1 == $2 )) && echo "$1" || echo "$1-$2"; }
  server_cpus=${server_cpus:-$(span 0 $(( half - 1 )))}
  load_cpus=${load_cpus:-$(span "$half" $(( cores - 1 )))}
fi
# Count the cores of a taskset list ("0-7,9") for ghz --cpus.
count_cpus() {
  local n=0 part
  for part in ${1//,/ }; do
    if [[ $part == *-* ]]; then n=$(( n + ${part#*-} - ${part%-*} + 1 )); else n=$(( n + 1 )); fi
  done
  echo "$n"
}

read -ra point_list <<<"$points"
(( ${#point_list[@]} > 0 )) || die "no --points"
for p in "${point_list[@]}"; do
  [[ $p =~ ^[0-9]+[A-Za-z]*:[0-9]+$ ]] || die "bad point '$p' (want BYTES:CONCURRENCY, e.g. 64KiB:64)"
done

out=${out:-$repo/build/serving-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
out=$(cd "$out" && pwd)
echo "serving.sh: output in $out"

# --- servers -------------------------------------------------------------------
pids=()
load_pid=""
cleanup() {
  local pid
  [[ -n $load_pid ]] && kill -TERM "$load_pid" 2>/dev/null
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  pids=()
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start_server NAME COMMAND...: starts it on the server cores, waits for its
# "<program> listening on HOST:PORT" line and sets ready_target=HOST:PORT.
start_server() {
  local name=$1; shift
  local stdout=$out/$name.stdout log=$out/$name.log
  taskset -c "$server_cpus" "$@" >"$stdout" 2>"$log" &
  local pid=$!
  pids+=("$pid")
  for _ in $(seq 300); do   # 60 s: lavapipe compiles kernels at start
    if grep -q ' listening on ' "$stdout"; then
      ready_target=$(sed -n 's/.* listening on //p' "$stdout" | head -1)
      echo "serving.sh: $name ready on $ready_target (pid $pid, cores $server_cpus)"
      return
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "serving.sh: $name exited before it was ready; its log:" >&2
      tail -20 "$log" >&2
      exit 2
    fi
    sleep 0.2
  done
  die "$name printed no readiness line within 60 s (log: $log)"
}

dml_label=dmlserve-$device
# labels[i] is served at targets[i] by pids[i]; the anchors first.
labels=() targets=()
start_server echo "$echo_bin" --port=0
labels+=(echo) targets+=("$ready_target")
start_server sync_echo "$sync_echo_bin" --port=0
labels+=(sync_echo) targets+=("$ready_target")
if [[ -n $baseline ]]; then
  # shellcheck disable=SC2086  # server_args is a list of flags
  start_server baseline "$baseline" --port=0 --device="$device" --log_level=warn $server_args
  labels+=("$dml_label-baseline") targets+=("$ready_target")
fi
# shellcheck disable=SC2086  # server_args is a list of flags
start_server dmlserve "$dmlserve_bin" --port=0 --device="$device" --log_level=warn $server_args
labels+=("$dml_label") targets+=("$ready_target")

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "git: $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$repo" diff --quiet 2>/dev/null || echo ' (dirty)')"
  echo "host: $(uname -srm), $cores cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
  echo "memory: $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
  echo "server cores: $server_cpus, load cores: $load_cpus"
  echo "dmlserve: --device=$device $server_args"
  [[ -n $baseline ]] && echo "baseline: $baseline"
  echo "load: ${ghz:+ghz ($ghz) }rpc=$rpc op=$op duration=$duration warmup=$warmup $load_args"
  echo "points: $points"
  echo "command: bash bench/serving.sh $*"
} >"$out/meta.txt"

# --- load ----------------------------------------------------------------------
# ghz's call data (large for large payloads) lives in a temporary folder.
ghz_dir=""
if [[ -n $ghz ]]; then
  ghz_dir=$(mktemp -d /tmp/serving-ghz.XXXXXX)
  trap 'cleanup; rm -rf "$ghz_dir"' EXIT
fi
ghz_data() {  # BYTES -> path of the ghz data file (generated once)
  local file=$ghz_dir/${op}_float32_$1.json
  if [[ ! -f $file ]]; then
    "$python" "$repo/bench/ghz/make_data.py" --op="$op" --bytes="$1" --out="$file" >&2
  fi
  echo "$file"
}
# ghz's JSON lists every request and repeats the call data; keep the rest.
ghz_summary() {
  "$python" - "$1" <<'PY'
import json, sys
with open(sys.argv[1]) as f:
    report = json.load(f)
report.pop("details", None)
report.get("options", {}).pop("data", None)
with open(sys.argv[1], "w") as f:
    json.dump(report, f, indent=1)
PY
}

# The server's user + system CPU ticks so far (all its threads).
server_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# run_point LABEL TARGET PID BYTES CONCURRENCY: one measurement; its JSON
# goes to $out/<bytes>_c<concurrency>_<label>.json, the server's CPU ticks
# over the measured window and the clock rate to .cpu (dmls_load's warm-up
# runs first as a call of its own, so that the ticks and the answered calls
# cover the same window). Returns the tool's status.
run_point() {
  local label=$1 target=$2 pid=$3 bytes=$4 conc=$5
  local base=$out/${bytes}_c${conc}_$label
  local ticks0
  if [[ -z $ghz && $warmup != 0 && $warmup != 0s ]]; then
    # shellcheck disable=SC2086  # load_args is a list of flags
    taskset -c "$load_cpus" "$load_bin" --target="$target" --rpc="$rpc" \
      --op="$op" --bytes="$bytes" --concurrency="$conc" --duration="$warmup" \
      --warmup=0s $load_args >"$base.warmup.txt" 2>&1 || true
  fi
  ticks0=$(server_ticks "$pid")
  echo "$(date +%T) $bytes c=$conc -> $label (load average $(cut -d' ' -f1-3 /proc/loadavg))" \
    | tee -a "$out/progress.log"
  # In the background and waited for, so that a signal ends the run at once
  # (bash runs traps only between commands) and cleanup can stop the tool.
  if [[ -n $ghz ]]; then
    local data
    data=$(ghz_data "$bytes")
    (cd "$repo" && exec taskset -c "$load_cpus" ghz \
        --config="$repo/bench/ghz/execute.$ghz.json" --data-file="$data" \
        --concurrency="$conc" --duration="$duration" \
        --cpus="$(count_cpus "$load_cpus")" --format=json \
        --output="$base.ghz.json" "$target") >"$base.txt" 2>&1 &
  else
    # shellcheck disable=SC2086  # load_args is a list of flags
    taskset -c "$load_cpus" "$load_bin" --target="$target" --rpc="$rpc" \
      --op="$op" --bytes="$bytes" --concurrency="$conc" --duration="$duration" \
      --warmup=0s --check --json="$base.json" $load_args >"$base.txt" 2>&1 &
  fi
  load_pid=$!
  local status=0
  wait "$load_pid" || status=$?
  load_pid=""
  echo "$(( $(server_ticks "$pid") - ticks0 )) $(getconf CLK_TCK)" >"$base.cpu"
  if [[ -n $ghz && $status == 0 ]]; then ghz_summary "$base.ghz.json"; fi
  return "$status"
}

failed=0
for p in "${point_list[@]}"; do
  bytes=${p%%:*} conc=${p##*:}
  # The anchors and dmlserve back to back, so all see the same machine.
  for i in "${!labels[@]}"; do
    run_point "${labels[i]}" "${targets[i]}" "${pids[i]}" "$bytes" "$conc" ||
      { failed=1; tail -3 "$out/${bytes}_c${conc}_${labels[i]}.txt"; }
  done
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/meta.txt"

cleanup
for name in echo sync_echo dmlserve ${baseline:+baseline}; do
  if grep -qiE 'error|fatal|abort' "$out/$name.log"; then
    echo "serving.sh: $name logged errors (see $out/$name.log)" >&2
  fi
done

"$python" "$repo/bench/serving_table.py" "$out" "${labels[*]}" "${point_list[@]}" | tee "$out/table.md"
exit "$failed"
