#!/usr/bin/env bash
# Cross-compiles the engine for Windows (x86_64-w64-mingw32) to show that the
# Direct3D 12 code and everything under it builds against the Windows-side
# headers: every engine library source with -c, the tests beside them with
# -fsyntax-only. No link: Debian has no Windows builds of abseil or spdlog, so
# the portable headers of the Linux packages are used and nothing is linked
# (docs/WINDOWS.md says what this does and does not prove).
#
#   deploy/check-windows-build.sh
#   JOBS=1 deploy/check-windows-build.sh   # parallel compiles (default nproc)
#   WIN_CXX=... deploy/check-windows-build.sh   # another MinGW-w64 g++
#
# Headers:
#   d3d12.h & co.  DirectX-Headers' Windows headers, /usr/include/directx
#                  (NOT /usr/include/wsl/stubs, which fake windows.h for Linux)
#   DXGI, windows  MinGW-w64's own headers (DirectX-Headers has no dxgi1_6.h)
#   absl, spdlog   Debian's headers (spdlog and fmt in header-only mode)
#
# Not part of CI: the cross compiler is a large install. Installs it (Debian
# apt) when missing, so run as root or with it preinstalled. Prints
# "N passed, M failed" and exits non-zero if any compile failed.
set -u -o pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CXX="${WIN_CXX:-x86_64-w64-mingw32-g++-posix}"
JOBS="${JOBS:-$(nproc)}"

if ! command -v "$CXX" >/dev/null 2>&1; then
  echo "== installing the MinGW-w64 cross compiler (posix threads flavour)"
  apt-get install -y g++-mingw-w64-x86-64-posix mingw-w64-x86-64-dev || {
    echo "cannot install $CXX (run as root, or apt-get update first)" >&2
    exit 2
  }
fi
for dir in /usr/include/directx /usr/include/absl /usr/include/spdlog \
           /usr/include/fmt; do
  if [[ ! -d "$dir" ]]; then
    echo "missing $dir (deploy/setup-debian.sh installs it)" >&2
    exit 2
  fi
done
if [[ -e /usr/include/directx/windows.h || -e /usr/include/directx/winadapter.h ]]; then
  echo "/usr/include/directx looks like the WSL stubs; refusing" >&2
  exit 2
fi

# /usr/include itself cannot go on the include path (it would pull glibc's
# headers into a Windows build), so link just the libraries we need into a
# private directory.
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/include" "$WORK/obj" "$WORK/log"
for lib in absl spdlog fmt directx gtest gmock; do
  ln -s "/usr/include/$lib" "$WORK/include/$lib"
done

ENGINE_DIRS=(engine/core engine/ops engine/cpu engine/sched engine/dxbc engine/kernels engine/plan
             engine/d3d12)
# The engine's libraries: every non-test .cc under ENGINE_DIRS.
# engine/dxbc/testing and engine/kernels/testing are left out on purpose:
# the Linux test harness around vkd3d-shader and the kernel hash tool (not
# part of the engine, never built on Windows by their CMakeLists.txt).
mapfile -t SOURCES < <(cd "$ROOT" && find "${ENGINE_DIRS[@]}" \
  -path engine/dxbc/testing -prune -o -path engine/kernels/testing -prune -o \
  -name '*.cc' ! -name '*_test.cc' -print | sort)
# The tests beside them, syntax-checked only (gtest headers; nothing links),
# except these, which are not meant for Windows:
declare -A SKIP_TESTS=(
  [engine/core/types_test.cc]="DirectML.h uses SAL annotations (_Maybenull_) MinGW's sal.h lacks"
  [engine/dxbc/shader_builder_test.cc]="POSIX process APIs (fork, <sys/wait.h>)"
)
mapfile -t TESTS < <(cd "$ROOT" && find "${ENGINE_DIRS[@]}" \
  -path engine/dxbc/testing -prune -o -path engine/kernels/testing -prune -o -name '*_test.cc' -print | sort)

