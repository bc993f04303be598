"""NumPy reference of the dmlserve operators and the tolerance check of
OPERATORS.md section 8, for the end-to-end tests.

Every function takes inputs already in their tensor type, evaluates in
float64 (FLOAT parameters first rounded to binary32, as the server does) and
returns float64; `check` rounds once to the output type and compares.
"""

import math

import numpy as np


def f32(v):
    return np.float64(np.float32(v))


def _softplus(y):
    return np.maximum(y, 0) + np.log1p(np.exp(-np.abs(y)))


_erf = np.vectorize(math.erf, otypes=[np.float64])

# name -> (parameters used by the tests, f(x, params))
ACTIVATIONS = {
    "elu": ({"alpha": 0.8},
            lambda x, p: np.where(x >= 0, x, f32(p["alpha"]) * np.expm1(x))),
    "celu": ({"alpha": 1.5},
             lambda x, p: np.maximum(0, x) + np.minimum(
                 0, f32(p["alpha"]) * np.expm1(x / f32(p["alpha"])))),
    "hard_sigmoid": ({"alpha": 0.2, "beta": 0.5},
                     lambda x, p: np.maximum(0, np.minimum(
                         f32(p["alpha"]) * x + f32(p["beta"]), 1))),
    "identity": ({}, lambda x, p: x),
    "leaky_relu": ({"alpha": 0.1},
                   lambda x, p: np.where(x >= 0, x, f32(p["alpha"]) * x)),
    "linear": ({"alpha": 1.5, "beta": -0.5},
               lambda x, p: f32(p["alpha"]) * x + f32(p["beta"])),
    "parametric_softplus": ({"alpha": 0.7, "beta": 1.3},
                            lambda x, p: f32(p["alpha"]) *
                            _softplus(f32(p["beta"]) * x)),
    "relu": ({}, lambda x, p: np.maximum(0, x)),
    "scaled_elu": ({"alpha": 1.6732, "gamma": 1.0507},
                   lambda x, p: np.where(
                       x > 0, f32(p["gamma"]) * x,
                       f32(p["gamma"]) * f32(p["alpha"]) * np.expm1(x))),
    "scaled_tanh": ({"alpha": 1.2, "beta": 0.5},
                    lambda x, p: f32(p["alpha"]) * np.tanh(f32(p["beta"]) * x)),
    "sigmoid": ({}, lambda x, p: 1 / (1 + np.exp(-x))),
    "softplus": ({"steepness": 2.0},
                 lambda x, p: _softplus(f32(p["steepness"]) * x) /
                 f32(p["steepness"])),
    "softsign": ({}, lambda x, p: x / (1 + np.abs(x))),
    "tanh": ({}, lambda x, p: np.tanh(x)),
    "thresholded_relu": ({"alpha": 0.5},
                         lambda x, p: np.where(x > f32(p["alpha"]), x, 0)),
    "shrink": ({"bias": 0.1, "threshold": 0.5},
               lambda x, p: np.where(
                   x > f32(p["threshold"]), x - f32(p["bias"]),
                   np.where(x < -f32(p["threshold"]), x + f32(p["bias"]), 0))),
    "gelu": ({}, lambda x, p: 0.5 * x * (1 + _erf(x / math.sqrt(2)))),
}

TOLERANCE_CLASS = {
    "identity": "EXACT", "relu": "EXACT", "thresholded_relu": "EXACT",
    "leaky_relu": "ARITH", "linear": "ARITH", "hard_sigmoid": "ARITH",
    "softsign": "ARITH", "shrink": "ARITH",
    "elu": "TRANSCENDENTAL", "celu": "TRANSCENDENTAL",
    "scaled_elu": "TRANSCENDENTAL", "sigmoid": "TRANSCENDENTAL",
    "tanh": "TRANSCENDENTAL", "scaled_tanh": "TRANSCENDENTAL",
    "softplus": "TRANSCENDENTAL", "parametric_softplus": "TRANSCENDENTAL",
    "gelu": "TRANSCENDENTAL",
}

