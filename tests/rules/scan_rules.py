#!/usr/bin/env python3
"""The rule ids the source emits, found by reading it: {id: set of gRPC
code names}. Used by check_rule_table.py; run alone it prints them."""
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ID = r'"([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)"'
# (pattern, code or None when the pattern captures it first)
PATTERNS = [
    # ops::RuleStatus(absl::StatusCode::kX, "ID", ...), RequestError::Rule(...)
    (re.compile(r'\b(?:RuleStatus|Rule)\(\s*absl::StatusCode::k(\w+),\s*' + ID),
     None),
    # The validator's Add("ID", field, message) and its parameter-rule
    # table {OperatorType::kX, slot, "ID", &Check}.
    (re.compile(r'\bAdd\(\s*(?:fused \? "FUSED_PARAM_INVALID" : rule\.rule|'
                + ID + ')'), "InvalidArgument"),
    (re.compile(r'\{OperatorType::k\w+, \d+, ' + ID), "InvalidArgument"),
    (re.compile(r'\bAdd\(\s*fused \? ' + ID), "InvalidArgument"),
    # ChunkCursor::Error / ChunkError("ID", ...): INVALID_ARGUMENT.
    (re.compile(r'\b(?:Chunk)?Error\(\s*' + ID), "InvalidArgument"),
    # absl::XError("ID: message"), absl::XError(absl::StrCat("ID: ...
    (re.compile(r'absl::(\w+)Error\(\s*(?:absl::StrCat\(\s*)?'
                r'"([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+):'), None),
    # Named constants: constexpr char kSomething[] = "ID"
    (re.compile(r'constexpr char k\w+\[\] = ' + ID), "InvalidArgument"),
    # Admission's violations, add("ID", ...) and {"ID", path, message};
    # the KServe mapping's Invalid("ID", ...) and ParameterError("ID", ...).
    (re.compile(r'\b(?:add|Invalid|ParameterError)\(\s*' + ID),
     "InvalidArgument"),
    (re.compile(r'found\.push_back\(\{\s*' + ID), "InvalidArgument"),
]


def scan(top_dirs=("engine", "server")):
    found = {}
    for top in top_dirs:
        for root, dirs, files in os.walk(os.path.join(ROOT, top)):
            dirs[:] = [d for d in dirs if d not in ("testdata", "testing")]
            for name in files:
                if not name.endswith((".cc", ".h")) or name.endswith("_test.cc"):
                    continue
                with open(os.path.join(root, name)) as f:
                    text = f.read()
                for pattern, code in PATTERNS:
                    for m in pattern.finditer(text):
                        groups = [g for g in m.groups() if g]
                        if not groups:
                            continue
                        if code is None:
                            rule_code, rule = groups[0], groups[1]
                        else:
                            rule_code, rule = code, groups[-1]
                        found.setdefault(rule, set()).add(rule_code)
    return found


if __name__ == "__main__":
    for rule, codes in sorted(scan().items()):
        print(rule, " ".join(sorted(codes)))
    sys.exit(0)
