#!/usr/bin/env bash
# One command from a fresh Debian 12 machine (as root) to the full test
# suite: installs the dependencies, builds, runs every test with ctest.
# Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash deploy/setup-debian.sh
bash deploy/build.sh
build_dir=${DMLSERVE_BUILD_DIR:-build}
# Tests pick their own free loopback ports, so two may run at once.
ctest --test-dir "$build_dir" --output-on-failure -j2 --timeout 900
