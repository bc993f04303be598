#!/usr/bin/env bash
# bench/cpu_per_request.sh: server CPU time per answered request, read from
# /proc/PID/stat (user + system ticks) around a dmls_load window. On a shared
# or small machine, where the load generator rather than the server limits
# throughput, this is the figure that compares servers: it does not depend
# on how fast the load could be offered.
#
# Usage: bash bench/cpu_per_request.sh [--rounds=3] [--bytes=1KiB]
#          [--concurrency=64] [--duration=8s] [--server_cpus=0]
#          [--load_cpus=1] [--allocs] [--threads] [--instructions]
#          LABEL=COMMAND...
#   each COMMAND is a server started with --port=0 appended (it must print
#   "... listening on HOST:PORT" on stdout, as dmlserve and echo_server do).
# Example (the record in docs/perf/serving-cpu-2026-11-28/):
#   bash bench/cpu_per_request.sh "echo=build/bench/echo/echo_server" \
#     "dmlserve=build/server/dmlserve --device=cpu --log_level=warn"
# Prints one line per server and round: LABEL REQUESTS us_per_request, and
# with --allocs allocations_per_request (the server runs under
# build/bench/malloc_count/libdmls_malloc_count.so, which counts malloc,
# calloc, realloc and the aligned allocators; it costs a little CPU, so
# compare CPU figures of runs without it). With --threads, each round also
# prints the split by thread name (our threads are named, engine/core/
# thread_name.h; gRPC's and vkd3d's by them): LABEL thread=NAME xCOUNT
# us_per_request voluntary_switches_per_request involuntary_per_request.
# With --instructions, the server runs under valgrind's callgrind (Debian
# package valgrind), counting only the measured window, and each line gains
# the user-space instructions per request: a count that does not depend on
# the machine's load or clock, so it compares builds on a small or shared
# machine where CPU time is too noisy (it sees neither the kernel nor cache
# misses; under callgrind a server runs one thread at a time and about fifty
# times slower, so its CPU time is then meaningless and the window should
# be longer: --duration=10s --concurrency=16).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
load=${DMLS_LOAD:-$repo/build/bench/load/dmls_load}
rounds=3 bytes=1KiB concurrency=64 duration=8s server_cpus=0 load_cpus=1 allocs=0 threads=0
instructions=0
counter=${DMLS_MALLOC_COUNT:-$repo/build/bench/malloc_count/libdmls_malloc_count.so}
servers=()
for arg in "$@"; do
  case $arg in
    --rounds=*) rounds=${arg#*=} ;;
    --bytes=*) bytes=${arg#*=} ;;
    --concurrency=*) concurrency=${arg#*=} ;;
    --duration=*) duration=${arg#*=} ;;
    --server_cpus=*) server_cpus=${arg#*=} ;;
    --load_cpus=*) load_cpus=${arg#*=} ;;
    --allocs) allocs=1 ;;
    --threads) threads=1 ;;
    --instructions) instructions=1 ;;
    *=*) servers+=("$arg") ;;
    *) echo "usage: see the head of $0" >&2; exit 2 ;;
  esac
done
(( ${#servers[@]} > 0 )) || { echo "no LABEL=COMMAND given" >&2; exit 2; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
count() { if (( allocs )); then awk '{print $1}' "$work/count"; else echo 0; fi; }
# One line per thread of $1: tid name cpu_ticks voluntary involuntary.
task_snap() {
  local t
  for t in /proc/"$1"/task/*; do
    printf '%s %s %s %s\n' "${t##*/}" "$(tr ' ' _ < "$t/comm")" \
      "$(awk '{print $14 + $15}' "$t/stat")" \
      "$(awk '/^voluntary_ctxt/ {v=$2} /^nonvoluntary_ctxt/ {n=$2} END {print v, n}' "$t/status")"
  done 2>/dev/null | sort
}
measure() {
  local label=$1 cmd=$2 pid target n t0 t1 a0 a1
  local -a env=() under=()
  if (( instructions )); then
    command -v callgrind_control >/dev/null || { echo "no valgrind" >&2; exit 1; }
    under=(valgrind --tool=callgrind --instr-atstart=no "--callgrind-out-file=$work/cg")
    rm -f "$work"/cg*
  fi
  if (( allocs )); then
    [[ -f $counter ]] || { echo "no $counter (build dmls_malloc_count)" >&2; exit 1; }
    env=("DMLS_MALLOC_COUNT_FILE=$work/count" "LD_PRELOAD=$counter")
  fi
  # shellcheck disable=SC2086
  env "${env[@]}" taskset -c "$server_cpus" "${under[@]}" $cmd --port=0 >"$work/out" 2>"$work/log" &
  pid=$!
  for _ in $(seq $(( instructions ? 1800 : 300 ))); do grep -q ' listening on ' "$work/out" && break; sleep 0.1; done
  target=$(sed -n 's/.* listening on //p' "$work/out" | head -1)
  [[ -n $target ]] || { echo "$label: no listening line" >&2; kill "$pid"; exit 1; }
  # Warm-up window (connections, first compiles), not counted.
  taskset -c "$load_cpus" "$load" --target="$target" --concurrency="$concurrency" \
    --bytes="$bytes" --duration=2s --warmup=0s >/dev/null 2>&1
  sleep 0.1  # the counter's file is rewritten every 50 ms
  (( instructions )) && callgrind_control -i on "$pid" >/dev/null 2>&1
  t0=$(ticks "$pid") a0=$(count)
  (( threads )) && task_snap "$pid" > "$work/tasks0"
  n=$(taskset -c "$load_cpus" "$load" --target="$target" --concurrency="$concurrency" \
    --bytes="$bytes" --duration="$duration" --warmup=0s 2>&1 | awk '/^requests/{print $2}')
  t1=$(ticks "$pid")
  (( threads )) && task_snap "$pid" > "$work/tasks1"
  local ir=0
  if (( instructions )); then
    callgrind_control -i off "$pid" >/dev/null 2>&1
    callgrind_control -d "$pid" >/dev/null 2>&1  # $work/cg.1: the window alone
    ir=$(callgrind_annotate "$work/cg.1" 2>/dev/null |
      awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
  fi
  sleep 0.1
  a1=$(count)
  kill "$pid"; wait "$pid" 2>/dev/null || true
  awk -v l="$label" -v n="$n" -v d=$(( t1 - t0 )) -v hz="$hz" -v a=$(( a1 - a0 )) \
    -v allocs="$allocs" -v ir="$ir" -v instructions="$instructions" 'BEGIN {
      printf "%s %d %.2f", l, n, (n > 0 ? d * 1e6 / hz / n : -1)
      if (allocs) printf " %.1f", (n > 0 ? a / n : -1)
      if (instructions) printf " %.0f", (n > 0 ? ir / n : -1)
      printf "\n" }'
  if (( threads )); then
    # Threads alive at both ends, by name.
    join "$work/tasks0" "$work/tasks1" | awk -v l="$label" -v n="$n" -v hz="$hz" '
      { k = $2; c[k]++; t[k] += $7 - $3; v[k] += $8 - $4; i[k] += $9 - $5 }
      END { for (k in c) if (n > 0 && t[k] + v[k] + i[k] > 0)
              printf "%s thread=%s x%d %.2f %.3f %.3f\n", l, k, c[k],
                     t[k] * 1e6 / hz / n, v[k] / n, i[k] / n }' | sort -k2
  fi
}
for (( r = 1; r <= rounds; r++ )); do
  for s in "${servers[@]}"; do measure "${s%%=*}" "${s#*=}"; done
done
