"""The side-by-side table of bench/serving.sh.

    serving_table.py OUT_DIR ANCHOR_LABEL SERVER_LABEL POINT...

reads OUT_DIR/<bytes>_c<concurrency>_<label>.json (dmls_load --json) or
.ghz.json (ghz --format=json) for each point BYTES:CONCURRENCY and prints a
Markdown table: successful requests/s and p99 latency of the anchor and of
the server, and the server's share of the anchor's rate. A point with
errors shows them; a missing report shows "-".
"""

import json
import os
import sys


def load(out, bytes_, conc, label):
    """(ok per second, p99 ms, errors, bytes in per second) or None."""
    base = os.path.join(out, "%s_c%s_%s" % (bytes_, conc, label))
    if os.path.exists(base + ".json"):
        with open(base + ".json") as f:
            r = json.load(f)
        return (r["ok_per_s"], r["latency_ms"]["p99"], r["errors"],
                r["bytes_in_per_s"])
    if os.path.exists(base + ".ghz.json"):
        with open(base + ".ghz.json") as f:
            r = json.load(f)
        codes = r.get("statusCodeDistribution") or {}
        ok = codes.get("OK", 0)
        errors = sum(n for code, n in codes.items() if code != "OK")
        seconds = r["total"] / 1e9 if r.get("total") else 0
        p99 = next((d["latency"] / 1e6 for d in r.get("latencyDistribution") or []
                    if d["percentage"] == 99), float("nan"))
        return (ok / seconds if seconds else 0.0, p99, errors, None)
    return None


def cell(result):
    if result is None:
        return "-"
    ok_per_s, p99, errors, _ = result
    text = "%.0f (%.2f ms)" % (ok_per_s, p99)
    if errors:
        text += " %d errors" % errors
    return text


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    out, anchor, server = sys.argv[1:4]
    rows = [("point", "%s ok/s (p99)" % anchor, "%s ok/s (p99)" % server,
             "%s/%s" % (server, anchor))]
    for point in sys.argv[4:]:
        bytes_, conc = point.split(":")
        a = load(out, bytes_, conc, anchor)
        s = load(out, bytes_, conc, server)
        ratio = "-"
        if a and s and a[0] > 0:
            ratio = "%.2f" % (s[0] / a[0])
        rows.append(("%s c=%s" % (bytes_, conc), cell(a), cell(s), ratio))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    for n, row in enumerate(rows):
        print("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |")
        if n == 0:
            print("|" + "|".join("-" * (w + 2) for w in widths) + "|")


if __name__ == "__main__":
    main()
