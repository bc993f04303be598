#!/usr/bin/env bash
# Installs every build, test and run-time dependency of dmlserve from Debian 12
# packages (bookworm, plus bookworm-backports for directx-headers-dev 1.614).
# Idempotent; run as root. The backports mirror is derived from the machine's
# own apt sources, so no registry host is written anywhere in this repository.
# DMLSERVE_SETUP_PROFILE=build installs only what building dmlserve and
# dmlctl needs (the image's build stage): no Python, Prometheus, nginx,
# openssl, vulkan-tools, clang or Node.js, which only the tests use.
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then
  echo "setup-debian.sh: run as root" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
stamp=/var/lib/dmlserve-setup.stamp
profile=${DMLSERVE_SETUP_PROFILE:-full}
case "$profile" in
  full|build) ;;
  *) echo "setup-debian.sh: DMLSERVE_SETUP_PROFILE must be full or build" >&2; exit 1 ;;
esac
script_hash="$(sha256sum "$0" | cut -d' ' -f1) $profile"

# The Node.js client's packages (client/node/package-lock.json, from the npm
# registry the machine's npm is configured for), for its tests. Run on every
# call, stamp or not: a fresh clone has no node_modules. npm ci again only
# when the lock file is newer than the last install.
install_node_client() {
  [ "$profile" = full ] || return 0
  local dir
  dir="$(cd "$(dirname "$0")/.." && pwd)/client/node"
  if [ ! -f "$dir/node_modules/.package-lock.json" ] ||
     [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
    (cd "$dir" && npm ci --no-audit --no-fund)
  fi
}

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$script_hash" ] && [ "${DMLSERVE_FORCE_SETUP:-0}" != 1 ]; then
  echo "setup-debian.sh: dependencies already installed (delete $stamp to force)"
  install_node_client
  exit 0
fi

# --- enable bookworm-backports from the mirror the machine already uses -----
bp=/etc/apt/sources.list.d/dmlserve-backports.sources
if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  uri=""
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    uri=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources)
  fi
  if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
    uri=$(awk '$1=="deb" && $3 ~ /^bookworm/ {print $2; exit}' /etc/apt/sources.list)
  fi
  if [ -z "$uri" ]; then
    echo "setup-debian.sh: cannot find the Debian mirror in the apt sources" >&2
    exit 1
  fi
  cat >"$bp" <<SRC
Types: deb
URIs: $uri
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
fi

apt-get update -q

packages=(
  build-essential cmake pkg-config git
  libgrpc++-dev libgrpc-dev protobuf-compiler protobuf-compiler-grpc libprotobuf-dev
  libabsl-dev libspdlog-dev libfmt-dev libgtest-dev libgmock-dev prometheus-cpp-dev
  libvkd3d-dev libvkd3d1 libvkd3d-shader1 libvulkan-dev mesa-vulkan-drivers libvulkan1
)
if [ "$profile" = full ]; then
  packages+=(
    vulkan-tools clang
    python3 python3-numpy python3-grpcio python3-protobuf python3-yaml
    python3-venv python3-mypy
    openssl nginx-light prometheus
  )
fi
apt-get install -y -q --no-install-recommends "${packages[@]}"
apt-get install -y -q --no-install-recommends -t bookworm-backports directx-headers-dev
# Node.js for client/node: Debian's nodejs (18.x) and npm, unless the machine
# already has a node and npm (a newer Node.js works too).
if [ "$profile" = full ]; then
  node_packages=()
  command -v node >/dev/null || node_packages+=(nodejs)
  command -v npm >/dev/null || node_packages+=(npm)
  if [ ${#node_packages[@]} -gt 0 ]; then
    apt-get install -y -q --no-install-recommends "${node_packages[@]}"
  fi
fi
install_node_client

echo "$script_hash" >"$stamp"
echo "setup-debian.sh: done"
