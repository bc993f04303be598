#!/usr/bin/env bash
# ctest client_python_package: what a user does, offline. Makes a fresh venv
# VENV over Debian's python3-grpcio/-protobuf/-numpy, pip-installs
# client/python into it with no package index, and runs the package's tests
# (unit, and live against DMLSERVE_BIN) with the venv's python from outside
# the source tree, so the installed copy is the one tested.
# Usage: venv_test.sh VENV  (DMLSERVE_BIN in the environment)
set -euo pipefail
venv=$1
src=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$venv"
/usr/bin/python3 -m venv --system-site-packages "$venv"
PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
  "$venv/bin/pip" install --no-cache-dir --quiet "$src"
cd "$venv"
DMLS_EXPECT_INSTALLED=1 PYTHONDONTWRITEBYTECODE=1 \
  "$venv/bin/python" -m unittest discover -v -s "$src/tests" -t "$src/tests"
