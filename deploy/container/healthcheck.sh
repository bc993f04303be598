#!/bin/sh
# The image's HEALTHCHECK: grpc.health.v1 Check on the port the server was
# actually started with (the last --port of PID 1's command line, which the
# entrypoint's own --port=$DMLSERVE_PORT precedes), with a deadline inside
# Docker's probe timeout. Exit 0 when SERVING; NOT_SERVING (draining) or no
# answer is unhealthy.
set -eu
port=$(tr '\0' '\n' </proc/1/cmdline | awk '
  prev == "--port" { p = $0 }
  /^--port=/ { p = substr($0, 8) }
  { prev = $0 }
  END { print p }')
exec /usr/local/bin/dmlctl --server="127.0.0.1:${port:-${DMLSERVE_PORT:-50051}}" \
  --timeout=2 health
