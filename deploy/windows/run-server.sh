#!/usr/bin/env bash
# Smoke run of the cross-built server under Wine on lavapipe: for each
# device given, starts dmlserve.exe, waits for its readiness line, asks
# dmlctl.exe for health, runs one CELU request through it (compared with
# numpy's float64 CELU) and stops the server with SIGINT (Wine's
# CTRL_C_EVENT: the same drain as SIGTERM on Linux), which must exit 0.
#
#   deploy/windows/run-server.sh                 # --device=cpu and software
#                        # (lavapipe is a software adapter: gpu refuses it)
#   deploy/windows/run-server.sh cpu software    # those devices
#   deploy/windows/run-server.sh directml        # DirectML.dll (fetch-directml.sh,
#                        # copied beside dmlserve.exe) on the lavapipe adapter
#
# Needs `deploy/windows/cross-build.sh all`. Writes
# $BUILD/wine-server/<device>.log (the server's stderr) and prints one line
# per step with its seconds; exits non-zero at the first failure.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${DMLS_WIN_BUILD_DIR:-$ROOT/build-win}"
DEVICES=("${@:-cpu}")
[[ $# -eq 0 ]] && DEVICES=(cpu software)
OUT="$BUILD/wine-server"
SERVER="${DMLSERVE_EXE:-$BUILD/server/dmlserve.exe}"
CTL="${DMLCTL_EXE:-$BUILD/client/dmlctl.exe}"
# The loader each binary is started with (`env` runs Linux builds: a check
# of this script itself).
export WINE_LOADER="${WINE_LOADER:-/usr/lib/wine/wine64}"
[[ -f "$SERVER" && -f "$CTL" ]] ||
  { echo "no $SERVER or $CTL: run deploy/windows/cross-build.sh all" >&2; exit 2; }

if [[ " ${DEVICES[*]} " == *" directml "* ]]; then
  dll=$("$ROOT/deploy/windows/fetch-directml.sh") || exit 2
  cp "$dll" "$(dirname "$SERVER")/DirectML.dll"
fi
source "$ROOT/deploy/windows/wine-env.sh" || exit 2
rm -rf "$OUT"; mkdir -p "$OUT"

export ROOT OUT SERVER CTL
printf '%s\n' "${DEVICES[@]}" | xvfb-run -a bash -c '
  wine=$WINE_LOADER
  step() { printf "%-8s %-28s %s\n" "$device" "$1" "$2"; }
  since() { printf "%.2f" "$(echo "$(date +%s.%N) - $1" | bc)"; }
  while read -r device; do
    port=$(/usr/bin/python3 -c "import socket; s=socket.socket(); s.bind((\"127.0.0.1\", 0)); print(s.getsockname()[1])")
    t0=$(date +%s.%N)
    coproc SRV { exec $wine "$SERVER" --device="$device" --address=127.0.0.1 --port=$port \
                   --drain_seconds=1 2>"$OUT/$device.log"; }
    srv_pid=$SRV_PID ready=""
    while IFS= read -r -t 120 line <&"${SRV[0]}"; do
      [[ "$line" == *"dmlserve listening on"* ]] && { ready=1; break; }
    done
    [[ -n "$ready" ]] || { step start FAIL; tail -20 "$OUT/$device.log"; kill $srv_pid; exit 1; }
    step start "ok $(since $t0) s"
    t0=$(date +%s.%N)
    $wine "$CTL" --server=127.0.0.1:$port health </dev/null >"$OUT/$device.health" 2>&1 ||
      { step health FAIL; cat "$OUT/$device.health"; kill $srv_pid; exit 1; }
    step health "ok $(since $t0) s: $(tr -d "\r" <"$OUT/$device.health" | head -1)"
    /usr/bin/python3 -c "import numpy as np; np.save(\"$OUT/x.npy\", np.linspace(-4, 4, 24, dtype=np.float32).reshape(2, 3, 4))"
    t0=$(date +%s.%N)
    (cd "$OUT" && $wine "$CTL" --server=127.0.0.1:$port run "$ROOT/client/examples/celu.json" \
       --input=x.npy --output=y_$device.npy </dev/null >"$OUT/$device.run" 2>&1) ||
      { step run FAIL; cat "$OUT/$device.run"; kill $srv_pid; exit 1; }
    /usr/bin/python3 - "$OUT" "$device" "$ROOT/client/examples/celu.json" <<"EOF" || { kill $srv_pid; exit 1; }
import json, sys
import numpy as np
out, device, desc = sys.argv[1:]
alpha = json.load(open(desc)).get("celu", {}).get("alpha", 1.0)
x = np.load(out + "/x.npy").astype(np.float64)
want = np.maximum(0, x) + np.minimum(0, alpha * np.expm1(x / alpha))
got = np.load(out + "/y_%s.npy" % device)
err = float(np.max(np.abs(got - want)))
print("%-8s %-28s max |error| %.3g against float64 (alpha %g)" % (device, "run celu 2x3x4", err, alpha))
sys.exit(0 if got.shape == want.shape and err < 1e-5 else 1)
EOF
    t0=$(date +%s.%N)
    kill -INT $srv_pid; wait $srv_pid; rc=$?
    step "stop (SIGINT)" "exit $rc, $(since $t0) s"
    [[ $rc -eq 0 ]] || exit 1
  done'
rc=$?
/usr/lib/wine/wineserver -k 2>/dev/null || true
exit $rc
