#!/bin/sh
# The image's entrypoint: dmlserve on every interface of the container, on
# $DMLSERVE_PORT unless an argument says --port; other arguments pass
# through. exec, so that dmlserve is PID 1 and gets docker stop's SIGTERM.
set -eu
exec /usr/local/bin/dmlserve --address=0.0.0.0 --port="${DMLSERVE_PORT:-50051}" "$@"
