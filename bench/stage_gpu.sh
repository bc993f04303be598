#!/usr/bin/env bash
# Stages one build's binaries for the GPU machine into a folder under the
# git-ignored .gpu/ (which the device runs carry).
# Copies each binary stripped (strip -o) from BUILD_DIR into
# DEST_DIR under the same relative path, so DEST_DIR looks like a build
# directory to bench/serving.sh and the bench/run_*_gpu*.sh scripts.
#   bash bench/stage_gpu.sh BUILD_DIR DEST_DIR      e.g. build .gpu/after
# A binary missing from BUILD_DIR is skipped with a warning; the exit status
# is 1 if any was missing, 2 for bad usage.
set -uo pipefail
if [[ $# -ne 2 ]]; then
  echo "usage: bash bench/stage_gpu.sh BUILD_DIR DEST_DIR" >&2
  exit 2
fi
src=$1 dest=$2
[[ -d $src ]] || { echo "stage.sh: no build directory '$src'" >&2; exit 2; }
bins=(
  server/dmlserve
  client/dmlctl
  bench/load/dmls_load
  bench/echo/echo_server
  bench/echo/sync_echo_server
  bench/dmls_bench
  bench/resident/dmls_resident_bench
)
missing=0
for f in "${bins[@]}"; do
  if [[ ! -f $src/$f ]]; then
    echo "stage.sh: warning: $src/$f missing, skipped" >&2
    missing=1
    continue
  fi
  mkdir -p "$dest/$(dirname "$f")"
  rm -f "$dest/$f"
  if strip -o "$dest/$f" "$src/$f"; then
    chmod +x "$dest/$f"
    echo "stage.sh: $dest/$f ($(du -h "$dest/$f" | cut -f1))"
  else
    echo "stage.sh: warning: strip failed for $src/$f, skipped" >&2
    missing=1
  fi
done
{
  echo "from: $(readlink -f "$src"), $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "git: $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$src" diff --quiet HEAD 2>/dev/null || echo ' (dirty or unknown)')"
} > "$dest/STAGED_FROM" 2>/dev/null
exit "$missing"
