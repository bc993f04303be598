#!/usr/bin/env python3
"""PyTorch anchors for dmls_bench, measured on the same GPU in the same run.

    python3 bench/torch_anchors.py [--elements 134217728] [--rows 512 --cols 262143]

Times, with CUDA events (median of --iters runs after --warmup runs), a
device-to-device copy, CELU, clamp_min (THRESHOLD), sigmoid and GELU over
--elements values, and layer_norm over rows x cols (the MVN1 bar; also
with a weight and bias per column, the bar of dmls_bench's mvn1_affine), in
--dtype (float32, or float16). GB/s counts one read and one write of the tensor. Prints a table; with
--json FILE also writes the figures. Needs torch with CUDA (present on the
H200 machine; not a dependency of dmlserve itself).
"""
import argparse
import json
import statistics

import torch


def time_op(fn, iters, warmup):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e-3)  # seconds
    return statistics.median(times)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--elements", type=int, default=128 * 1024 * 1024)
    p.add_argument("--rows", type=int, default=512)
    p.add_argument("--cols", type=int, default=262143)
    p.add_argument("--iters", type=int, default=50)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--json")
    p.add_argument("--dtype", choices=("float32", "float16"), default="float32")
    a = p.parse_args()
    dev = torch.device("cuda")
    dtype = getattr(torch, a.dtype)
    size = torch.tensor([], dtype=dtype).element_size()
    x = torch.randn(a.elements, device=dev, dtype=dtype)
    y = torch.empty_like(x)
    nbytes = 2 * x.numel() * size
    rows = []

    def add(name, shape, fn, bytes_moved):
        t = time_op(fn, a.iters, a.warmup)
        rows.append({"op": name, "shape": shape, "ms": t * 1e3,
                     "GBps": bytes_moved / t / 1e9})

    add("copy", str(a.elements), lambda: y.copy_(x), nbytes)
    add("celu", str(a.elements),
        lambda: torch.nn.functional.celu(x, alpha=1.0), nbytes)
    add("threshold(clamp_min)", str(a.elements),
        lambda: torch.clamp_min(x, 0.5), nbytes)
    add("sigmoid", str(a.elements), lambda: torch.sigmoid(x), nbytes)
    add("gelu", str(a.elements), lambda: torch.nn.functional.gelu(x), nbytes)
    del x, y
    torch.cuda.empty_cache()
    m = torch.randn(a.rows, a.cols, device=dev, dtype=dtype)
    add("layer_norm", f"{a.rows}x{a.cols}",
        lambda: torch.nn.functional.layer_norm(m, (a.cols,), eps=1e-5),
        2 * m.numel() * size)
    w = torch.rand(a.cols, device=dev, dtype=dtype) + 0.5
    b = torch.rand(a.cols, device=dev, dtype=dtype) * 2 - 1
    add("layer_norm_affine", f"{a.rows}x{a.cols}",
        lambda: torch.nn.functional.layer_norm(m, (a.cols,), weight=w, bias=b,
                                               eps=1e-5),
        2 * m.numel() * size)
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}, {a.dtype}")
    print(f"{'op':22} {'shape':>14} {'ms':>9} {'GB/s':>9}")
    for r in rows:
        print(f"{r['op']:22} {r['shape']:>14} {r['ms']:9.3f} {r['GBps']:9.1f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "rows": rows}, f,
                      indent=1)


if __name__ == "__main__":
    main()
