#!/usr/bin/env bash
# One command from a fresh Debian 12 machine (as root) to a running server:
# installs the dependencies, builds, and starts dmlserve on 127.0.0.1:50051
# (override with flags, e.g. `bash deploy/serve.sh --port=6000 --device=cpu`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash deploy/setup-debian.sh
# Only what serving needs: the server and the CLI (the tests build in
# deploy/test.sh).
DMLSERVE_BUILD_TARGETS="dmlserve dmlctl" bash deploy/build.sh
exec "${DMLSERVE_BUILD_DIR:-build}/server/dmlserve" "$@"
