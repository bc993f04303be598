#!/usr/bin/env bash
# bench/cpu_per_request.sh: server CPU time per answered request, read from
# /proc/PID/stat (user + system ticks) around a dmls_load window. On a shared
# or small machine, where the load generator rather than the server limits
# throughput, this is the figure that compares servers: it does not depend
# on how fast the load could be offered.
#
# Usage: bash bench/cpu_per_request.sh [--rounds=3] [--bytes=1KiB]
#          [--concurrency=64] [--duration=8s] [--server_cpus=0]
#          [--load_cpus=1] LABEL=COMMAND...
#   each COMMAND is a server started with --port=0 appended (it must print
#   "... listening on HOST:PORT" on stdout, as dmlserve and echo_server do).
# Example (the record in docs/perf/serving-cpu-2026-11-28/):
#   bash bench/cpu_per_request.sh "echo=build/bench/echo/echo_server" \
#     "dmlserve=build/server/dmlserve --device=cpu --log_level=warn"
# Prints one line per server and round: LABEL REQUESTS us_per_request.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
load=${DMLS_LOAD:-$repo/build/bench/load/dmls_load}
rounds=3 bytes=1KiB concurrency=64 duration=8s server_cpus=0 load_cpus=1
servers=()
for arg in "$@"; do
  case $arg in
    --rounds=*) rounds=${arg#*=} ;;
    --bytes=*) bytes=${arg#*=} ;;
    --concurrency=*) concurrency=${arg#*=} ;;
    --duration=*) duration=${arg#*=} ;;
    --server_cpus=*) server_cpus=${arg#*=} ;;
    --load_cpus=*) load_cpus=${arg#*=} ;;
    *=*) servers+=("$arg") ;;
    *) echo "usage: see the head of $0" >&2; exit 2 ;;
  esac
done
(( ${#servers[@]} > 0 )) || { echo "no LABEL=COMMAND given" >&2; exit 2; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
measure() {
  local label=$1 cmd=$2 pid target n t0 t1
  # shellcheck disable=SC2086
  taskset -c "$server_cpus" $cmd --port=0 >"$work/out" 2>"$work/log" &
  pid=$!
  for _ in $(seq 300); do grep -q ' listening on ' "$work/out" && break; sleep 0.1; done
  target=$(sed -n 's/.* listening on //p' "$work/out" | head -1)
  [[ -n $target ]] || { echo "$label: no listening line" >&2; kill "$pid"; exit 1; }
  # Warm-up window (connections, first compiles), not counted.
  taskset -c "$load_cpus" "$load" --target="$target" --concurrency="$concurrency" \
    --bytes="$bytes" --duration=2s --warmup=0s >/dev/null 2>&1
  t0=$(ticks "$pid")
  n=$(taskset -c "$load_cpus" "$load" --target="$target" --concurrency="$concurrency" \
    --bytes="$bytes" --duration="$duration" --warmup=0s 2>&1 | awk '/^requests/{print $2}')
  t1=$(ticks "$pid")
  kill "$pid"; wait "$pid" 2>/dev/null || true
  awk -v l="$label" -v n="$n" -v d=$(( t1 - t0 )) -v hz="$hz" \
    'BEGIN { printf "%s %d %.2f\n", l, n, (n > 0 ? d * 1e6 / hz / n : -1) }'
}
for (( r = 1; r <= rounds; r++ )); do
  for s in "${servers[@]}"; do measure "${s%%=*}" "${s#*=}"; done
done
