#!/usr/bin/python3
"""Runnable example of the dmlserve Python client.

    venv/bin/python client/python/example.py --server 127.0.0.1:50051

Runs CELU, THRESHOLD and MVN1 with a fused activation for FLOAT32 and
FLOAT16 inputs, checks each result against a NumPy reference computed here,
prints the results, then shows a rule-breaking request being rejected with
INVALID_ARGUMENT naming the rule and the field. Exit status 0 when every
result matched.

Needs the dmlserve package: pip-installed (client/README.md), or found
beside this file when run from the source tree.
"""

import argparse
import os
import sys


def celu_ref(x, alpha):
    x = x.astype(np.float64)
    a = np.float64(np.float32(alpha))
    return np.maximum(0, x) + np.minimum(0, a * np.expm1(x / a))


def threshold_ref(x, min_value, scale, bias):
    g = x.astype(np.float64) * np.float64(np.float32(scale)) + \
        np.float64(np.float32(bias))
    return np.maximum(g, np.float64(np.float32(min_value)))


def mvn1_relu_ref(x, axes, scale, bias, eps):
    x = x.astype(np.float64)
    mean = x.mean(axis=tuple(axes), keepdims=True)
    var = ((x - mean) ** 2).mean(axis=tuple(axes), keepdims=True)
    y = (x - mean) / np.sqrt(var + np.float64(np.float32(eps)))
    y = y * scale.astype(np.float64) + bias.astype(np.float64)
    return np.maximum(y, 0)


def close(actual, expected, dtype, atol, rtol):
    expected = expected.astype(dtype).astype(np.float64)
    actual = actual.astype(np.float64)
    return actual.shape == expected.shape and bool(
        np.all(np.abs(actual - expected) <= atol + rtol * np.abs(expected)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", default="127.0.0.1:50051")
    parser.add_argument("--timeout", type=float, default=30.0)
    args = parser.parse_args()
    sys.path.append(os.path.dirname(os.path.abspath(__file__)))

    global np
    import numpy as np
    import dmlserve as dc

    # Tolerances of OPERATORS.md section 8 (atol/rtol parts), widened to the
    # FLOAT16 ones for FLOAT16 tensors.
    tol = {np.float32: {"celu": (1e-6, 4e-6), "threshold": (1e-6, 1e-6),
                        "mvn1": (1e-4, 1e-4)},
           np.float16: {"celu": (2e-3, 2e-3), "threshold": (1e-3, 1e-3),
                        "mvn1": (3e-3, 4e-3)}}
    rng = np.random.default_rng(7)
    ok = True
    with dc.DmlClient(args.server, timeout=args.timeout) as client:
        caps = client.capabilities()
        print("server %s on %s (%s), highest feature level 0x%x" % (
            caps.server_version, caps.device_name, caps.device_kind,
            caps.highest_feature_level))
        for dtype in (np.float32, np.float16):
            name = np.dtype(dtype).name
            x = rng.uniform(-3, 3, size=(2, 3, 4)).astype(dtype)

            y = client.execute_celu(x, alpha=1.5)
            good = close(y, celu_ref(x, 1.5), dtype, *tol[dtype]["celu"])
            ok &= good
            print("CELU %s alpha=1.5: %s\n%s" % (name, "ok" if good else
                                                 "MISMATCH", y[0]))

            y = client.execute_threshold(x, min=-0.5, scale_bias=(2.0, 0.25))
            good = close(y, threshold_ref(x, -0.5, 2.0, 0.25), dtype,
                         *tol[dtype]["threshold"])
            ok &= good
            print("THRESHOLD %s min=-0.5 scale=2 bias=0.25: %s\n%s" % (
                name, "ok" if good else "MISMATCH", y[0]))

            x4 = rng.uniform(-3, 3, size=(2, 3, 4, 5)).astype(dtype)
            scale = rng.uniform(0.5, 2, size=(1, 3, 1, 1)).astype(dtype)
            bias = rng.uniform(-1, 1, size=(1, 3, 1, 1)).astype(dtype)
            y = client.execute_mvn1(x4, axes=[2, 3], scale=scale, bias=bias,
                                    epsilon=1e-5, fused="relu")
            good = close(y, mvn1_relu_ref(x4, [2, 3], scale, bias, 1e-5),
                         dtype, *tol[dtype]["mvn1"])
            ok &= good
            print("MVN1 %s axes=[2,3] + fused RELU: %s\n%s" % (
                name, "ok" if good else "MISMATCH", y[0, 0]))

        # A rule-breaking request: duplicate MVN1 axes.
        try:
            client.execute_mvn1(np.zeros((1, 2, 3, 4), np.float32), axes=[1, 1])
            print("duplicate axes were accepted: MISMATCH")
            ok = False
        except dc.DmlError as e:
            print("rejected as expected: %s %s at %s" % (e.code.name, e.rule,
                                                         e.field))
            ok &= (e.code.name == "INVALID_ARGUMENT" and
                   e.rule == "MVN_AXES_DUPLICATE" and
                   e.field == "operator.mvn1.axes[1]")
    print("all results correct" if ok else "SOME RESULTS WRONG")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
