#!/usr/bin/env bash
# Installs every build, test and run-time dependency of dmlserve from Debian 12
# packages (bookworm, plus bookworm-backports for directx-headers-dev 1.614).
# Idempotent; run as root. The backports mirror is derived from the machine's
# own apt sources, so no registry host is written anywhere in this repository.
# DMLSERVE_SETUP_PROFILE=build installs only what building dmlserve and
# dmlctl needs (the image's build stage): no Python, Prometheus, nginx,
# openssl, vulkan-tools or clang, which only the tests use.
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
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$script_hash" ] && [ "${DMLSERVE_FORCE_SETUP:-0}" != 1 ]; then
  echo "setup-debian.sh: dependencies already installed (delete $stamp to force)"
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
    openssl nginx-light prometheus
  )
fi
apt-get install -y -q --no-install-recommends "${packages[@]}"
apt-get install -y -q --no-install-recommends -t bookworm-backports directx-headers-dev

echo "$script_hash" >"$stamp"
echo "setup-debian.sh: done"