# Every file is compiled with WIN32_LEAN_AND_MEAN (the brief's configuration);
# engine/d3d12 is compiled a second time without it ("full windows.h"), as a
# CMake build on Windows would, since that pulls in rpc.h/ole2.h and the rest
# of windows.h before d3d12.h and can clash differently.
JOBLIST=()
for src in "${SOURCES[@]}"; do
  JOBLIST+=("lean $src")
  [[ "$src" == engine/d3d12/* ]] && JOBLIST+=("full $src")
done
skipped=0
for src in "${TESTS[@]}"; do
  if [[ -n "${SKIP_TESTS[$src]:-}" ]]; then
    skipped=$((skipped + 1))
  else
    JOBLIST+=("test $src")
  fi
done

FLAGS=(
  -std=gnu++17 -DNOMINMAX
  -DSPDLOG_HEADER_ONLY -DFMT_HEADER_ONLY
  -DDMLSERVE_VERSION='"windows-check"'
  -Wall -Wextra -Wno-unused-parameter
  -I "$ROOT"
  # Before MinGW's own d3d12.h: DirectX-Headers is what a Windows build
  # uses (the SDK's d3d12.h is generated from the same IDL).
  -isystem /usr/include/directx
  -isystem "$WORK/include"
)

echo "== $("$CXX" --version | head -n1)"
echo "== ${#SOURCES[@]} engine sources (-c; engine/d3d12 twice) and" \
  "$((${#TESTS[@]} - skipped)) tests (-fsyntax-only) for x86_64-w64-mingw32," \
  "${#JOBLIST[@]} compiles, no link"

compile_one() {
  local variant="$1" src="$2" name extra=()
  name="$variant.$(echo "$src" | tr '/' '_')"
  case "$variant" in
    lean) extra=(-DWIN32_LEAN_AND_MEAN) ;;
    test) extra=(-DWIN32_LEAN_AND_MEAN -fsyntax-only
                 -DDMLS_OPS_TESTDATA_DIR='"testdata"'
                 -DDMLS_VKD3D_TRACE_TOOL='"dxbc_vkd3d_trace_tool"') ;;
  esac
  if (cd "$ROOT" && "$CXX" "${FLAGS[@]}" "${extra[@]}" -c "$src" \
        -o "$WORK/obj/$name.o") >"$WORK/log/$name.log" 2>&1; then
    echo "PASS $variant $src"
  else
    echo "FAIL $variant $src"
  fi
}
export -f compile_one
export CXX ROOT WORK
# Arrays do not cross `export`; hand the flags over NUL-separated.
printf '%s\0' "${FLAGS[@]}" >"$WORK/flags"

RESULTS="$(printf '%s\n' "${JOBLIST[@]}" | xargs -P "$JOBS" -L1 bash -c '
  mapfile -d "" -t FLAGS <"$WORK/flags"
  compile_one "$1" "$2"' _)"

passed=0
failed=0
while read -r status variant src; do
  if [[ "$status" == PASS ]]; then
    passed=$((passed + 1))
    echo "  ok    [$variant] $src"
  else
    failed=$((failed + 1))
    echo "  FAIL  [$variant] $src"
    sed 's/^/        /' "$WORK/log/$variant.$(echo "$src" | tr '/' '_').log" |
      head -n 60
  fi
done < <(printf '%s\n' "$RESULTS" | sort -k3 -k2)

# Warnings are reported, not fatal (the Linux build does not use -Werror).
warnings=$(cat "$WORK"/log/*.log 2>/dev/null | grep -c 'warning:' || true)
if [[ "$warnings" -gt 0 ]]; then
  echo "== $warnings warning(s):"
  cat "$WORK"/log/*.log | grep 'warning:' | sort -u | head -n 40
fi

for src in "${!SKIP_TESTS[@]}"; do
  echo "  skip  $src: ${SKIP_TESTS[$src]}"
done | sort

echo "$passed passed, $failed failed"
[[ "$failed" -eq 0 ]]
