#!/usr/bin/env bash
# Runs clang's thread-safety analysis over every translation unit of a CMake
# build's compile_commands.json: the ABSL_GUARDED_BY / ABSL_*_LOCKS_REQUIRED
# annotations that GCC ignores are checked here (engine/core/mutex.h says
# what they mean and why the project's Mutex is the type they name).
#
#   deploy/check-thread-safety.sh            # uses build/compile_commands.json
#   deploy/check-thread-safety.sh build-tsan # another build directory
#   deploy/check-thread-safety.sh build 'engine/sched/'  # only TUs whose
#                                            # path matches this regex
#   JOBS=1 CLANGXX=clang++-14 deploy/check-thread-safety.sh
#   SHARD=1/3 deploy/check-thread-safety.sh  # every third TU, from the
#                                            # second (0-based shard 1 of 3)
#
# The build directory must have been configured with
# -DCMAKE_EXPORT_COMPILE_COMMANDS=ON (and built, for the generated protobuf
# sources). Each TU is parsed with -fsyntax-only (nothing is written) and
# only the thread-safety warnings, as errors: -Wno-everything, then
# -Wthread-safety -Wthread-safety-beta and -Werror= of both (clang's other
# warnings are not this script's business; -beta adds no noise on this
# tree with clang 14). The GCC command lines are adapted: the compiler is
# replaced, -o/-c/-M* dropped, GCC's -W flags dropped (clang does not know
# some of them), a few GCC-only code generation flags dropped (DROP
# below), and -std=gnu++17 added where GCC relied on its default (clang 14
# defaults to C++14). JOBS parallel clang processes (default 2), through
# xargs -P.
#
# A TU is parsed only when it can hold something to check: its source or a
# project header it includes (the object's GCC dependency file, N.o.d, from
# the build) names a mutex, a scoped lock or a thread-safety annotation
# (MENTIONS below). The analysis warns only where annotated capabilities are
# used, and project code reaches them only through those names, so a TU
# whose project files name none of them cannot fail; skipping them halves
# the time. A TU without its dependency file (not built yet) is parsed.
# ALL=1 parses every TU.
#
# Prints each TU that fails with its diagnostics, then the number of TUs
# checked, how many failed and the time taken. Exits 1 when any TU fails,
# 2 on a usage error. Installs nothing: when clang++ is missing it says so
# (Debian: apt-get install -y clang).
set -u -o pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${1:-build}"
FILTER="${2:-}"
[[ "$BUILD" = /* ]] || BUILD="$ROOT/$BUILD"
DB="$BUILD/compile_commands.json"
JOBS="${JOBS:-2}"
SHARD="${SHARD:-0/1}"
if [[ ! "$SHARD" =~ ^[0-9]+/[1-9][0-9]*$ ]] || (( ${SHARD%/*} >= ${SHARD#*/} )); then
  echo "check-thread-safety: SHARD must be I/N with 0 <= I < N, not '$SHARD'" >&2
  exit 2
fi
CLANGXX="${CLANGXX:-}"
if [[ -z "$CLANGXX" ]]; then
  for c in clang++ clang++-14; do
    if command -v "$c" >/dev/null 2>&1; then CLANGXX="$c"; break; fi
  done
fi
if [[ -z "$CLANGXX" ]] || ! command -v "$CLANGXX" >/dev/null 2>&1; then
  echo "check-thread-safety: no clang++ found (apt-get install -y clang, or set CLANGXX)" >&2
  exit 2
fi
if [[ ! -f "$DB" ]]; then
  echo "check-thread-safety: $DB not found (configure with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)" >&2
  exit 2
fi

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
start=$(date +%s.%N)

# One script per TU under $WORK/tu/, named by its position in the database.
python3 - "$DB" "$WORK/tu" "$CLANGXX" "$FILTER" "$SHARD" "$ROOT" "${ALL:-0}" "$BUILD" <<'EOF' || exit 2
import json, os, re, shlex, sys

db, out, clangxx, only, shard, root, check_all, build_dir = sys.argv[1:9]
MENTIONS = re.compile(
    r"\bMutex\b|MutexLock|GUARDED_BY|LOCKS_REQUIRED|LOCKS_EXCLUDED|LOCK_RETURNED"
    r"|EXCLUSIVE_LOCK|SHARED_LOCK|EXCLUSIVE_TRYLOCK|SHARED_TRYLOCK|ABSL_ACQUIRE"
    r"|ABSL_RELEASE|ASSERT_EXCLUSIVE|ASSERT_SHARED|SCOPED_LOCKABLE|ABSL_LOCKABLE"
    r"|NO_THREAD_SAFETY_ANALYSIS|ABSL_CAPABILITY")
mentions = {}
real = {}
TOP = os.path.realpath(root) + "/"
BUILD_DIR = os.path.realpath(build_dir) + "/"