# class -> dtype -> (max ULP, atol, rtol), OPERATORS.md section 8.
TOLERANCES = {
    "EXACT": {np.float32: (0, 0, 0), np.float16: (0, 0, 0)},
    "ARITH": {np.float32: (2, 0, 0), np.float16: (1, 0, 0)},
    "TRANSCENDENTAL": {np.float32: (4, 1e-6, 4e-6),
                       np.float16: (2, 1e-4, 0)},
    "NORMALIZATION": {np.float32: (4, 1e-4, 1e-4),
                      np.float16: (2, 3e-3, 2e-3)},
}


def activation(name, x, params=None):
    default, fn = ACTIVATIONS[name]
    return fn(np.asarray(x, dtype=np.float64),
              default if params is None else params)


def threshold(x, min_value, scale_bias=None):
    g = np.asarray(x, dtype=np.float64)
    if scale_bias is not None:
        g = g * f32(scale_bias[0]) + f32(scale_bias[1])
    return np.maximum(g, f32(min_value))


def clip(x, min_value, max_value, scale_bias=None):
    return np.minimum(f32(max_value), threshold(x, min_value, scale_bias))


def mvn(x, axes, scale=None, bias=None, epsilon=1e-5, normalize_variance=True,
        fused=None):
    """MVN1 (and MVN with axes {2,3} / {1,2,3}); fused is e.g. "relu" or
    ("celu", {"alpha": 1.0})."""
    x = np.asarray(x, dtype=np.float64)
    axes = tuple(axes)
    mean = x.mean(axis=axes, keepdims=True)
    y = x - mean
    if normalize_variance:
        var = (y * y).mean(axis=axes, keepdims=True)
        y = y / np.sqrt(var + f32(epsilon))
    if scale is not None:
        y = y * np.asarray(scale, dtype=np.float64)
    if bias is not None:
        y = y + np.asarray(bias, dtype=np.float64)
    if fused is not None:
        name, params = (fused, None) if isinstance(fused, str) else fused
        y = activation(name, y, params)
    return y


def int_convert(v, dtype):
    """The trunc / saturate / NaN->0 conversion of a FLOAT to an integer
    type (OPERATORS.md 4.1)."""
    info = np.iinfo(dtype)
    if math.isnan(v):
        return 0
    return int(min(max(math.trunc(v), info.min), info.max))


def _ordered(v, dtype):
    if dtype == np.float32:
        i = v.astype(np.float32).view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)
    i = v.astype(np.float16).view(np.int16).astype(np.int64)
    return np.where(i < 0, -(i & 0x7FFF), i)


def mismatches(actual, expected, dtype, tol_class):
    """Indices where `actual` (in `dtype`) fails against float64 `expected`
    under the tolerance class; integers must match exactly."""
    dtype = np.dtype(dtype).type
    actual = np.asarray(actual)
    if actual.shape != np.shape(expected):
        return ["shape %s != %s" % (actual.shape, np.shape(expected))]
    if np.issubdtype(dtype, np.integer):
        bad = actual.astype(np.int64) != np.asarray(expected).astype(np.int64)
        return list(zip(*np.nonzero(bad)))
    ulp, atol, rtol = TOLERANCES[tol_class][dtype]
    with np.errstate(invalid="ignore", over="ignore"):
        e = np.asarray(expected, dtype=np.float64).astype(dtype)
        a = actual.astype(dtype)
        ok = (np.isnan(a) & np.isnan(e)) | (a == e)
        finite = np.isfinite(a) & np.isfinite(e)
        ok |= finite & (np.abs(_ordered(a, dtype) - _ordered(e, dtype)) <= ulp)
        ok |= finite & (np.abs(a.astype(np.float64) - e.astype(np.float64)) <=
                        atol + rtol * np.abs(e.astype(np.float64)))
        if dtype == np.float32:
            tiny = np.finfo(np.float32).tiny
            ok |= (np.abs(e) < tiny) & (np.abs(a) < tiny)
    return list(zip(*np.nonzero(~ok)))
