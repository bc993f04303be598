#!/usr/bin/env bash
# The Windows part of the test suite (deploy/test.sh runs it after ctest):
# Microsoft's DirectML.dll under Debian's Wine on Mesa 25's lavapipe,
# against our CPU engine, element by element.
#
#   1. the dependency prefix the engine-level Windows build needs
#      (build-deps.sh protobuf: Debian's abseil, googletest, fmt, spdlog,
#      zlib and protobuf sources, cross-built once into ~/.cache/dmlserve-win);
#   2. the cross build of directml_engine_test and directml_diff only
#      (engine/directml on the D3D12 device layer, the CPU engine, the
#      corpus library), in $DMLS_WIN_BUILD_DIR (default build-win-test);
#   3. directml_engine_test under Wine (DmlEngine against the CPU engine);
#   4. the differential over every conformance case, which fails when a
#      case's outcome differs from tests/data/directml_expected.tsv.
#
# About 6 minutes on a new 2-core machine (most of it the prefix; the
# figures are in docs/WINDOWS.md); with the prefix built, about 2 minutes
# in a fresh clone (the cross build) and about 30 s in a built tree.
# Needs root the first time (apt-get: MinGW-w64, Wine, Xvfb, npm).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
export DMLS_WIN_BUILD_DIR="${DMLS_WIN_BUILD_DIR:-$ROOT/build-win-test}"
export JOBS="${JOBS:-2}"
t0=$(date +%s)
step() { echo "== test-directml: $1 ($(( $(date +%s) - t0 )) s)"; }

step "dependency prefix"
"$ROOT/deploy/windows/build-deps.sh" protobuf
step "cross build"
DMLS_WIN_TARGETS="directml_engine_test directml_diff" \
  "$ROOT/deploy/windows/cross-build.sh" engine >"$DMLS_WIN_BUILD_DIR.log" 2>&1 ||
  { tail -40 "$DMLS_WIN_BUILD_DIR.log"; exit 1; }
step "directml_engine_test under Wine"
"$ROOT/deploy/windows/run-tests.sh" directml
step "the differential against tests/data/directml_expected.tsv"
"$ROOT/deploy/windows/directml-diff.sh" --expect
step "done"
