#!/usr/bin/env bash
# Builds the Windows (x86_64-w64-mingw32) dependency prefix the cross build
# links against, from Debian's own source packages of the versions the Linux
# build uses (the installed -dev packages name them), with the MinGW-w64
# toolchain of cmake/mingw-w64-posix.cmake. Static libraries only.
#
#   deploy/windows/build-deps.sh            # everything: the above, c-ares,
#                    # re2, OpenSSL, gRPC, civetweb, prometheus-cpp (server)
#   deploy/windows/build-deps.sh engine     # only what the engine needs
#                        # (DirectX-Headers, abseil, googletest, fmt, spdlog)
#   deploy/windows/build-deps.sh protobuf   # that, zlib and protobuf: what the
#                                           # engine-level corpus tests need
#   DMLS_WIN_CACHE=/some/dir deploy/windows/build-deps.sh
#
# Layout under $DMLS_WIN_CACHE (default ~/.cache/dmlserve-win, outside the
# repository): apt/ (a private apt state holding only deb-src entries derived
# from this machine's /etc/apt sources), src/ (unpacked, Debian-patched
# sources), build/, prefix/ (the result), prefix/.stamps/ (one per
# package-version: a second run skips what is built), timings.txt (seconds
# per package, appended).
#
# protoc and grpc_cpp_plugin are the host's (Debian's protobuf-compiler and
# protobuf-compiler-grpc); nothing here builds a code generator.
# Needs root the first time (apt-get install of the cross compiler and
# dpkg-dev; apt-get update of the private deb-src lists).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CACHE="${DMLS_WIN_CACHE:-$HOME/.cache/dmlserve-win}"
PREFIX="$CACHE/prefix"
JOBS="${JOBS:-$(nproc)}"
TOOLCHAIN="$ROOT/cmake/mingw-w64-posix.cmake"
TRIPLE=x86_64-w64-mingw32
WHAT="${1:-all}"
# ccache when present: a rebuilt prefix (a new cache directory, a changed
# flag) costs minutes less.
LAUNCHER="$(command -v ccache || true)"

mkdir -p "$CACHE/src" "$CACHE/build" "$PREFIX/.stamps"

