#!/usr/bin/env python3
"""Generates the randomized differential corpus tests/data/conformance_random.pb.

About 3,000 random *valid* dmlserve.v1.ExecuteRequests, each with the
reference oracle's expected output, in the format of gen_cases.py
(tests/conformance/case.proto): the conformance tests replay them on the CPU
engine and on the Direct3D 12 engine like the rest of the corpus.

Each case draws, independently:
  * an operator (every one of OPERATORS.md: THRESHOLD, CLIP, every
    ACTIVATION_*, MVN and MVN1, the latter two with and without every fusable
    activation), a feature level at or above the operator's introduction, a
    data type and rank from that level's support table;
  * small sizes (at most a few hundred elements) and a layout: packed, NULL
    or explicit packed strides, transposed/padded strides, zero-stride
    broadcast input, padded output, in-place (also padded) where allowed,
    extra buffer bytes, a GuaranteedBaseOffsetAlignment, OWNED_BY_DML input;
  * parameters, mostly ordinary but often extreme: +-FLT_MAX, +-FLT_MIN,
    float32 denormals, +-0, 1e30, +-inf and NaN where the validator accepts
    them, Epsilon 0, denormal Epsilon / Steepness / CELU Alpha;
  * inputs: ordinary, wide-range, sprinkled with NaN/+-inf/denormals/values
    near overflow, large common offsets (built so that a float32 two-pass
    MVN is exact, §7.6), huge MVN groups (+-9.3e18, +-FLT_MAX), constant
    groups, integer extremes.
Every draw is checked with oracle.validate and redrawn until valid. The
expected output is oracle.execute; when oracle.execute_ftz (the result with
float32 denormal inputs and parameters flushed, §7.5) differs and does not
raise Invalid, it is stored as the case's expected_ftz alternative.

Usage (Debian's Python, which has numpy and protobuf; needs protoc):
  /usr/bin/python3 tests/gen/gen_random_cases.py --oracle /work/shared/oracle.py
Deterministic for a given --seed and --count.
"""

import argparse
import math
import os
import sys
import tempfile
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_cases as gc  # noqa: E402  (helpers shared with the main corpus)

FLT_MAX = 3.4028234663852886e38
FLT_MIN = 1.1754943508222875e-38      # smallest normal float32
DENORM_MAX = 1.1754942106924411e-38   # largest float32 denormal
DENORM_MIN = 1.401298464324817e-45    # smallest float32 denormal
F16_MAX = 65504.0

MVN1 = "DML_OPERATOR_MEAN_VARIANCE_NORMALIZATION1"
MVN = "DML_OPERATOR_MEAN_VARIANCE_NORMALIZATION"

# Extreme FLOAT parameter values (binary32); NaN/inf are filtered by the
# validator where they are illegal (CELU Alpha, Steepness, Epsilon).
EXTREME_PARAMS = [0.0, -0.0, FLT_MAX, -FLT_MAX, FLT_MIN, -FLT_MIN,
                  DENORM_MIN, -DENORM_MIN, 1e-40, -3e-39, DENORM_MAX, 1e30,
                  -1e30, 1e-30, -1e-30, 1e10, -1e10, math.inf, -math.inf,
                  math.nan, F16_MAX, -F16_MAX, 1e-7, 100.0, -100.0, 88.0,
                  2.0 ** -24, 0.5, -1.0]
EPSILONS = [1e-5, 1e-5, 1e-3, 0.0, 0.0, DENORM_MIN, 1e-40, FLT_MIN, 1.0,
            1e10, FLT_MAX, 1e-30]

F32_SPECIALS = [math.nan, math.inf, -math.inf, 0.0, -0.0, DENORM_MIN,
                -DENORM_MIN, 1e-40, -3e-39, DENORM_MAX, FLT_MIN, -FLT_MIN,
                FLT_MAX, -FLT_MAX, 3e38, -3e38, 1e30, -1e30, 88.72, -87.34,
                -103.97, 709.0, 1e-8, -1e-8, 16777217.0, 9.3e18, -9.3e18]
