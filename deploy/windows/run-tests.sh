#!/usr/bin/env bash
# Runs the Windows test binaries of deploy/windows/cross-build.sh under
# Debian's Wine (wine64 8.0, whose d3d12.dll is vkd3d) on lavapipe, inside
# one xvfb-run (Wine's DXGI needs an X display).
#
#   deploy/windows/run-tests.sh              # every *_test.exe
#   deploy/windows/run-tests.sh 'cpu|sched'  # those whose name matches
#   TEST_TIMEOUT=600 deploy/windows/run-tests.sh
#
# Lavapipe: Mesa 25's from bookworm-backports, unpacked (dpkg -x, nothing
# installed) under $DMLS_WIN_CACHE/mesa25 and named by VK_DRIVER_FILES for
# these runs only. Debian 12's own lavapipe (Mesa 22.3) lacks
# VK_EXT_descriptor_indexing, without which the vkd3d inside Wine 8.0
# rejects every descriptor table; the Linux build keeps Debian's.
#
# Adapter: the Wine prefix uses wined3d's Vulkan renderer, so DXGI reports
# lavapipe with Mesa's Vulkan vendor id, which engine/d3d12/device.cc's
# Windows path counts as a software adapter (as it would WARP); the tests
# ask for that one.
#
# directml_engine_test needs Microsoft's DirectML.dll: fetch-directml.sh
# fetches it (npm) and it is copied beside the test.
#
# Writes $BUILD/wine-tests/<name>.log and summary.txt (name, result,
# seconds); exits non-zero if any test failed. Needs root the first time
# (apt-get install wine64 xvfb xauth).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CACHE="${DMLS_WIN_CACHE:-$HOME/.cache/dmlserve-win}"
BUILD="${DMLS_WIN_BUILD_DIR:-$ROOT/build-win}"
FILTER="${1:-.}"
TEST_TIMEOUT="${TEST_TIMEOUT:-900}"
OUT="$BUILD/wine-tests"

source "$ROOT/deploy/windows/wine-env.sh" || exit 2

mapfile -t tests < <(find "$BUILD" -name '*_test.exe' -printf '%P\n' | sort |
                     grep -E -- "$FILTER")
[[ ${#tests[@]} -gt 0 ]] || { echo "no *_test.exe matching '$FILTER' in $BUILD" >&2; exit 2; }
rm -rf "$OUT"; mkdir -p "$OUT"

# The DirectML engine's tests load DirectML.dll from beside themselves
# (fetch-directml.sh puts Microsoft's into the cache).
if printf '%s\n' "${tests[@]}" | grep -q directml; then
  dll=$("$ROOT/deploy/windows/fetch-directml.sh") || exit 2
  for t in "${tests[@]}"; do
    [[ "$t" == *directml* ]] && cp "$dll" "$(dirname "$BUILD/$t")/"
  done
fi

# One X server for all of them; each test gets its own timeout.
export BUILD OUT TEST_TIMEOUT
printf '%s\n' "${tests[@]}" | xvfb-run -a bash -c '
  while read -r t; do
    name=$(basename "$t" .exe); t0=$(date +%s)
    (cd "$(dirname "$BUILD/$t")" && timeout "$TEST_TIMEOUT" /usr/lib/wine/wine64 "./$name.exe" \
       --gtest_color=no) >"$OUT/$name.log" 2>&1 </dev/null
    rc=$?; dt=$(( $(date +%s) - t0 ))
    case $rc in 0) r=PASS ;; 124) r=TIMEOUT ;; *) r="FAIL(rc=$rc)" ;; esac
    printf "%-36s %-12s %5d s  %s\n" "$name" "$r" "$dt" \
      "$(grep -aE "^\[  (PASSED|FAILED)  \]" "$OUT/$name.log" | tr -d "\r" | tr "\n" " ")"
  done' | tee "$OUT/summary.txt"
/usr/lib/wine/wineserver -k 2>/dev/null || true
! grep -qv ' PASS ' "$OUT/summary.txt"
