#!/usr/bin/env python3
"""Classifies the rows of directml_diff's tables (deploy/windows/directml-diff.sh)
for docs/DIRECTML.md: each disagreement gets a class and the side that
OPERATORS.md's text supports, each refusal the DirectML rule it hit.

  python3 deploy/windows/directml_classify.py build-win/directml-diff.md > out.md

The rules below are heuristics over the case id, the input element and the
two values; a row none of them explains is "unexplained" (and says so).
"""
import collections
import re
import sys

INT_TYPES = {"INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16", "UINT32", "UINT64"}
TYPES = INT_TYPES | {"FLOAT16", "FLOAT32"}

# class -> (OPERATORS.md section, the side its text supports, why)
CLASSES = {
    "fp16-overflow": ("§7.2", "ours",
                      "a FLOAT16 result beyond the range: ours ±inf (RNE, 65520 and above), "
                      "DirectML ±65504 (saturated)"),
    "nan-minmax": ("§7.3", "ours",
                   "a NaN input element through min/max: ours minNum/maxNum, DirectML "
                   "propagates NaN through the first max or compares differently"),
    "inf-input": ("§7.4 [P]", "ours",
                  "an infinite input, or one whose intermediate overflows: ours the limit "
                  "(SOFTSIGN ±1, GELU(-inf) 0, SCALED_TANH(±3.4e38) ±Alpha, ...), "
                  "DirectML NaN (inf/inf, inf*0)"),
    "mvn-nan": ("§4.3, §7.4, §7.6 [P]", "ours",
                "MVN/MVN1 where DirectML gives NaN: overflowing products with ±inf "
                "bias/scale, a zero variance with Epsilon 0, size-1 axes"),
    "mvn-precision": ("§7.6 [P], §8", "ours",
                      "MVN/MVN1 mean and variance: DirectML loses the small deviations of "
                      "large-offset, huge or tiny inputs, and gives a nonzero variance to broadcast "
                      "constants (inferred from the inputs, not proven per case)"),
    "int-scalebias": ("§4.1 [P]", "ours",
                      "integer THRESHOLD/CLIP with ScaleBias: DirectML evaluates x*Scale+Bias "
                      "in float32 (the result is a float32 value), ours in double"),
    "int-shrink": ("§5 [P]", "ours",
                   "integer SHRINK: DirectML computes in float and truncates (Bias/Threshold "
                   "not converted to the type first; INT32 loses precision)"),
    "clip-min-gt-max": ("§6.1", "ours",
                        "CLIP with Min > Max: the documented formula min(Max, max(Min, x)) "
                        "gives Max; DirectML gives Min"),
    "fp16-threshold": ("§4.1, §6.1", "ours",
                       "FLOAT16 THRESHOLD: DirectML converts Min to binary16 toward zero, "
                       "ours to nearest even (the casting the CLIP page documents); every "
                       "such row is an element where the result is Min"),
    "denormal": ("§7.5 [P]", "ours",
                 "a float32 denormal input or parameter: beyond both the exact and the "
                 "flushed-input expectation"),
    "transcendental": ("§7.4 [P], §8", "ours",
                       "FLOAT32 activation beyond the §8 budget (e.g. CELU/ELU with large "
                       "Alpha: exp(x/Alpha)-1 without expm1 cancels)"),
    "extreme-parameters": ("§7.1, §8", "ours",
                           "an activation with a parameter of magnitude >= 1e3 or <= 1e-3 "
                           "(Alpha, Gamma, Beta): DirectML's float32 evaluation loses the "
                           "result; ours is the binary64 value rounded once"),
    "unexplained": ("-", "undecided",
                    "not explained by the rules above; may be DirectML on this stack "
                    "(vkd3d + lavapipe) or our binding: to investigate"),
}


def parse_value(s):
    try:
        return float(s)
    except ValueError:
        return None