F16_SPECIALS = [math.nan, math.inf, -math.inf, 0.0, -0.0, F16_MAX, -F16_MAX,
                65519.0, 6.103515625e-05, -6.103515625e-05,
                5.960464477539063e-08, -5.960464477539063e-08, 40000.0,
                -40000.0, 11.0, -17.0, 2048.0, 0.333251953125]


def f32(v):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(np.float32(v))


def is_float(dtype):
    return dtype in ("FLOAT32", "FLOAT16")


def canonical_nans(data, dtype):
    """Every NaN as the positive quiet NaN: numpy's NaN signs vary from run
    to run, and the comparison treats all NaNs alike."""
    if not is_float(dtype):
        return data
    a = np.frombuffer(data, dtype=np.float32 if dtype == "FLOAT32"
                      else np.float16).copy()
    a[np.isnan(a)] = np.nan
    return a.tobytes()


class RandGen(gc.Gen):
    """gc.Gen that adds the §7.5 alternative, skips invalid draws and names
    cases with a running number (ids stay unique and stable per seed)."""

    def __init__(self, oracle, case_pb2, seed):
        super().__init__(oracle, case_pb2, seed)
        self.rejected = {}
        self.stats = {}
        self.n_ftz = 0

    def tensor_pb(self, t, m):
        super().tensor_pb(t, m)
        m.flags = int(t.get("Flags", 0))
        m.guaranteed_base_offset_alignment = int(
            t.get("GuaranteedBaseOffsetAlignment", 0))

    def valid(self, op, fl, inplace):
        """oracle.validate, counting rejected draws by rule."""
        rule = self.o.validate(op, fl, inplace)
        if rule is not None:
            key = rule.split(":", 1)[0]
            self.rejected[key] = self.rejected.get(key, 0) + 1
        return rule is None

    def try_add(self, group, cid, op, fl, bufs, inplace=False):
        """Adds the case when valid; returns whether it did."""
        if not self.valid(op, fl, inplace):
            return False
        lists = {k: v.tolist() for k, v in bufs.items()}
        dtype = op["Desc"]["OutputTensor"]["DataType"]
        npt = self.o.NP_DTYPE[dtype]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                yf = np.ascontiguousarray(np.asarray(self.o.execute_ftz(
                    op, fl, lists, inplace)["OutputTensor"]).astype(npt))
            except self.o.Invalid:
                yf = None
            self.add(group, cid, op, fl, bufs, inplace)
        c = self.sets[group][-1]
        # NaN payloads and signs vary between numpy evaluations: compare
        # values (and the sign of zeros), not bytes.
        if yf is not None:
            y = np.frombuffer(c.expected, dtype=npt).reshape(yf.shape)
            if not is_float(dtype):
                same = np.array_equal(y, yf)
            else:
                nan = np.isnan(y)
                same = (np.array_equal(nan, np.isnan(yf)) and
                        np.array_equal(y[~nan], yf[~nan]) and
                        np.array_equal(np.signbit(y[~nan]),
                                       np.signbit(yf[~nan])))
            if same:
                yf = None
        c.expected = canonical_nans(c.expected, dtype)
        if yf is not None:
            yf = np.frombuffer(canonical_nans(yf.tobytes(), dtype),
                               dtype=npt)
        c.nan_sensitive = c.nan_sensitive or self.nan_sensitive_extra(op,
                                                                      bufs)
        if yf is not None:
            c.expected_ftz = yf.tobytes()
            self.n_ftz += 1
        return True

    def nan_sensitive_extra(self, op, bufs):
        """Beyond gc.Gen.nan_sensitive: a max/min operator (or fused one)
        whose operand may be NaN because a parameter is non-finite or huge
        (inf*0, inf-inf inside the formula)."""
        d = op["Desc"]
        names = {op["Type"]}
        descs = [d]
        fa = d.get("FusedActivation")
        if fa is not None:
            names.add(fa["Type"])
            descs.append(fa["Desc"])
        if not names & gc.MAXMIN_OPS:
            return False
        vals = []
        for dd in descs:
            for k, v in dd.items():
                if k in ("Alpha", "Beta", "Min", "Max", "Epsilon"):
                    vals.append(f32(v))
            sb = dd.get("ScaleBias")
            if sb:
                vals += [f32(sb["Scale"]), f32(sb["Bias"])]
        if any(not math.isfinite(v) or abs(v) > 1e30 for v in vals):
            return True
        for b in bufs.values():
            if b.dtype.kind == "f":
                with np.errstate(all="ignore"):
                    if np.any(np.abs(b.astype(np.float64)) > 1e30):
                        return True
        return False


