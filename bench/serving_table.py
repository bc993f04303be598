"""The side-by-side table of bench/serving.sh.

    serving_table.py OUT_DIR "LABEL LABEL..." POINT...

reads OUT_DIR/<bytes>_c<concurrency>_<label>.json (dmls_load --json) or
.ghz.json (ghz --format=json), and .cpu (the server's CPU ticks over the
window and the clock rate) for each point BYTES:CONCURRENCY and each server
label (the first is the anchor the ratios divide by) and prints a Markdown
table, one row per point and server: successful requests/s, p99 latency,
the server's CPU time per answered request, and two ratios to the anchor:
of requests/s, and per core (the anchor's CPU per request / this server's).
A point with errors shows them; a missing report shows "-".
"""

import json
import os
import sys


def load(out, bytes_, conc, label):
    """(ok per second, p99 ms, errors, bytes in per second, calls answered
    in the window) or None."""
    base = os.path.join(out, "%s_c%s_%s" % (bytes_, conc, label))
    if os.path.exists(base + ".json"):
        with open(base + ".json") as f:
            r = json.load(f)
        return (r["ok_per_s"], r["latency_ms"]["p99"], r["errors"],
                r["bytes_in_per_s"], r["requests"])
    if os.path.exists(base + ".ghz.json"):
        with open(base + ".ghz.json") as f:
            r = json.load(f)
        codes = r.get("statusCodeDistribution") or {}
        ok = codes.get("OK", 0)
        errors = sum(n for code, n in codes.items() if code != "OK")
        seconds = r["total"] / 1e9 if r.get("total") else 0
        p99 = next((d["latency"] / 1e6 for d in r.get("latencyDistribution") or []
                    if d["percentage"] == 99), float("nan"))
        return (ok / seconds if seconds else 0.0, p99, errors, None,
                ok + errors)
    return None


def cpu_us(out, bytes_, conc, label, result):
    """Server CPU microseconds per answered request, or None."""
    path = os.path.join(out, "%s_c%s_%s.cpu" % (bytes_, conc, label))
    if result is None or not os.path.exists(path):
        return None
    with open(path) as f:
        ticks, hz = (float(x) for x in f.read().split())
    answered = result[4]
    if not answered:
        return None
    return ticks / hz * 1e6 / answered


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    out, labels = sys.argv[1], sys.argv[2].split()
    anchor = labels[0]
    rows = [("point", "server", "ok/s", "p99 ms", "CPU us/req",
             "ok/s / %s" % anchor, "per core / %s" % anchor)]
    for point in sys.argv[3:]:
        bytes_, conc = point.split(":")
        base = load(out, bytes_, conc, anchor)
        base_cpu = cpu_us(out, bytes_, conc, anchor, base)
        for label in labels:
            r = load(out, bytes_, conc, label)
            cpu = cpu_us(out, bytes_, conc, label, r)
            if r is None:
                rows.append(("%s c=%s" % (bytes_, conc), label, "-", "-", "-", "-", "-"))
                continue
            ok = "%.0f" % r[0] + (" (%d errors)" % r[2] if r[2] else "")
            ratio = "%.2f" % (r[0] / base[0]) if base and base[0] > 0 else "-"
            per_core = "%.2f" % (base_cpu / cpu) if base_cpu and cpu else "-"
            rows.append(("%s c=%s" % (bytes_, conc), label, ok, "%.2f" % r[1],
                         "%.1f" % cpu if cpu else "-", ratio, per_core))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for n, row in enumerate(rows):
        print("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |")
        if n == 0:
            print("|" + "|".join("-" * (w + 2) for w in widths) + "|")


if __name__ == "__main__":
    main()