def case_parts(cid):
    parts = cid.split("/")
    if parts[0] == "random":
        parts = parts[2:]
    op = parts[0]
    dtype = next((p for p in parts if p in TYPES), "?")
    return op, dtype


def attribute(detail, name):
    m = re.search(r"(?:^|\s)" + name + r" (\S+)", detail.split("; attributes", 1)[-1])
    return parse_value(m.group(1)) if m else None


def classify(cid, inp, ours, theirs, detail):
    op, dtype = case_parts(cid)
    o, t, x = parse_value(ours), parse_value(theirs), parse_value(inp)
    lo, hi = attribute(detail, "min"), attribute(detail, "max")
    if dtype == "FLOAT16" and theirs in ("65504", "-65504") and ours in ("inf", "-inf"):
        return "fp16-overflow"
    if dtype == "FLOAT16" and t is not None and abs(t) == 65504 and o is not None and abs(o) != 65504:
        return "fp16-overflow"
    if op == "threshold" and dtype == "FLOAT16":
        return "fp16-threshold"
    if "nan" in inp:
        return "nan-minmax"
    if dtype in INT_TYPES:
        return "int-shrink" if op == "shrink" else "int-scalebias"
    if "min_gt_max" in cid or (op == "clip" and lo is not None and hi is not None and lo > hi):
        return "clip-min-gt-max"
    if op in ("mvn", "mvn1"):
        return "mvn-nan" if "nan" in theirs else "mvn-precision"
    if inp in ("inf", "-inf"):
        return "inf-input"
    if "nan" in theirs and "nan" not in ours:
        # an intermediate that overflows (SCALED_TANH of 3.4e38) is the same
        # §7.4 rule as an infinite input
        return "inf-input" if x is not None and abs(x) > 1e30 else "unexplained"
    if x is not None and x != 0 and abs(x) < 1.1754944e-38:
        return "denormal"
    params = [attribute(detail, n) for n in ("p0", "p1", "scale", "bias", "min", "max")]
    if any(p is not None and p != 0 and 0 < abs(p) < 1.1754944e-38 for p in params):
        return "denormal"
    if op not in ("clip", "threshold") and any(
            p is not None and p != 0 and (abs(p) >= 1e3 or abs(p) <= 1e-3) for p in params[:2]):
        return "extreme-parameters"
    if dtype == "FLOAT32" and o is not None and t is not None and abs(t - o) <= 1e-2 * abs(o):
        return "transcendental"
    return "unexplained"


def main():
    rows = [l.rstrip("\n") for l in open(sys.argv[1]) if l.startswith("| ")]
    table_rows = [r for r in rows if r.split("|")[2].strip() in ("disagree", "refused", "failed")]
    counts = collections.Counter()
    refusals = collections.Counter()
    out = []
    for r in table_rows:
        f = [c.strip() for c in r.split("|")[1:-1]]
        cid, kind = f[0], f[1]
        if kind == "disagree":
            c = classify(cid, f[3], f[4], f[5], f[8])
            counts[c] += 1
            out.append(f"| {cid} | {f[2]} | {f[3]} | {f[4]} | {f[5]} | {c} | {CLASSES[c][1]} |")
        elif kind == "refused":
            al = [int(a) for a in re.findall(r"alignment (\d+)", r)]
            refusals["GuaranteedBaseOffsetAlignment nonzero and < 16" if any(a < 16 for a in al)
                     else "other"] += 1
        else:
            refusals["failed: device removed"] += 1
    print("| class | cases | OPERATORS.md | supported by | what differs |")
    print("|---|---|---|---|---|")
    for c, n in counts.most_common():
        sec, side, why = CLASSES[c]
        print(f"| {c} | {n} | {sec} | {side} | {why} |")
    print()
    print("| refusal / failure | cases |")
    print("|---|---|")
    for k, n in refusals.most_common():
        print(f"| {k} | {n} |")
    print()
    print("| case | element | input | ours | DirectML | class | OPERATORS.md supports |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(out))


if __name__ == "__main__":
    main()