# ---------------------------------------------------------------------------
# Draws
# ---------------------------------------------------------------------------

def draw_fl(g, lowest):
    fls = [v for _, v in g.o.FEATURE_LEVELS if v >= lowest]
    if g.rng.random() < 0.3:
        return 0x6400
    return int(g.rng.choice(fls))


def draw_support(g, spec):
    """A feature level for the operator, then a data type and a rank from
    that level's support table."""
    fl = draw_fl(g, spec["introduced"])
    _, ranks, types = g.o.tier_for(spec["tiers"], fl)
    return fl, str(g.rng.choice(list(types))), int(g.rng.choice(list(ranks)))


def draw_sizes(g, rank, max_elems=None):
    if max_elems is None:
        max_elems = int(g.rng.choice([8, 24, 64, 160, 400],
                                     p=[0.2, 0.3, 0.25, 0.17, 0.08]))
    for _ in range(100):
        hi = max(2, min(9, int(round(max_elems ** (1.0 / rank))) + 2))
        sizes = [int(g.rng.integers(1, hi + 1)) for _ in range(rank)]
        if int(np.prod(sizes)) <= max_elems:
            return sizes
    return [1] * rank


def strides_with_junk_on_size1(g, sizes, strides):
    """Size-1 dimensions may carry any stride (it is never multiplied)."""
    strides = list(strides)
    for d, s in enumerate(sizes):
        if s == 1 and g.rng.random() < 0.5:
            strides[d] = int(g.rng.choice([0, 1, 3, 1000]))
    return strides


def draw_tensor(g, dtype, sizes, layout, is_input):
    """layout: packed, explicit, strided (transposed + padded), padded,
    broadcast (inputs only)."""
    extra = int(g.rng.choice([0, 0, 0, 4, 12, 64]))
    if layout == "packed":
        strides = None
    elif layout == "explicit":
        strides = list(g.o.packed_strides(sizes))
    elif layout == "strided":
        strides = g.transposed_strides(sizes)
    elif layout == "padded":
        strides = g.padded_strides(sizes, max_pad=3)
    elif layout == "broadcast":
        strides = g.broadcast_strides(sizes)
    else:
        raise ValueError(layout)
    if strides is not None and layout != "broadcast" and \
            g.rng.random() < 0.3:
        strides = strides_with_junk_on_size1(g, sizes, strides)
    t = g.tensor(dtype, sizes, strides, extra=extra)
    esize = g.o.ELEMENT_BITS[dtype] // 8
    if g.rng.random() < 0.15:
        t["GuaranteedBaseOffsetAlignment"] = int(g.rng.choice(
            [a for a in (1, 2, 4, 8, 16, 256) if a >= esize]))
    if is_input and g.rng.random() < 0.05:
        t["Flags"] = 1  # OWNED_BY_DML (inputs only)
    return t


