#!/bin/sh
# The image's entrypoint: dmlserve on every interface of the container, on
# $DMLSERVE_PORT (gRPC) and $DMLSERVE_METRICS_PORT (Prometheus; 0 = off)
# unless arguments say otherwise (later flags win); other arguments pass
# through. exec, so that dmlserve is PID 1 and gets docker stop's SIGTERM.
set -eu
exec /usr/local/bin/dmlserve --address=0.0.0.0 --port="${DMLSERVE_PORT:-50051}" \
  --metrics_port="${DMLSERVE_METRICS_PORT:-9464}" "$@"
