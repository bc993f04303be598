#!/usr/bin/env bash
# One command from a fresh Debian 12 machine (as root) to the full test
# suite: installs the dependencies, builds, runs every test with ctest, then
# the Windows part (deploy/windows/test-directml.sh).
# Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash deploy/setup-debian.sh
bash deploy/build.sh
build_dir=${DMLSERVE_BUILD_DIR:-build}
# Tests pick their own free loopback ports, so two may run at once.
ctest --test-dir "$build_dir" --output-on-failure -j2 --timeout 900
# The Windows part: Microsoft's DirectML.dll under Wine, element by element
# against our CPU engine on every conformance case (docs/DIRECTML.md; about
# 6 minutes on a new machine, 2 in a fresh clone once its prefix is built).
# DMLS_TEST_WINDOWS=0 leaves it out (a Linux-only run; CI runs it).
if [[ "${DMLS_TEST_WINDOWS:-1}" != 0 ]]; then
  bash deploy/windows/test-directml.sh
fi
