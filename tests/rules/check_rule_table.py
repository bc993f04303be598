#!/usr/bin/env python3
"""ctest rules_table_complete: every rule id the source of engine/ and
server/ emits (scan_rules.py) is listed in docs/RULES.md (generated from
engine/ops/rule_table.cc) with the gRPC code it is emitted with, and the
table lists no id the source does not emit. Exits 1 with the differences."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scan_rules  # noqa: E402

# absl code names (as scan_rules captures them) -> gRPC names in the table.
GRPC = {"InvalidArgument": "INVALID_ARGUMENT",
        "ResourceExhausted": "RESOURCE_EXHAUSTED", "NotFound": "NOT_FOUND",
        "Unauthenticated": "UNAUTHENTICATED",
        "PermissionDenied": "PERMISSION_DENIED"}
ROW = re.compile(r"^\| `([A-Z0-9_]+)` \|.*\| ([A-Z_]+) \|$", re.M)


def main():
    with open(os.path.join(scan_rules.ROOT, "docs", "RULES.md")) as f:
        table = dict(ROW.findall(f.read()))
    emitted = scan_rules.scan()
    problems = []
    for rule, codes in sorted(emitted.items()):
        if rule not in table:
            problems.append("%s is emitted but not in the rule table" % rule)
            continue
        for code in sorted(codes):
            if GRPC.get(code, code) != table[rule]:
                problems.append("%s is emitted with %s, the table says %s"
                                % (rule, GRPC.get(code, code), table[rule]))
    for rule in sorted(set(table) - set(emitted)):
        problems.append("%s is in the rule table but nothing emits it" % rule)
    for p in problems:
        print(p)
    if not problems:
        print("%d rules, all listed with their codes" % len(table))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