need=()
command -v "$TRIPLE-g++-posix" >/dev/null || need+=(g++-mingw-w64-x86-64-posix mingw-w64-x86-64-dev)
command -v dpkg-source >/dev/null || need+=(dpkg-dev)
command -v cmake >/dev/null || need+=(cmake)
# re2's Unicode tables are generated from it (Debian's source drops them).
[[ -f /usr/share/unicode/UnicodeData.txt ]] || need+=(unicode-data)
if [[ ${#need[@]} -gt 0 ]]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >/dev/null
fi

# A private apt state whose sources are this machine's, turned into deb-src.
# The system's lists and package cache are not touched.
APT="$CACHE/apt"
APT_OPTS=(-o "Dir::Etc::SourceList=$APT/sources.list"
          -o "Dir::Etc::SourceParts=$APT/sources.list.d"
          -o "Dir::State::Lists=$APT/lists" -o "Dir::Cache=$APT/cache"
          -o "APT::Sandbox::User=root" -qq)
apt_ready() {
  [[ -f "$APT/updated" ]] && return 0
  mkdir -p "$APT/sources.list.d" "$APT/lists/partial" "$APT/cache/archives/partial"
  : >"$APT/sources.list"
  [[ -f /etc/apt/sources.list ]] &&
    sed -n 's/^deb \(.*\)/deb-src \1/p' /etc/apt/sources.list >"$APT/sources.list"
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ -e "$f" ]] || continue
    sed 's/^Types:.*/Types: deb-src/' "$f" >"$APT/sources.list.d/$(basename "$f")"
  done
  for f in /etc/apt/sources.list.d/*.list; do
    [[ -e "$f" ]] || continue
    sed -n 's/^deb \(.*\)/deb-src \1/p' "$f" >"$APT/sources.list.d/$(basename "$f")"
  done
  apt-get "${APT_OPTS[@]}" update >&2
  touch "$APT/updated"
}

# source_of BINARY_PACKAGE -> "SOURCE VERSION" of the installed package.
source_of() {
  dpkg-query -W -f='${source:Package} ${source:Version}\n' "$1"
}

# fetch SOURCE VERSION -> prints the unpacked directory.
fetch() {
  local pkg="$1" ver="$2" upstream dir
  upstream="${ver#*:}"; upstream="${upstream%-*}"
  dir="$CACHE/src/$pkg-$upstream"
  if [[ ! -d "$dir" ]]; then
    apt_ready
    if ! (cd "$CACHE/src" && apt-get "${APT_OPTS[@]}" source "$pkg=$ver" >/dev/null 2>&1); then
      # A security update whose .dsc and Debian diff the mirror no longer
      # serves (OpenSSL 3.0.22-1~deb12u2 here: 404) may still have given its
      # upstream tarball: that, of the same version, without Debian's patches.
      local orig; orig=$(ls "$CACHE/src/${pkg}_$upstream".orig.tar.* 2>/dev/null | grep -v '\.asc$' | head -1)
      [[ -n "$orig" ]] || { echo "apt-get source $pkg=$ver failed" >&2; exit 1; }
      echo "== $pkg $ver: no Debian source package, using $(basename "$orig")" >&2
      mkdir -p "$dir" && tar -xf "$orig" -C "$dir" --strip-components=1
    fi
  fi
  [[ -d "$dir" ]] || { echo "no $dir after apt-get source" >&2; exit 1; }
  echo "$dir"
}

cmake_build() {  # cmake_build NAME SRC_DIR [cmake args...]
  local name="$1" src="$2"; shift 2
  rm -rf "$CACHE/build/$name"
  cmake -S "$src" -B "$CACHE/build/$name" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_TOOLCHAIN_FILE="$TOOLCHAIN" -DCMAKE_INSTALL_PREFIX="$PREFIX" \
    -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_FIND_ROOT_PATH="$PREFIX" \
    -DBUILD_SHARED_LIBS=OFF -DCMAKE_CXX_STANDARD=17 -DCMAKE_POSITION_INDEPENDENT_CODE=OFF \
    ${LAUNCHER:+-DCMAKE_C_COMPILER_LAUNCHER=$LAUNCHER -DCMAKE_CXX_COMPILER_LAUNCHER=$LAUNCHER} \
    "$@" >"$CACHE/build/$name.configure.log" 2>&1 ||
    { tail -30 "$CACHE/build/$name.configure.log" >&2; return 1; }
  cmake --build "$CACHE/build/$name" -j "$JOBS" >"$CACHE/build/$name.build.log" 2>&1 ||
    { grep -m5 -A5 'error' "$CACHE/build/$name.build.log" >&2; return 1; }
  cmake --install "$CACHE/build/$name" >/dev/null
}

# DirectX-Headers: header-only, and its bookworm-backports source is not
# served to deb-src here, so the Windows headers of the installed
# directx-headers-dev (the Linux build's version) are copied; its
# /usr/include/wsl stubs are not.
install_directx_headers() {
  local ver; ver=$(dpkg-query -W -f='${Version}' directx-headers-dev)
  local stamp="$PREFIX/.stamps/directx-headers-${ver//:/_}"
  [[ -f "$stamp" ]] && return 0
  rm -rf "$PREFIX/include/directx" "$PREFIX/include/dxguids"
  mkdir -p "$PREFIX/include"
  cp -r /usr/include/directx /usr/include/dxguids "$PREFIX/include/"
  touch "$stamp"
}
build_abseil() {
  cmake_build abseil "$1" -DABSL_PROPAGATE_CXX_STD=ON -DBUILD_TESTING=OFF \
    -DABSL_ENABLE_INSTALL=ON
}
build_googletest() {
  cmake_build googletest "$1" -DBUILD_GMOCK=ON -DINSTALL_GTEST=ON
}
build_fmtlib() {
  cmake_build fmtlib "$1" -DFMT_TEST=OFF -DFMT_DOC=OFF -DFMT_INSTALL=ON
}
build_spdlog() {  # compiled, against the fmt above (as Debian builds it)
  cmake_build spdlog "$1" -DSPDLOG_FMT_EXTERNAL=ON -DSPDLOG_BUILD_EXAMPLE=OFF \
    -DSPDLOG_BUILD_TESTS=OFF -DSPDLOG_INSTALL=ON
}
build_zlib() {  # zlib's own configure (Debian's source has no win32/ makefile)
  rm -rf "$CACHE/build/zlib" && cp -a "$1" "$CACHE/build/zlib"
  (cd "$CACHE/build/zlib" &&
   CHOST="$TRIPLE" ./configure --static --prefix="$PREFIX" >"$CACHE/build/zlib.configure.log" 2>&1 &&
   make -j "$JOBS" libz.a >"$CACHE/build/zlib.build.log" 2>&1 &&
   install -D -m644 libz.a "$PREFIX/lib/libz.a" &&
   install -D -m644 zlib.h "$PREFIX/include/zlib.h" &&
   install -D -m644 zconf.h "$PREFIX/include/zconf.h")
}
build_c-ares() {
  # Debian's CVE-2023-31130 patch uses INADDRSZ, which only glibc's
  # <arpa/nameser.h> defines (c-ares' own name is NS_INADDRSZ): defined here,
  # the unpacked source stays as Debian ships it.
  CFLAGS="-DINADDRSZ=4" cmake_build c-ares "$1" -DCARES_STATIC=ON -DCARES_SHARED=OFF -DCARES_BUILD_TOOLS=OFF \
    -DCARES_BUILD_TESTS=OFF -DCARES_INSTALL=ON
}
build_re2() {
  # Debian's +dfsg source drops the generated tables; its build makes them
  # (REBUILD_TABLES=1) from unicode-data, as here, inside the unpacked source.
  (cd "$1" && make -s REBUILD_TABLES=1 re2/perl_groups.cc re2/unicode_casefold.cc \
     re2/unicode_groups.cc) || return 1
  cmake_build re2 "$1" -DRE2_BUILD_TESTING=OFF
}
build_openssl() {  # OpenSSL's own Configure; libraries and headers only
  rm -rf "$CACHE/build/openssl" && cp -a "$1" "$CACHE/build/openssl"
  (cd "$CACHE/build/openssl" &&
   ./Configure mingw64 no-shared no-tests --cross-compile-prefix="$TRIPLE-" \
     --prefix="$PREFIX" --libdir=lib >"$CACHE/build/openssl.configure.log" 2>&1 &&
   make -j "$JOBS" build_libs >"$CACHE/build/openssl.build.log" 2>&1 &&
   make install_dev >>"$CACHE/build/openssl.build.log" 2>&1)
}
build_protobuf() {  # the runtime libraries; protoc is the host's
  cmake_build protobuf "$1" -Dprotobuf_BUILD_TESTS=OFF -Dprotobuf_BUILD_PROTOC_BINARIES=OFF \
    -Dprotobuf_BUILD_SHARED_LIBS=OFF -Dprotobuf_WITH_ZLIB=OFF -Dprotobuf_INSTALL=ON
}
# gRPC_BUILD_CODEGEN=ON is what builds grpc++_reflection (its .proto stubs
# are generated at build time, by the host's protoc and grpc_cpp_plugin: a
# cross build finds them with find_program); the plugins themselves are off.
# Without protobuf's libprotoc target gRPC takes the well-known protos'
# include directory from PROTOBUF_INCLUDE_DIRS, which protobuf's CONFIG
# package does not set (protoc then got "-I <file>": "Missing input file").
build_grpc() {
  cmake_build grpc "$1" -DgRPC_INSTALL=ON -DgRPC_BUILD_TESTS=OFF -DgRPC_BUILD_CODEGEN=ON \
    -DgRPC_BUILD_GRPC_CPP_PLUGIN=OFF -DgRPC_BUILD_GRPC_CSHARP_PLUGIN=OFF \
    -DgRPC_BUILD_GRPC_NODE_PLUGIN=OFF -DgRPC_BUILD_GRPC_OBJECTIVE_C_PLUGIN=OFF \
    -DgRPC_BUILD_GRPC_PHP_PLUGIN=OFF -DgRPC_BUILD_GRPC_PYTHON_PLUGIN=OFF \
    -DgRPC_BUILD_GRPC_RUBY_PLUGIN=OFF -DgRPC_BUILD_CSHARP_EXT=OFF \
    -DgRPC_ABSL_PROVIDER=package -DgRPC_CARES_PROVIDER=package \
    -DgRPC_PROTOBUF_PROVIDER=package -DgRPC_PROTOBUF_PACKAGE_TYPE=CONFIG \
    -DgRPC_RE2_PROVIDER=package -DgRPC_SSL_PROVIDER=package -DgRPC_ZLIB_PROVIDER=package \
    -DgRPC_BENCHMARK_PROVIDER=none -DOPENSSL_ROOT_DIR="$PREFIX" \
    -DProtobuf_PROTOC_EXECUTABLE=/usr/bin/protoc -D_gRPC_PROTOBUF_PROTOC_EXECUTABLE=/usr/bin/protoc \
    -D_gRPC_CPP_PLUGIN=/usr/bin/grpc_cpp_plugin -DPROTOBUF_INCLUDE_DIRS="$PREFIX/include"
}
build_civetweb() {  # what prometheus-cpp's pull (the /metrics endpoint) serves with
  cmake_build civetweb "$1" -DCIVETWEB_BUILD_TESTING=OFF -DCIVETWEB_ENABLE_CXX=ON \
    -DCIVETWEB_ENABLE_WEBSOCKETS=ON -DCIVETWEB_ENABLE_SSL=OFF \
    -DCIVETWEB_ENABLE_SERVER_EXECUTABLE=OFF -DCIVETWEB_INSTALL_EXECUTABLE=OFF
}
build_prometheus-cpp() {  # as Debian builds it: against the civetweb above
  cmake_build prometheus-cpp "$1" -DUSE_THIRDPARTY_LIBRARIES=OFF -DENABLE_TESTING=OFF \
    -DENABLE_PUSH=OFF -DENABLE_COMPRESSION=ON -DGENERATE_PKGCONFIG=OFF
}

# build SOURCE_PACKAGE BINARY_PACKAGE_NAMING_ITS_VERSION
build() {
  local pkg="$1" bin="$2" src ver dir t0 t1
  read -r src ver < <(source_of "$bin")
  [[ "$src" == "$pkg" ]] || { echo "$bin comes from $src, not $pkg" >&2; exit 1; }
  local stamp="$PREFIX/.stamps/$pkg-${ver//:/_}"
  if [[ -f "$stamp" ]]; then echo "== $pkg $ver: built"; return 0; fi
  t0=$(date +%s)
  dir=$(fetch "$pkg" "$ver")
  t1=$(date +%s)
  echo "== $pkg $ver: fetched in $((t1 - t0)) s, building"
  "build_$pkg" "$dir" || { echo "== $pkg: FAILED (logs in $CACHE/build)" >&2; exit 1; }
  local t2; t2=$(date +%s)
  echo "== $pkg $ver: built in $((t2 - t1)) s"
  echo "$(date -u +%FT%TZ) $pkg $ver fetch_s=$((t1 - t0)) build_s=$((t2 - t1)) jobs=$JOBS" >>"$CACHE/timings.txt"
  touch "$stamp"
}

command -v ninja >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q ninja-build >/dev/null
install_directx_headers
build abseil libabsl-dev
build googletest libgtest-dev
build fmtlib libfmt-dev
build spdlog libspdlog-dev
[[ "$WHAT" == engine ]] && exit 0
build zlib zlib1g-dev
build protobuf libprotobuf-dev
[[ "$WHAT" == protobuf ]] && exit 0
build c-ares libc-ares-dev
build re2 libre2-dev
build openssl libssl-dev
# The metrics endpoint's two first: minutes, where gRPC takes an hour on
# two busy cores.
build civetweb libcivetweb-dev
build prometheus-cpp prometheus-cpp-dev
build grpc libgrpc++-dev
echo "== prefix: $PREFIX"