def float_values(g, dtype, n, dist):
    rng = g.rng
    f16 = dtype == "FLOAT16"
    if dist == "normal":
        scale = 10.0 ** rng.uniform(-3, 3 if not f16 else 2)
        v = rng.normal(rng.normal(0, scale) if rng.random() < 0.3 else 0.0,
                       scale, n)
    elif dist == "wide":
        lo, hi = (-9.0, 4.8) if f16 else (-45.0, 38.5)
        v = 10.0 ** rng.uniform(lo, hi, n) * rng.choice([-1.0, 1.0], n)
    elif dist == "small_ints":
        v = rng.integers(-8, 9, n).astype(np.float64) / \
            float(rng.choice([1, 2, 4]))
    elif dist == "denormal":
        if f16:
            v = rng.integers(-1023, 1024, n) * 5.960464477539063e-08
        else:
            v = rng.integers(-2 ** 23 + 1, 2 ** 23, n) * DENORM_MIN
            v = np.where(rng.random(n) < 0.3, rng.normal(0, 2, n), v)
    elif dist == "huge":
        top = F16_MAX if f16 else FLT_MAX
        v = rng.uniform(0.1, 1.0, n) * top * rng.choice([-1.0, 1.0], n)
    else:
        raise ValueError(dist)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return v.astype(g.o.NP_DTYPE[dtype])


def int_values(g, dtype, n):
    lo, hi = g.o.INT_RANGE[dtype]
    npt = g.o.NP_DTYPE[dtype]
    r = g.rng.random()
    if r < 0.4:
        v = g.rng.integers(lo, hi, size=n, endpoint=True, dtype=npt)
    else:
        a, b = max(lo, -40), min(hi, 40)
        v = g.rng.integers(a, b, size=n, endpoint=True, dtype=npt)
    picks = [lo, hi, 0, 1, max(lo, -1), lo + 1, hi - 1, min(hi, 2 ** 24 + 1)]
    for p in picks:
        if g.rng.random() < 0.3 and n:
            v[int(g.rng.integers(0, n))] = p
    return v


def input_buffer(g, t, specials_p=None):
    """Every buffer slot random (a wrong offset changes the result), with
    specials at offsets that are read."""
    dtype = t["DataType"]
    esize = g.o.ELEMENT_BITS[dtype] // 8
    n = t["TotalTensorSizeInBytes"] // esize
    if not is_float(dtype):
        return int_values(g, dtype, n)
    dist = str(g.rng.choice(["normal", "wide", "small_ints", "denormal",
                             "huge"], p=[0.45, 0.25, 0.1, 0.1, 0.1]))
    buf = float_values(g, dtype, n, dist)
    if specials_p is None:
        specials_p = float(g.rng.choice([0.0, 0.0, 0.1, 0.3]))
    if specials_p > 0:
        pool = F16_SPECIALS if dtype == "FLOAT16" else F32_SPECIALS
        offs = np.unique(g.o.offsets_of(t).ravel())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for o in offs:
                if g.rng.random() < specials_p:
                    buf[int(o)] = pool[int(g.rng.integers(0, len(pool)))]
    return buf


def draw_param(g, typical):
    """`typical` from gc.elementwise_params, else often an extreme value."""
    if g.rng.random() < 0.35:
        return float(EXTREME_PARAMS[int(g.rng.integers(0,
                                                       len(EXTREME_PARAMS)))])
    if g.rng.random() < 0.3:
        return f32(g.rng.normal(0, 10.0 ** g.rng.uniform(-2, 2)))
    return typical


def activation_params(g, opname, dtype, fl):
    typical = gc.elementwise_params(g, opname, dtype, fl)
    return {k: draw_param(g, v) for k, v in typical.items()}


def clip_params(g, opname, dtype, fl):
    d = gc.elementwise_params(g, opname, dtype, fl)
    for k in list(d):
        if g.rng.random() < 0.35:
            d[k] = float(EXTREME_PARAMS[int(g.rng.integers(
                0, len(EXTREME_PARAMS)))])
    return d


# ---------------------------------------------------------------------------
# One element-wise case
# ---------------------------------------------------------------------------

