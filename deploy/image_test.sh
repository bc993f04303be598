#!/usr/bin/env bash
# Builds deploy/Dockerfile and checks the image as an operator would, with
# Debian's docker.io on a private socket (its own data root; nothing of the
# machine's own Docker, if any, is touched) and a Debian 12 base image made
# with debootstrap from the machine's apt mirror (no image registry needed):
#
#   1. build the image; print its size
#   2. run it on a non-default port; time until `docker inspect` says healthy
#   3. run an operator through it (dmlctl inside the container)
#   4. `docker stop` while a long call is in flight: the container must exit 0
#
# Run as root: bash deploy/image_test.sh. Work files (daemon state, the base
# tarball) go to $DMLSERVE_IMAGE_WORK (default .image/ in the checkout,
# git-ignored; the base tarball is reused). Takes 10-20 minutes on 2 cores
# (the build stage compiles the server). Exit status 0 when every check
# passed.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
work=${DMLSERVE_IMAGE_WORK:-$repo/.image}
port=${DMLSERVE_IMAGE_PORT:-50777}
image=dmlserve:image-test
base=dmlserve-base:bookworm
mkdir -p "$work"
log() { echo "[image_test $(date +%H:%M:%S)] $*"; }

if ! command -v dockerd >/dev/null || ! command -v debootstrap >/dev/null; then
  log "installing docker.io and debootstrap"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    docker.io debootstrap >/dev/null
fi

# --- a private Docker daemon ------------------------------------------------
sock=$work/docker.sock
export DOCKER_HOST=unix://$sock
docker_bin=/usr/bin/docker
container=""
cleanup() {
  if [ -n "$container" ]; then "$docker_bin" rm -f "$container" >/dev/null 2>&1 || true; fi
  if [ -f "$work/docker.pid" ]; then kill "$(cat "$work/docker.pid")" 2>/dev/null || true; fi
}
trap cleanup EXIT
if ! "$docker_bin" info >/dev/null 2>&1; then
  log "starting dockerd on $sock"
  dockerd -H "$DOCKER_HOST" --data-root "$work/root" --exec-root "$work/exec" \
    --pidfile "$work/docker.pid" --iptables=false --bridge=none \
    >"$work/dockerd.log" 2>&1 &
  for _ in $(seq 60); do "$docker_bin" info >/dev/null 2>&1 && break; sleep 1; done
  "$docker_bin" info >/dev/null
fi

# --- the base image: debootstrap from the mirror apt already uses -----------
if ! "$docker_bin" image inspect "$base" >/dev/null 2>&1; then
  tarball=$work/bookworm-minbase.tar
  if [ ! -f "$tarball" ]; then
    mirror=""
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
      mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources)
    fi
    if [ -z "$mirror" ] && [ -f /etc/apt/sources.list ]; then
      mirror=$(awk '$1=="deb" && $3 ~ /^bookworm/ {print $2; exit}' /etc/apt/sources.list)
    fi
    [ -n "$mirror" ] || { echo "no Debian mirror in the apt sources" >&2; exit 1; }
    log "debootstrap bookworm (minbase)"
    rm -rf "$work/rootfs"
    debootstrap --variant=minbase bookworm "$work/rootfs" "$mirror" >"$work/debootstrap.log"
    rm -rf "$work/rootfs/var/lib/apt/lists/"* "$work/rootfs/var/cache/apt/"*
    tar -C "$work/rootfs" -cf "$tarball" .
    rm -rf "$work/rootfs"
  fi
  "$docker_bin" import "$tarball" "$base" >/dev/null
fi

# --- 1. build -------------------------------------------------------------
log "building $image"
t0=$(date +%s)
"$docker_bin" build --network=host --build-arg BASE="$base" \
  --build-arg VERSION="$(git describe --always --dirty 2>/dev/null || echo dev)" \
  --build-arg REVISION="$(git rev-parse HEAD 2>/dev/null || echo unknown)" \
  -f deploy/Dockerfile -t "$image" . >"$work/build.log" 2>&1 \
  || { tail -40 "$work/build.log"; exit 1; }
