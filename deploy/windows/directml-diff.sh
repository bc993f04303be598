#!/usr/bin/env bash
# The differential of docs/DIRECTML.md: every conformance case
# (tests/data/conformance_*.pb, the random set included) on our CPU
# reference engine and on Microsoft's DirectML.dll (engine/directml), under
# Wine on Mesa 25's lavapipe, compared element by element with each case's
# tolerance (tests/conformance/differential.h).
#
#   deploy/windows/directml-diff.sh [FILTER]        # FILTER: a case-id substring
#   deploy/windows/directml-diff.sh --expect [FILTER]
#       # also fails (exit 1) when a case's outcome differs from
#       # tests/data/directml_expected.tsv (what deploy/test.sh runs)
#   deploy/windows/directml-diff.sh --write-expect  # rewrites that file (no FILTER)
#
# Builds what it needs (build-deps.sh protobuf, then the directml_diff
# target of the cross build in $DMLS_WIN_BUILD_DIR, default build-win),
# fetches DirectML.dll (fetch-directml.sh), runs it and writes
# $BUILD/directml-diff.md (the tables), directml-classified.md (every
# disagreement with its class and the side OPERATORS.md supports,
# directml_classify.py) and directml-diff.log.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${DMLS_WIN_BUILD_DIR:-$ROOT/build-win}"
EXPECTED="$ROOT/tests/data/directml_expected.tsv"
expect=()
case "${1:-}" in
  --expect) expect=(--expect "$EXPECTED"); shift ;;
  --write-expect) expect=(--write_expect "$EXPECTED"); shift ;;
esac
FILTER="${1:-}"

JOBS="${JOBS:-2}" "$ROOT/deploy/windows/build-deps.sh" protobuf
[[ -f "$BUILD/build.ninja" ]] || DMLS_WIN_BUILD_DIR="$BUILD" JOBS="${JOBS:-2}" \
  DMLS_WIN_TARGETS=directml_diff "$ROOT/deploy/windows/cross-build.sh" engine >/dev/null
cmake --build "$BUILD" -j "${JOBS:-2}" --target directml_diff >/dev/null
dll=$("$ROOT/deploy/windows/fetch-directml.sh")
exe_dir="$BUILD/tests/conformance"
cp "$dll" "$exe_dir/"

source "$ROOT/deploy/windows/wine-env.sh"
t0=$(date +%s)
set +e
(cd "$exe_dir" && xvfb-run -a /usr/lib/wine/wine64 ./directml_diff.exe \
   --data "$ROOT/tests/data" --out "$BUILD/directml-diff.md" ${FILTER:+--filter "$FILTER"} \
   "${expect[@]}") 2>&1 | tr -d '\r' | tee "$BUILD/directml-diff.log"
rc=${PIPESTATUS[0]}
set -e
/usr/lib/wine/wineserver -k 2>/dev/null || true
# Exit 2: a usage or setup error, no tables written this run.
[[ $rc == 2 ]] && exit 2
python3 "$ROOT/deploy/windows/directml_classify.py" "$BUILD/directml-diff.md" \
  >"$BUILD/directml-classified.md"
echo "== $(( $(date +%s) - t0 )) s; tables in $BUILD/directml-diff.md, classified in" \
  "$BUILD/directml-classified.md"
exit "$rc"