def gen_elementwise_case(g, idx, opname):
    o = g.o
    spec = o.OPS[opname]
    for _attempt in range(50):
        fl, dtype, rank = draw_support(g, spec)
        sizes = draw_sizes(g, rank)
        layouts = ["packed", "explicit", "strided", "broadcast", "padded_out"]
        if spec["inplace"]:
            layouts += ["inplace", "inplace_padded"]
        layout = str(g.rng.choice(layouts))
        inplace = layout.startswith("inplace")
        if layout in ("packed", "explicit"):
            in_t = draw_tensor(g, dtype, sizes, layout, True)
            out_t = draw_tensor(g, dtype, sizes,
                                str(g.rng.choice(["packed", "explicit"])),
                                False)
        elif layout == "strided":
            in_t = draw_tensor(g, dtype, sizes, "strided", True)
            out_t = draw_tensor(g, dtype, sizes, "padded", False)
        elif layout == "broadcast":
            in_t = draw_tensor(g, dtype, sizes, "broadcast", True)
            out_t = draw_tensor(g, dtype, sizes, str(g.rng.choice(
                ["packed", "padded"])), False)
        elif layout == "padded_out":
            in_t = draw_tensor(g, dtype, sizes, "packed", True)
            out_t = draw_tensor(g, dtype, sizes, "strided", False)
        elif layout == "inplace":
            in_t = draw_tensor(g, dtype, sizes, "packed", True)
            in_t["Flags"] = 0
            out_t = dict(in_t)
        else:  # inplace_padded: same strides, possibly a larger output
            in_t = draw_tensor(g, dtype, sizes, "strided", True)
            in_t["Flags"] = 0
            out_t = dict(in_t)
            out_t["TotalTensorSizeInBytes"] += int(g.rng.choice([0, 4, 16]))
            out_t["GuaranteedBaseOffsetAlignment"] = 0
        sb = None
        if spec["kind"] == "unary_sb":
            params = clip_params(g, opname, dtype, fl)
            if dtype not in ("INT64", "UINT64") and g.rng.random() < 0.4:
                sb = {"Scale": draw_param(g, float(
                          g.rng.choice([0.5, -2.0, 1.5, 3.25, 1.0]))),
                      "Bias": draw_param(g, float(
                          g.rng.choice([0.25, -1.0, 0.0, 7.5])))}
        else:
            params = activation_params(g, opname, dtype, fl)
        op = gc.build_unary(g, opname, fl, in_t, out_t, params, sb)
        if not g.valid(op, fl, inplace):
            continue
        bufs = {"InputTensor": input_buffer(g, in_t)}
        cid = (f"random/{idx:04d}/{gc.field_of(opname)}/{dtype}/{layout}"
               f"{'/sb' if sb else ''}/fl{fl:x}/r{rank}")
        if g.try_add("random", cid, op, fl, bufs, inplace):
            return cid
    raise SystemExit(f"no valid draw for {opname} (case {idx})")


# ---------------------------------------------------------------------------
# One MVN / MVN1 case
# ---------------------------------------------------------------------------

def mvn_input_buffer(g, t, dist):
    """Input buffer by MVN-specific distribution."""
    dtype = t["DataType"]
    esize = g.o.ELEMENT_BITS[dtype] // 8
    n = t["TotalTensorSizeInBytes"] // esize
    npt = g.o.NP_DTYPE[dtype]
    rng = g.rng
    if dist == "offset":
        # Common offset, spread in exact steps: with power-of-two groups (the
        # caller's sizes) float32 sums, the mean and the centred values are
        # exact, so a float32 two-pass MVN (conformant, §7.6) is within §8.
        if dtype == "FLOAT16":
            off, step = float(rng.choice([1000.0, -1000.0, 500.0])), 0.5
        else:
            off = float(rng.choice([1e4, -1e4, 65536.0, 3e5]))
            step = 0.25 if abs(off) <= 1e4 else 2.0
        v = off + rng.integers(0, 13, n) * step
        return v.astype(npt)
    if dist == "huge_pairs":
        # Groups like [9.3e18, -9.3e18]: the float32 sum of squares
        # overflows unless the engine scales (§7.4: no spurious inf/NaN).
        top = F16_MAX if dtype == "FLOAT16" else float(rng.choice(
            [9.3e18, 1.8e19, 1e30, FLT_MAX, 3e38]))
        v = rng.choice([-1.0, 1.0], n) * top * rng.choice(
            [1.0, 1.0, 0.5, 0.25], n)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return v.astype(npt)
    if dist == "constant":
        c = float(rng.choice([2.0, -0.75, 0.0, 1e30 if dtype == "FLOAT32"
                              else 100.0]))
        return np.full(n, c, dtype=npt)
    return None