size=$("$docker_bin" image inspect --format '{{.Size}}' "$image")
log "built in $(( $(date +%s) - t0 )) s; image size $(( size / 1000000 )) MB ($size bytes)"
user=$("$docker_bin" image inspect --format '{{.Config.User}}' "$image")
log "runs as user '$user'"
[ "$user" = dmlserve ] || { echo "FAIL: the image runs as '$user'" >&2; exit 1; }

# --- 2. run; time to healthy ----------------------------------------------
container=dmlserve-image-test
"$docker_bin" rm -f "$container" >/dev/null 2>&1 || true
t0=$(date +%s.%N)
"$docker_bin" run -d --name "$container" --network=host "$image" \
  --port="$port" --device=auto >/dev/null
status=starting
for _ in $(seq 120); do
  status=$("$docker_bin" inspect --format '{{.State.Health.Status}}' "$container")
  [ "$status" = healthy ] && break
  [ "$("$docker_bin" inspect --format '{{.State.Running}}' "$container")" = true ] || break
  sleep 0.5
done
healthy_s=$(echo "$(date +%s.%N) - $t0" | bc)
if [ "$status" != healthy ]; then
  "$docker_bin" logs "$container" 2>&1 | tail -20
  echo "FAIL: health is '$status'" >&2
  exit 1
fi
log "healthy on port $port after ${healthy_s} s (probe interval 5 s)"
"$docker_bin" logs "$container" 2>&1 | grep -m1 -E "serving|listening" || true

# --- 3. an operator through it --------------------------------------------
"$docker_bin" exec "$container" dmlctl --server=127.0.0.1:"$port" run \
  /usr/share/dmlserve/examples/celu.json --random=1 --shape=64,1024 \
  --output=/tmp/y.npy
"$docker_bin" exec "$container" dmlctl --server=127.0.0.1:"$port" run \
  /usr/share/dmlserve/examples/mvn1_fused_celu.json --random=2 --output=/tmp/z.npy
# Metrics on their own port (9464 in the image; host networking here).
metrics=$(curl -fsS http://127.0.0.1:9464/metrics || true)
echo "$metrics" | grep -E '^dmlserve_requests_total|^dmlserve_build_info' || {
  echo "FAIL: no metrics on port 9464" >&2; exit 1; }

# --- 4. docker stop during a long call ------------------------------------
# A 192 MiB MVN1 with a fused CELU (under the 256 MiB message limit) takes
# seconds on lavapipe.
cat >"$work/long.json" <<'JSON'
{"mvn1": {"input": {"dataType": "DATA_TYPE_FLOAT32", "sizes": [48, 1048576]},
          "output": {}, "axes": [1], "normalizeVariance": true, "epsilon": 1e-05,
          "fusedActivation": {"celu": {"alpha": 1.0}}}}
JSON
"$docker_bin" cp "$work/long.json" "$container":/tmp/long.json
"$docker_bin" exec -d "$container" sh -c \
  "dmlctl --server=127.0.0.1:$port --timeout=60 run /tmp/long.json --random=3 \
     --output=/tmp/long.npy >/tmp/long.log 2>&1; echo \$? >/tmp/long.rc"
sleep 2
t0=$(date +%s.%N)
"$docker_bin" stop "$container" >/dev/null
stop_s=$(echo "$(date +%s.%N) - $t0" | bc)
code=$("$docker_bin" inspect --format '{{.State.ExitCode}}' "$container")
oom=$("$docker_bin" inspect --format '{{.State.OOMKilled}}' "$container")
log "docker stop during a call took ${stop_s} s; exit code $code (OOM killed: $oom)"
"$docker_bin" logs "$container" 2>&1 | grep -E "drain|shutdown|SIGTERM|signal" | tail -5 || true
if "$docker_bin" cp "$container":/tmp/long.log "$work/long.log" 2>/dev/null; then
  log "the call in flight: $(tail -1 "$work/long.log")"
else
  log "the call in flight had not finished when the container stopped"
fi
[ "$code" = 0 ] || { echo "FAIL: exit code $code" >&2; exit 1; }
# Drain 3 s + grace 5 s + exit deadline 0.5 s: well inside docker stop's 10 s.
[ "$(echo "$stop_s < 9.5" | bc)" = 1 ] || { echo "FAIL: docker stop took ${stop_s} s" >&2; exit 1; }
log "PASS"
