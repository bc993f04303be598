#!/usr/bin/env bash
# Cross-builds dmlserve for Windows x86-64 with MinGW-w64
# (cmake/mingw-w64-posix.cmake) against the prefix of
# deploy/windows/build-deps.sh.
#
#   deploy/windows/cross-build.sh engine   # engine libraries + engine tests
#                                          # (needs `build-deps.sh engine`)
#   deploy/windows/cross-build.sh all      # everything (needs the full prefix)
#   DMLS_WIN_TARGETS="dmlserve dmlctl" deploy/windows/cross-build.sh all
#                                          # only those targets
#
# Output: ${DMLS_WIN_BUILD_DIR:-build-win}/**/*.exe, linked -static (no MinGW
# DLL to carry). deploy/windows/run-tests.sh runs the tests under Wine.
# Protocol buffers and gRPC stubs are generated with the host's protoc and
# grpc_cpp_plugin (Debian's, the versions the prefix was built from).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CACHE="${DMLS_WIN_CACHE:-$HOME/.cache/dmlserve-win}"
PREFIX="$CACHE/prefix"
BUILD="${DMLS_WIN_BUILD_DIR:-$ROOT/build-win}"
WHAT="${1:-engine}"
[[ $# -gt 0 ]] && shift  # the rest goes to cmake

case "$WHAT" in
  engine) engine_only=ON ;;
  all) engine_only=OFF ;;
  *) echo "usage: $0 engine|all" >&2; exit 2 ;;
esac
[[ -d "$PREFIX/lib/cmake/absl" ]] ||
  { echo "no dependency prefix in $PREFIX: run deploy/windows/build-deps.sh" >&2; exit 2; }

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
# -O2 without -g: MinGW's debug info makes the test binaries hundreds of MB.
cmake -S "$ROOT" -B "$BUILD" -G Ninja \
  -DCMAKE_TOOLCHAIN_FILE="$ROOT/cmake/mingw-w64-posix.cmake" \
  -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_FIND_ROOT_PATH="$PREFIX" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" \
  -DDMLSERVE_ENGINE_ONLY="$engine_only" \
  -DProtobuf_PROTOC_EXECUTABLE=/usr/bin/protoc \
  -DDMLS_GRPC_CPP_PLUGIN=/usr/bin/grpc_cpp_plugin \
  "${launcher[@]}" "$@"
t0=$(date +%s)
targets=()
for t in ${DMLS_WIN_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$BUILD" -j "${JOBS:-$(nproc)}" "${targets[@]}"
echo "== built in $(( $(date +%s) - t0 )) s: $(find "$BUILD" -name '*.exe' | wc -l) executables in $BUILD"
