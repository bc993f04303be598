#!/usr/bin/env bash
# Configures and builds dmlserve into ${DMLSERVE_BUILD_DIR:-build} with -j2
# (the project's machines have 2 cores). Assumes setup-debian.sh has run.
# DMLSERVE_BUILD_TARGETS (space-separated CMake targets) builds only those.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${DMLSERVE_BUILD_DIR:-build}
# The compile database is what deploy/check-thread-safety.sh (ctest
# thread_safety) reads.
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=${DMLSERVE_BUILD_TYPE:-RelWithDebInfo} \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON "$@"
targets=()
for t in ${DMLSERVE_BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build_dir" -j"${DMLSERVE_JOBS:-2}" "${targets[@]}"