def draw_mvn_sb(g, opname, fl, dtype, sizes):
    """Scale/Bias tensor descs (None when absent)."""
    mode = str(g.rng.choice(["none", "both", "both", "scale", "bias"]))
    if fl < 0x5200 and mode in ("scale", "bias"):
        mode = "both"
    form = str(g.rng.choice(["dims1", "zero", "full", "channel"]))
    out = {}
    for name, want in (("ScaleTensor", mode in ("both", "scale")),
                       ("BiasTensor", mode in ("both", "bias"))):
        if not want:
            out[name] = None
            continue
        t = gc.scale_bias_tensor(g, dtype, sizes, fl, opname, form)
        out[name] = t
    return mode, form, out


def sb_buffer(g, t, name):
    dtype = t["DataType"]
    esize = g.o.ELEMENT_BITS[dtype] // 8
    n = t["TotalTensorSizeInBytes"] // esize
    r = g.rng.random()
    if r < 0.7:
        v = g.rng.normal(0.0 if name == "BiasTensor" else 1.0, 1.5, n)
        v = v.astype(g.o.NP_DTYPE[dtype])
    else:
        v = float_values(g, dtype, n, str(g.rng.choice(
            ["wide", "denormal", "huge", "small_ints"])))
    if g.rng.random() < 0.15:
        pool = F16_SPECIALS if dtype == "FLOAT16" else F32_SPECIALS
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            v[int(g.rng.integers(0, n))] = pool[int(g.rng.integers(
                0, len(pool)))]
    return v


