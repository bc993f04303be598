#!/usr/bin/env python3
"""The module layering of engine/ and the size of source files, as a test.

Checks, over the tracked tree (run from anywhere; the repository root is
two folders up):
  1. engine/: a module includes only the modules below it (ALLOWED); test
     files (*_test.cc, testing/) may also include the modules in
     TEST_EXTRA, for oracles and harnesses.
  2. engine/: no two files include each other, counting a .h, its .cc and
     its private foo_internal.h as one unit, the way a reader follows a
     dependency.
  3. engine/, server/, client/, bench/: no non-test source file is longer
     than MAX_LINES, except those in OVERSIZED (each with the reason it is
     still there; the list may only shrink).
Exits 1 and prints every violation; prints a one-line summary otherwise.
"""
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MAX_LINES = 800

# module -> the engine modules it may include (besides itself).
ALLOWED = {
    "core": set(),
    "ops": {"core"},
    "dxbc": set(),
    "kernels": {"core", "ops", "dxbc"},
    "plan": {"core", "ops", "kernels"},
    "sched": {"core", "ops"},
    "store": {"core", "ops"},
    "cpu": {"core", "ops", "sched"},
    "d3d12": {"core", "ops", "sched", "kernels", "plan"},
    "directml": {"core", "ops", "sched", "d3d12"},
}
# Test files of a module may also include these (oracles, harnesses).
TEST_EXTRA = {
    "d3d12": {"cpu", "dxbc"},
    "directml": {"cpu"},
    "kernels": {"cpu"},
    "plan": {"cpu"},
    "store": {"cpu"},
}
# Files still over MAX_LINES, with why; remove an entry once it is split.
OVERSIZED = {}  # empty: keep it so

INCLUDE = re.compile(r'^#include "([^"]+)"', re.M)
SOURCE = (".h", ".cc")


def is_test(path):
    return path.endswith("_test.cc") or "/testing/" in path or path.endswith("_test_util.h")


def sources(top):
    for root, dirs, files in os.walk(os.path.join(ROOT, top)):
        dirs[:] = [d for d in dirs if d != "testdata"]
        for f in files:
            if f.endswith(SOURCE):
                yield os.path.relpath(os.path.join(root, f), ROOT)


def unit(path):
    # foo.h, foo.cc and foo's private header foo_internal.h are one unit.
    stem = os.path.splitext(path)[0]
    return stem[: -len("_internal")] if stem.endswith("_internal") else stem


def main():
    problems = []
    edges = {}  # unit -> units it includes (engine/ only)
    engine_files = sorted(sources("engine"))
    for path in engine_files:
        module = path.split("/")[1]
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            includes = INCLUDE.findall(f.read())
        allowed = ALLOWED.get(module)
        if allowed is None:
            problems.append(f"{path}: module engine/{module} is not in ALLOWED")
            continue
        if is_test(path):
            allowed = allowed | TEST_EXTRA.get(module, set())
        for inc in includes:
            if not inc.startswith("engine/"):
                continue
            target = inc.split("/")[1]
            if target != module and target not in allowed:
                problems.append(f"{path}: engine/{module} includes {inc} (engine/{target} is not below it)")
            edges.setdefault(unit(path), set()).add(unit(inc))
    for a, targets in sorted(edges.items()):
        for b in sorted(targets):
            if a < b and a in edges.get(b, set()):
                problems.append(f"{a} and {b} include each other")

    checked = 0
    for top in ("engine", "server", "client", "bench"):
        for path in sources(top):
            if is_test(path):
                continue
            checked += 1
            with open(os.path.join(ROOT, path), encoding="utf-8") as f:
                n = sum(1 for _ in f)
            if n > MAX_LINES and path not in OVERSIZED:
                problems.append(f"{path}: {n} lines (at most {MAX_LINES})")
            if n <= MAX_LINES and path in OVERSIZED:
                problems.append(f"{path}: {n} lines now; remove it from OVERSIZED")
    for path in OVERSIZED:
        if not os.path.exists(os.path.join(ROOT, path)):
            problems.append(f"{path}: in OVERSIZED but gone; remove it")

    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} layering problem(s)")
        return 1
    print(f"layering ok: {len(engine_files)} engine files, {checked} sources within {MAX_LINES} lines "
          f"({len(OVERSIZED)} listed as oversized)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
