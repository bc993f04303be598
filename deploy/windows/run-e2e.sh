#!/usr/bin/env bash
# Runs the end-to-end suite (tests/e2e) of the Windows cross build against
# dmlserve.exe and dmlctl.exe under Wine on lavapipe, inside one xvfb-run.
# The cross build's ctest entries already carry DMLSERVE_PREFIX (the Wine
# loader) and DMLSERVE_STOP_SIGNAL=INT (tests/e2e/CMakeLists.txt); the
# Python side is the host's /usr/bin/python3 with grpcio, as on Linux.
#
#   deploy/windows/run-e2e.sh                 # every e2e entry on the CPU engine
#   deploy/windows/run-e2e.sh -L gpu          # ctest arguments replace the default
#   deploy/windows/run-e2e.sh -R e2e_test_version
#   deploy/windows/run-e2e.sh -L directml     # test_directml: --device=directml
#   DMLS_E2E_DEVICE=directml deploy/windows/run-e2e.sh -R e2e_test_operators
#                          # any module with its servers on --device=directml
# Both put DirectML.dll (fetch-directml.sh) beside dmlserve.exe; the default
# run leaves test_directml out (-LE 'gpu|directml': no DLL needed).
#
# Needs `deploy/windows/cross-build.sh all`. ctest's own log is
# $BUILD/Testing/Temporary/LastTest.log; the per-test summary (name, result,
# seconds) goes to $BUILD/wine-e2e.txt.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${DMLS_WIN_BUILD_DIR:-$ROOT/build-win}"
[[ -f "$BUILD/server/dmlserve.exe" ]] ||
  { echo "no $BUILD/server/dmlserve.exe: run deploy/windows/cross-build.sh all" >&2; exit 2; }
args=("$@")
[[ ${#args[@]} -eq 0 ]] && args=(-L e2e -LE 'gpu|directml')

if [[ "${DMLS_E2E_DEVICE:-cpu}" == directml || " ${args[*]} " == *directml* ]]; then
  dll=$("$ROOT/deploy/windows/fetch-directml.sh") || exit 2
  cp "$dll" "$BUILD/server/DirectML.dll"
fi
source "$ROOT/deploy/windows/wine-env.sh" || exit 2
# One test at a time: every server is a Wine process sharing one wineserver
# and the 2-core machines this runs on.
xvfb-run -a ctest --test-dir "$BUILD" -j1 --timeout 900 --output-on-failure "${args[@]}" |
  tee "$BUILD/wine-e2e.log" | grep -E '^ *[0-9]+/[0-9]+ Test|tests passed' | tee "$BUILD/wine-e2e.txt"
rc=${PIPESTATUS[0]}
/usr/lib/wine/wineserver -k 2>/dev/null || true
exit "$rc"