def resolved(directory, path):
    key = (directory, path)
    if key not in real:
        real[key] = os.path.realpath(os.path.join(directory, path))
    return real[key]

def names_a_lock(path):
    if path not in mentions:
        try:
            with open(path, errors="replace") as f:
                mentions[path] = bool(MENTIONS.search(f.read()))
        except OSError:
            mentions[path] = True
    return mentions[path]

def needs_check(entry, args):
    """False only when the TU's dependency file lists no project file naming a lock."""
    if check_all == "1" or "-o" not in args:
        return True
    dep = os.path.join(entry["directory"], args[args.index("-o") + 1] + ".d")
    try:
        with open(dep) as f:
            files = f.read().replace("\\\n", " ").split(":", 1)[1].split()
    except (OSError, IndexError):
        return True
    # Both sides resolved (TOP, BUILD_DIR): a checkout reached through a
    # link, or a build inside the source tree, must not make every file
    # look foreign.
    project = []
    for p in files:
        p = resolved(entry["directory"], p)
        if p.startswith(TOP) and (BUILD_DIR == TOP or not p.startswith(BUILD_DIR)):
            project.append(p)
    # The TU's own source must be among them; if not, the paths are not
    # what this function expects: parse it.
    if resolved(entry["directory"], entry["file"]) not in project:
        return True
    return any(names_a_lock(p) for p in project)

skipped = 0
shard_index, shard_count = map(int, shard.split("/"))
os.makedirs(out)
# GCC flags clang rejects or warns about; GCC warning flags go wholesale.
DROP = {"-fno-semantic-interposition", "-fstack-clash-protection",
        "-fconserve-stack", "-fno-var-tracking-assignments"}
ANALYSIS = ["-fsyntax-only", "-Wno-everything", "-Wthread-safety",
            "-Wthread-safety-beta", "-Werror=thread-safety",
            "-Werror=thread-safety-beta"]
for n, entry in enumerate(json.load(open(db))):
    args = entry.get("arguments") or shlex.split(entry["command"])
    path = entry["file"]
    if only and not re.search(only, path):
        continue
    if n % shard_count != shard_index:
        continue
    if not needs_check(entry, args):
        skipped += 1
        continue
    cxx = not path.endswith(".c")
    cmd = [clangxx if cxx else "clang"]
    has_std = False
    skip = False
    for a in args[1:]:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if a in ("-c", "-MD", "-MMD") or a in DROP:
            continue
        if a.startswith("-W") and not a.startswith("-Wl,") and not a.startswith("-Wp,"):
            continue
        if a.startswith("-std="):
            has_std = True
        cmd.append(a)
    if cxx and not has_std:
        cmd.insert(1, "-std=gnu++17")
    cmd += ANALYSIS
    with open(os.path.join(out, "%04d.sh" % n), "w") as f:
        f.write("cd %s || exit 2\n" % shlex.quote(entry["directory"]))
        f.write("# file: %s\n" % path)
        f.write("exec %s\n" % shlex.join(cmd))
with open(os.path.join(out, "skipped"), "w") as f:
    f.write("%d\n" % skipped)
EOF

total=$(find "$WORK/tu" -name '*.sh' | wc -l)
skipped=$(cat "$WORK/tu/skipped")
if [[ $total -eq 0 && ( "$SHARD" != 0/1 || $skipped -gt 0 ) ]]; then
  echo "check-thread-safety: no translation unit to check in shard $SHARD${FILTER:+ of those matching '$FILTER'} ($skipped name no lock)"
  exit 0
fi
if [[ $total -eq 0 ]]; then
  echo "check-thread-safety: no translation unit in $DB${FILTER:+ matches '$FILTER'}" >&2
  exit 2
fi
echo "check-thread-safety: $total translation units (shard $SHARD; $skipped name no lock and are skipped), $CLANGXX, $JOBS jobs"
# Each job leaves its output in N.log and, when clang fails, N.fail.
find "$WORK/tu" -name '*.sh' -print0 | sort -z |
  xargs -0 -r -P "$JOBS" -n 1 sh -c 'bash "$1" > "${1%.sh}.log" 2>&1 || : > "${1%.sh}.fail"' sh

failed=0
for f in "$WORK"/tu/*.fail; do
  [[ -e "$f" ]] || continue
  failed=$((failed + 1))
  script="${f%.fail}.sh"
  file=$(sed -n 's/^# file: //p' "$script")
  echo "FAIL ${file#$ROOT/}"
  cat "${f%.fail}.log"
done
end=$(date +%s.%N)
secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.0f", b - a }')
echo "check-thread-safety: $total TUs checked, $skipped skipped, $failed failed, ${secs} s"
[[ $failed -eq 0 ]]