def gen_mvn_case(g, idx, opname, fusable):
    o = g.o
    spec = o.OPS[opname]
    for _attempt in range(50):
        fl, dtype, rank = draw_support(g, spec)
        dist = str(g.rng.choice(
            ["plain", "offset", "huge_pairs", "constant", "specials"],
            p=[0.55, 0.12, 0.13, 0.08, 0.12]))
        if opname == MVN1:
            k = int(g.rng.integers(1, rank + 1))
            axes = [int(a) for a in g.rng.choice(rank, size=k,
                                                 replace=False)]
            if g.rng.random() < 0.6:
                axes.sort()
            tag = "ax" + "".join(str(a) for a in axes)
        else:
            cc = bool(g.rng.random() < 0.5)
            axes = [1, 2, 3] if cc else [2, 3]
            tag = "cc" if cc else "nocc"
        sizes = draw_sizes(g, rank)
        if dist == "offset":
            # Power-of-two groups (see mvn_input_buffer).
            for a in axes:
                sizes[a] = int(g.rng.choice([1, 2, 4, 8]))
            while int(np.prod(sizes)) > 512:
                d = int(np.argmax(sizes))
                sizes[d] = max(1, sizes[d] // 2)
        in_layout = str(g.rng.choice(["packed", "explicit", "strided",
                                      "broadcast"],
                                     p=[0.4, 0.1, 0.3, 0.2]))
        out_layout = str(g.rng.choice(["packed", "padded", "strided"]))
        in_t = draw_tensor(g, dtype, sizes, in_layout, True)
        out_t = draw_tensor(g, dtype, sizes, out_layout, False)
        sb_mode, sb_form, sbt = draw_mvn_sb(g, opname, fl, dtype, sizes)
        nv = bool(g.rng.random() < 0.75)
        eps = float(EPSILONS[int(g.rng.integers(0, len(EPSILONS)))])
        fused = None
        if g.rng.random() < 0.55:
            names = [n for n in fusable if o.OPS[n]["fusable_from"] <= fl]
            name = str(g.rng.choice(names))
            fused = {"Type": name, "Desc": dict(
                InputTensor=None, OutputTensor=None,
                **activation_params(g, name, "FLOAT32", fl))}
        d = {"InputTensor": in_t, "OutputTensor": out_t,
             "ScaleTensor": sbt["ScaleTensor"],
             "BiasTensor": sbt["BiasTensor"], "NormalizeVariance": nv,
             "Epsilon": eps, "FusedActivation": fused}
        if opname == MVN1:
            d["AxisCount"] = len(axes)
            d["Axes"] = list(axes)
        else:
            d["CrossChannel"] = cc
        op = {"Type": opname, "Desc": d}
        if not g.valid(op, fl, False):
            continue
        bufs = {}
        for name in ("ScaleTensor", "BiasTensor"):
            if d[name] is not None:
                bufs[name] = sb_buffer(g, d[name], name)
        buf = None
        if dist in ("offset", "huge_pairs", "constant"):
            buf = mvn_input_buffer(g, in_t, dist)
            if dist != "offset" and g.rng.random() < 0.3:
                # Mix: some groups ordinary.
                other = input_buffer(g, in_t, 0.0)
                mask = g.rng.random(buf.size) < 0.5
                buf = np.where(mask, buf, other).astype(buf.dtype)
        else:
            buf = input_buffer(g, in_t, 0.15 if dist == "specials" else 0.0)
        bufs["InputTensor"] = buf
        fname = gc.field_of(fused["Type"]) if fused else "none"
        cid = (f"random/{idx:04d}/{gc.field_of(opname)}/{dtype}/"
               f"{in_layout}-{out_layout}/{tag}/sb_{sb_mode}_{sb_form}/"
               f"nv{int(nv)}/fa_{fname}/{dist}/fl{fl:x}/r{rank}")
        if g.try_add("random", cid, op, fl, bufs, False):
            return cid
    raise SystemExit(f"no valid draw for {opname} (case {idx})")


# ---------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--oracle", required=True, help="path to oracle.py")
    ap.add_argument("--out-dir", default=os.path.join(gc.REPO, "tests",
                                                      "data"))
    ap.add_argument("--seed", type=int, default=20261125)
    ap.add_argument("--count", type=int, default=3000)
    args = ap.parse_args()
    oracle = gc.load_oracle(args.oracle)
    with tempfile.TemporaryDirectory() as tmp:
        case_pb2 = gc.compile_protos(tmp)
        g = RandGen(oracle, case_pb2, args.seed)
        ew = [n for n, s in oracle.OPS.items()
              if s["kind"] in ("unary_sb", "act")]
        fusable = [n for n, s in oracle.OPS.items()
                   if s["kind"] == "act" and s["fusable_from"] is not None]
        # Each round: every element-wise operator once, MVN1 four times,
        # MVN twice.
        cycle = ew + [MVN1] * 4 + [MVN] * 2
        for idx in range(args.count):
            opname = cycle[idx % len(cycle)]
            if opname in (MVN, MVN1):
                gen_mvn_case(g, idx, opname, fusable)
            else:
                gen_elementwise_case(g, idx, opname)
        os.makedirs(args.out_dir, exist_ok=True)
        g.write(args.out_dir)
        print(f"{g.n_ftz} cases carry an expected_ftz alternative; "
              f"rejected draws by rule: {dict(sorted(g.rejected.items()))}")


if __name__ == "__main__":
    main()
