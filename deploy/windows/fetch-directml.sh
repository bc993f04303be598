#!/usr/bin/env bash
# Fetches Microsoft's DirectML.dll (1.15.4, win32-x64) for the DirectML
# engine's tests and the differential (docs/DIRECTML.md): it ships inside
# the onnxruntime-node npm package (bin/napi-v6/win32/x64/), which `npm pack`
# downloads through the ordinary npm client. The DLL goes into the cache,
# never into the repository. Prints its path.
#
#   deploy/windows/fetch-directml.sh      # -> $DMLS_WIN_CACHE/directml/DirectML.dll
#
# Needs npm (Debian's `npm` package) the first time.
set -euo pipefail

CACHE="${DMLS_WIN_CACHE:-$HOME/.cache/dmlserve-win}"
VERSION="${ORT_NODE_VERSION:-1.30.0}"
DIR="$CACHE/directml"
DLL="$DIR/DirectML.dll"

if [[ ! -f "$DLL" ]]; then
  command -v npm >/dev/null ||
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q npm >/dev/null
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && npm pack -q "onnxruntime-node@$VERSION" >/dev/null &&
   tar xzf "onnxruntime-node-$VERSION.tgz" package/bin/napi-v6/win32/x64/DirectML.dll) ||
    { echo "npm pack onnxruntime-node@$VERSION failed" >&2; exit 1; }
  mkdir -p "$DIR"
  cp "$work/package/bin/napi-v6/win32/x64/DirectML.dll" "$DLL.tmp" && mv "$DLL.tmp" "$DLL"
  echo "onnxruntime-node@$VERSION $(sha256sum "$DLL" | cut -d' ' -f1)" >"$DIR/SOURCE"
fi
echo "$DLL"
