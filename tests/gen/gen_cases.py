#!/usr/bin/env python3
"""Generates the execution conformance corpus tests/data/conformance_*.pb.

Every case is a valid dmlserve.v1.ExecuteRequest (feature level, operator in
its proto form, in_place flag and raw input/scale/bias payload bytes) plus the
reference oracle's expected output (logical row-major elements as bytes of
the output data type), the OPERATORS.md §8 tolerance class and whether the
expectation depends on the minNum/maxNum NaN rule (§7.3). The messages are
tests/conformance/case.proto; tests/conformance reads them with protobuf C++,
so neither Python nor the oracle is needed at test time.

Coverage: every operator x every data type its support tables allow x layout
classes (packed, strided/padded, zero-stride broadcast input, in-place where
allowed), at the highest feature level and at each lower tier; MVN/MVN1 with
various axes, Scale/Bias broadcast (size-1 dimensions and zero strides),
NormalizeVariance on/off, every fused activation; NaN/Inf/large-offset inputs
(§7.6), FLOAT16 edge values; a few 64K-element cases.

Usage (Debian's Python, which has numpy and protobuf; needs protoc):
  /usr/bin/python3 tests/gen/gen_cases.py --oracle /work/shared/oracle.py
The output is deterministic for a given --seed.
"""

import argparse
import importlib.util
import math
import os
import shutil
import subprocess
import sys
import tempfile
import warnings

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

# Operators whose formula contains a documented max/min (OPERATORS.md §7.3).
MAXMIN_OPS = {
    "DML_OPERATOR_ELEMENT_WISE_THRESHOLD", "DML_OPERATOR_ELEMENT_WISE_CLIP",
    "DML_OPERATOR_ACTIVATION_RELU", "DML_OPERATOR_ACTIVATION_CELU",
    "DML_OPERATOR_ACTIVATION_HARD_SIGMOID",
}

F16_EDGE = [0.0, -0.0, np.inf, -np.inf, np.nan, 65504.0, -65504.0,
            65519.0, 6.103515625e-05, -6.103515625e-05, 5.960464477539063e-08,
            -5.960464477539063e-08, 3.0517578125e-05, 40000.0, -40000.0,
            0.333251953125, 1000.0, -11.5, 2.0009765625, 1.0009765625]
F32_EDGE = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-40, 1.1754944e-38,
            3.4028235e38, -3.4028235e38, 1e30, -1e30, 1000.0, -1000.0, 88.7,
            -88.7, 1e-8, -1e-8, 20.0, -20.0]


def load_oracle(path):
    spec = importlib.util.spec_from_file_location("oracle", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def compile_protos(tmp):
    """Python classes for dmlserve.proto and case.proto, generated into tmp.

    Uses the system protoc (Debian's 3.21, matching python3-protobuf 4.21):
    grpc_tools bundles protoc 3.5, which predates proto3 `optional`."""
    protoc = shutil.which("protoc")
    if protoc is None:
        raise SystemExit("protoc not found (apt-get install protobuf-compiler)")
    subprocess.run([protoc, "-I", os.path.join(REPO, "proto"),
                    "-I", os.path.join(REPO, "tests", "conformance"),
                    "--python_out=" + tmp, "dmlserve/v1/dmlserve.proto",
                    "case.proto"], check=True)
    sys.path.insert(0, tmp)
    import case_pb2  # noqa: E402  (generated above)
    return case_pb2


def f32(v):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(np.float32(v))


def snake(name):
    out = ""
    for i, ch in enumerate(name):
        if ch.isupper() and i > 0:
            out += "_"
        out += ch.lower()
    return out


def field_of(opname):
    n = opname.replace("DML_OPERATOR_", "")
    if n == "MEAN_VARIANCE_NORMALIZATION":
        return "mvn"
    if n == "MEAN_VARIANCE_NORMALIZATION1":
        return "mvn1"
    return n.replace("ACTIVATION_", "").replace("ELEMENT_WISE_", "").lower()


class Gen:
    def __init__(self, oracle, case_pb2, seed):
        self.o = oracle
        self.pb = case_pb2
        self.rng = np.random.default_rng(seed)
        self.sets = {}
        self.ids = set()
        self.skipped = []

    # -- tensors and buffers ------------------------------------------------
    def tensor(self, dtype, sizes, strides=None, extra=0):
        total = self.o.calc_buffer_tensor_size(dtype, sizes, strides)
        esize = self.o.ELEMENT_BITS[dtype] // 8
        total += extra
        while total % max(4, esize):
            total += 4
        return self.o.make_tensor(dtype, sizes, strides, total)

    def padded_strides(self, sizes, order=None, max_pad=2):
        """Strides with gaps; `order` lists dims innermost first."""
        order = order if order is not None else list(
            reversed(range(len(sizes))))
        strides = [0] * len(sizes)
        acc = int(self.rng.integers(1, 3))
        for d in order:
            strides[d] = acc
            acc *= int(sizes[d]) + int(self.rng.integers(0, max_pad + 1))
        return strides

    def transposed_strides(self, sizes):
        order = list(range(len(sizes)))
        self.rng.shuffle(order)
        return self.padded_strides(sizes, order)

    def broadcast_strides(self, sizes):
        """Packed-ish strides with a zero stride on at least one dim > 1."""
        strides = list(self.o.packed_strides(sizes))
        big = [d for d, s in enumerate(sizes) if s > 1]
        if not big:
            return strides
        k = int(self.rng.integers(1, len(big) + 1))
        for d in self.rng.choice(big, size=k, replace=False):
            strides[int(d)] = 0
        # Re-pack the remaining dims so the buffer stays small.
        acc = 1
        for d in reversed(range(len(sizes))):
            if strides[d] != 0:
                strides[d] = acc
                acc *= sizes[d]
        return strides

    def values(self, dtype, n, dist="normal", scale=3.0):
        rng = self.rng
        if dtype in ("FLOAT32", "FLOAT16"):
            if dist == "normal":
                v = rng.normal(0.0, scale, n)
            elif dist == "wide":
                mag = 10.0 ** rng.uniform(-4, 2.5, n)
                v = mag * rng.choice([-1.0, 1.0], n)
            elif dist == "offset":
                # §7.6's example, 10000..10003, in quarter steps: float32
                # sums of up to 2^6 such values are exact, so a float32
                # two-pass (conformant, §7.6) gets them right while
                # E[x^2]-E[x]^2 in float32 (not conformant) cannot. A finer
                # spread (e.g. 0.1) would defeat every float32 mean, which
                # the spec does not require (§8: two-pass float32 passes).
                v = 10000.0 + rng.integers(0, 13, n) / 4.0
            elif dist == "offset16":
                v = 1000.0 + rng.uniform(0.0, 4.0, n)
            else:
                raise ValueError(dist)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return v.astype(self.o.NP_DTYPE[dtype])
        lo, hi = self.o.INT_RANGE[dtype]
        npt = self.o.NP_DTYPE[dtype]
        if dist == "small":
            lo, hi = max(lo, -20), min(hi, 20)
        v = rng.integers(lo, hi, size=n, endpoint=True, dtype=npt)
        # Make sure the extremes and small values show up.
        picks = [lo, hi, 0, 1, min(hi, 2), max(lo, -1), max(lo, -2)]
        for i, p in enumerate(picks[:n]):
            v[int(rng.integers(0, n))] = p
        return v

    def buffer(self, t, dist="normal", specials=None, scale=3.0):
        """A physical buffer for tensor t (every position random, so reading a
        wrong offset changes the result); `specials` are placed at offsets
        that are actually read."""
        dtype = t["DataType"]
        esize = self.o.ELEMENT_BITS[dtype] // 8
        n = t["TotalTensorSizeInBytes"] // esize
        buf = self.values(dtype, n, dist, scale)
        if specials:
            offs = np.unique(self.o.offsets_of(t).ravel())
            self.rng.shuffle(offs)
            for o, s in zip(offs, specials):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    buf[int(o)] = s
        return buf

    # -- proto conversion ---------------------------------------------------
    def tensor_pb(self, t, m):
        m.data_type = self.o.DATA_TYPE_CODES[t["DataType"]]
        m.sizes.extend(int(s) for s in t["Sizes"])
        if t["Strides"] is not None:
            m.strides.extend(int(s) for s in t["Strides"])
        m.total_tensor_size_in_bytes = int(t["TotalTensorSizeInBytes"])

    def params_pb(self, opname, d, m):
        for p in self.o.OPS[opname]["params"]:
            v = d[p]
            if p == "Axes":
                m.axes.extend(int(a) for a in v)
            elif p == "AxisCount":
                m.axis_count = int(v)
            elif p in ("NormalizeVariance", "CrossChannel"):
                setattr(m, snake(p), bool(v))
            else:
                setattr(m, snake(p), f32(v))

    def op_pb(self, op, pb):
        name = op["Type"]
        d = op["Desc"]
        m = getattr(pb, field_of(name))
        m.SetInParent()
        self.tensor_pb(d["InputTensor"], m.input)
        self.tensor_pb(d["OutputTensor"], m.output)
        self.params_pb(name, d, m)
        kind = self.o.OPS[name]["kind"]
        if kind == "unary_sb" and d.get("ScaleBias") is not None:
            m.scale_bias.scale = f32(d["ScaleBias"]["Scale"])
            m.scale_bias.bias = f32(d["ScaleBias"]["Bias"])
        if kind in ("mvn", "mvn1"):
            if d.get("ScaleTensor") is not None:
                self.tensor_pb(d["ScaleTensor"], m.scale)
            if d.get("BiasTensor") is not None:
                self.tensor_pb(d["BiasTensor"], m.bias)
            fa = d.get("FusedActivation")
            if fa is not None:
                fm = getattr(m.fused_activation, field_of(fa["Type"]))
                fm.SetInParent()
                self.params_pb(fa["Type"], fa["Desc"], fm)

    # -- one case -----------------------------------------------------------
    def add(self, group, cid, op, fl, bufs, inplace=False):
        rule = self.o.validate(op, fl, inplace)
        if rule is not None:
            raise SystemExit(f"generator bug: {cid} is invalid: {rule}")
        res = self.o.execute(op, fl, {k: v.tolist() for k, v in bufs.items()},
                             inplace)
        out_t = op["Desc"]["OutputTensor"]
        dtype = out_t["DataType"]
        y = np.ascontiguousarray(
            np.asarray(res["OutputTensor"]).astype(self.o.NP_DTYPE[dtype]))
        assert list(y.shape) == list(out_t["Sizes"]), cid
        base = cid
        k = 2
        while cid in self.ids:
            cid = f"{base}#{k}"
            k += 1
        self.ids.add(cid)
        c = self.pb.Case()
        c.id = cid
        r = c.request
        r.feature_level = fl
        self.op_pb(op, r.operator)
        r.in_place = bool(inplace)
        r.input = bufs["InputTensor"].tobytes()
        if "ScaleTensor" in bufs:
            r.scale = bufs["ScaleTensor"].tobytes()
        if "BiasTensor" in bufs:
            r.bias = bufs["BiasTensor"].tobytes()
        c.tolerance_class = self.o.tolerance_for(op)
        c.expected = y.tobytes()
        c.output_dtype = dtype
        c.nan_sensitive = self.nan_sensitive(op, bufs)
        self.sets.setdefault(group, []).append(c)

    def nan_sensitive(self, op, bufs):
        d = op["Desc"]
        names = {op["Type"]}
        fa = d.get("FusedActivation")
        if fa is not None:
            names.add(fa["Type"])
        if not names & MAXMIN_OPS:
            return False
        for p in ("Min", "Max"):
            if p in d and math.isnan(f32(d[p])):
                return True
        for b in bufs.values():
            if b.dtype.kind == "f" and not np.all(np.isfinite(b)):
                return True
        if self.o.OPS[op["Type"]]["kind"] in ("mvn", "mvn1") and \
                d.get("NormalizeVariance") and f32(d["Epsilon"]) == 0.0:
            return True
        return False

    def write(self, out_dir):
        total = 0
        for group, cases in sorted(self.sets.items()):
            cs = self.pb.CaseSet()
            cs.cases.extend(cases)
            data = cs.SerializeToString()
            path = os.path.join(out_dir, f"conformance_{group}.pb")
            with open(path, "wb") as f:
                f.write(data)
            total += len(data)
            print(f"{path}: {len(cases)} cases, {len(data)} bytes")
        print(f"total {sum(len(c) for c in self.sets.values())} cases, "
              f"{total} bytes")


# ---------------------------------------------------------------------------
# Element-wise operators
# ---------------------------------------------------------------------------

def tiers_of(o, opname):
    return o.OPS[opname]["tiers"]


def pick_sizes(g, rank, max_elems=600):
    while True:
        sizes = [int(g.rng.integers(1, 7)) for _ in range(rank)]
        n = int(np.prod(sizes))
        if 2 <= n <= max_elems or (rank == 1 and n >= 1):
            return sizes


def elementwise_params(g, opname, dtype, fl):
    rng = g.rng
    o = g.o
    d = {}
    is_int = dtype not in ("FLOAT32", "FLOAT16")
    if opname == "DML_OPERATOR_ELEMENT_WISE_THRESHOLD":
        if is_int:
            lo, hi = o.INT_RANGE[dtype]
            d["Min"] = float(rng.choice([-2.5, 0.0, 3.7, -7.9, 1e10, -1e10,
                                         lo / 2 - 0.5, hi / 3 + 0.25]))
        else:
            d["Min"] = float(rng.normal(0, 2))
        return d
    if opname == "DML_OPERATOR_ELEMENT_WISE_CLIP":
        if is_int:
            lo, hi = o.INT_RANGE[dtype]
            a = float(rng.choice([-3.7, -100.5, lo / 4, 0.0, -1e30]))
            b = float(rng.choice([5.9, 100.2, hi / 4, 1e30, 1e18]))
        else:
            a, b = sorted(rng.normal(0, 2, 2).tolist())
        d["Min"], d["Max"] = a, b
        return d
    choices = {
        "Alpha": [1.0, 0.5, 2.0, 0.2, 1.5],
        "Beta": [0.5, -0.25, 1.0, 0.0],
        "Gamma": [1.05070102214813232421875, 2.0, 0.5],
        "Steepness": [1.0, 2.0, 3.5] + ([0.5] if fl >= 0x6400 else []),
        "Bias": [0.0, 0.25, -0.5, 1.5],
        "Threshold": [0.5, 1.0, 0.0, 2.0],
    }
    if opname == "DML_OPERATOR_ACTIVATION_CELU":
        choices["Alpha"] = [1.0, 0.5, 2.0, -0.7]
    if opname == "DML_OPERATOR_ACTIVATION_LEAKY_RELU":
        choices["Alpha"] = [0.01, 0.3, -0.5, 2.0]
    if opname == "DML_OPERATOR_ACTIVATION_THRESHOLDED_RELU":
        choices["Alpha"] = [1.0, 0.0, -0.5, 0.7]
    if opname == "DML_OPERATOR_ACTIVATION_SCALED_ELU":
        choices["Alpha"] = [1.67326319217681884765625, 1.0, 0.5]
    if opname == "DML_OPERATOR_ACTIVATION_SHRINK" and is_int:
        choices["Bias"] = [0.0, 2.7, -3.2, 1e10, -1.5]
        choices["Threshold"] = [0.5, 3.2, 10.9, -2.0, 1e12]
    for p in o.OPS[opname]["params"]:
        d[p] = float(rng.choice(choices[p]))
    return d


def build_unary(g, opname, fl, in_t, out_t, params, scale_bias=None):
    d = {"InputTensor": in_t, "OutputTensor": out_t}
    d.update(params)
    if g.o.OPS[opname]["kind"] == "unary_sb":
        d["ScaleBias"] = scale_bias
    return {"Type": opname, "Desc": d}


def value_dist(opname, dtype):
    if dtype not in ("FLOAT32", "FLOAT16"):
        return "int"
    return "normal"


def gen_elementwise(g):
    o = g.o
    for opname, spec in o.OPS.items():
        if spec["kind"] not in ("unary_sb", "act"):
            continue
        field = field_of(opname)
        tiers = tiers_of(o, opname)
        # Highest tier, all types x layout classes.
        fl_hi = 0x6400
        _, ranks, types = o.tier_for(tiers, fl_hi)
        for dtype in types:
            layouts = ["packed", "strided", "broadcast", "inplace",
                       "inplace_padded"]
            for layout in layouts:
                if layout.startswith("inplace") and not spec["inplace"]:
                    continue
                rank = int(g.rng.choice(list(ranks)))
                gen_one_elementwise(g, opname, field, fl_hi, dtype, rank,
                                    layout)
            # ScaleBias variants for THRESHOLD/CLIP (not on 64-bit ints).
            if spec["kind"] == "unary_sb" and dtype not in ("INT64", "UINT64"):
                for layout in ("packed", "strided"):
                    rank = int(g.rng.choice(list(ranks)))
                    gen_one_elementwise(g, opname, field, fl_hi, dtype, rank,
                                        layout, with_sb=True)
        # Every lower tier: its first FL, each type, a 4/5-D case.
        for (tfl, tranks, ttypes) in tiers:
            for dtype in ttypes:
                rank = int(g.rng.choice(list(tranks)))
                gen_one_elementwise(g, opname, field, tfl, dtype, rank,
                                    "packed" if g.rng.random() < 0.5
                                    else "strided")


def gen_one_elementwise(g, opname, field, fl, dtype, rank, layout,
                        with_sb=False, specials=None, dist=None, sizes=None,
                        params=None, group="elementwise", variant=""):
    o = g.o
    sizes = sizes or pick_sizes(g, rank)
    inplace = False
    if layout == "packed":
        in_t = g.tensor(dtype, sizes)
        out_t = g.tensor(dtype, sizes)
    elif layout == "strided":
        in_t = g.tensor(dtype, sizes, g.transposed_strides(sizes), extra=8)
        out_t = g.tensor(dtype, sizes, g.padded_strides(sizes), extra=16)
    elif layout == "broadcast":
        in_t = g.tensor(dtype, sizes, g.broadcast_strides(sizes))
        out_t = g.tensor(dtype, sizes)
    elif layout == "inplace":
        in_t = g.tensor(dtype, sizes)
        out_t = dict(in_t)
        inplace = True
    elif layout == "inplace_padded":
        st = g.transposed_strides(sizes)
        in_t = g.tensor(dtype, sizes, st, extra=8)
        out_t = g.tensor(dtype, sizes, list(st), extra=16)  # larger total
        inplace = True
    else:
        raise ValueError(layout)
    if params is None:
        params = elementwise_params(g, opname, dtype, fl)
    sb = None
    if with_sb:
        sb = {"Scale": float(g.rng.choice([0.5, -2.0, 1.5, 3.25])),
              "Bias": float(g.rng.choice([0.25, -1.0, 0.0, 7.5]))}
    op = build_unary(g, opname, fl, in_t, out_t, params, sb)
    if dist is None:
        dist = "wide" if g.rng.random() < 0.3 else "normal"
        if dtype not in ("FLOAT32", "FLOAT16"):
            dist = "small" if (opname.endswith("SHRINK") and
                               g.rng.random() < 0.5) else "int"
    buf = g.buffer(in_t, dist, specials)
    cid = (f"{field}/{dtype}/{layout}{'/sb' if with_sb else ''}"
           f"{'/' + variant if variant else ''}/fl{fl:x}/r{rank}")
    g.add(group, cid, op, fl, {"InputTensor": buf}, inplace)


def gen_edges(g):
    """NaN/Inf/overflow/denormal inputs for every float operator, and the
    NaN-parameter cases of THRESHOLD/CLIP."""
    o = g.o
    for opname, spec in o.OPS.items():
        if spec["kind"] not in ("unary_sb", "act"):
            continue
        field = field_of(opname)
        fl = 0x6400
        for dtype, specials in (("FLOAT32", F32_EDGE), ("FLOAT16", F16_EDGE)):
            sizes = [len(specials) + 4]
            gen_one_elementwise(g, opname, field, fl, dtype, 1, "packed",
                                specials=specials, sizes=sizes, group="edge",
                                variant="special")
            if spec["kind"] == "unary_sb":
                gen_one_elementwise(g, opname, field, fl, dtype, 1, "packed",
                                    with_sb=True, specials=specials,
                                    sizes=sizes, group="edge",
                                    variant="special")
    # Overflow through parameters: LINEAR with Alpha 2 on FLOAT16
    # (40000*2 -> inf), and 0 * inf = NaN.
    lin = "DML_OPERATOR_ACTIVATION_LINEAR"
    for dtype in ("FLOAT16", "FLOAT32"):
        gen_one_elementwise(g, lin, "linear", 0x6400, dtype, 1, "packed",
                            params={"Alpha": 2.0, "Beta": 0.0},
                            specials=[40000.0, -40000.0, np.inf, 65504.0,
                                      3e38 if dtype == "FLOAT32" else 1.0],
                            sizes=[8], group="edge", variant="overflow")
        gen_one_elementwise(g, lin, "linear", 0x6400, dtype, 1, "packed",
                            params={"Alpha": 0.0, "Beta": 1.0},
                            specials=[np.inf, -np.inf, np.nan, 1.0],
                            sizes=[6], group="edge", variant="zero_times_inf")
    thr = "DML_OPERATOR_ELEMENT_WISE_THRESHOLD"
    clip = "DML_OPERATOR_ELEMENT_WISE_CLIP"
    for dtype in ("FLOAT32", "FLOAT16"):
        gen_one_elementwise(g, thr, "threshold", 0x1000, dtype, 4, "packed",
                            params={"Min": float("nan")},
                            specials=[np.nan, np.inf, -np.inf],
                            group="edge", variant="min_nan")
        gen_one_elementwise(g, clip, "clip", 0x1000, dtype, 4, "packed",
                            params={"Min": 2.0, "Max": -1.0},
                            group="edge", variant="min_gt_max")
        gen_one_elementwise(g, clip, "clip", 0x3000, dtype, 2, "packed",
                            params={"Min": 0.1, "Max": 0.3},
                            specials=[np.nan, np.inf, -np.inf, -0.0],
                            group="edge", variant="rounded_bounds")
    # Integer THRESHOLD exactness above 2^24 and INT64 CLIP precision loss.
    for dtype in ("INT32", "UINT32"):
        gen_one_elementwise(g, thr, "threshold", 0x2100, dtype, 4, "packed",
                            params={"Min": 16777216.0},
                            specials=[16777217, 16777215, 2**31 - 1, 0],
                            group="edge", variant="above_2p24")
    for dtype in ("INT64", "UINT64"):
        gen_one_elementwise(g, clip, "clip", 0x5000, dtype, 1, "packed",
                            params={"Min": 1.0, "Max": 1e18},
                            specials=[999999984306749441, 10**18, 2**63 - 1,
                                      5],
                            group="edge", variant="max_1e18")
    # Integer ScaleBias with saturation, and NaN -> 0: Scale = inf makes
    # 0 * inf = NaN for x = 0 (§4.1 trunc/saturate/NaN->0).
    for dtype in ("INT8", "UINT16", "INT32"):
        gen_one_elementwise(g, clip, "clip", 0x3000, dtype, 3, "packed",
                            with_sb=True, params={"Min": -1e30, "Max": 1e30},
                            group="edge", variant="sb_saturate")
        op_params = {"Min": float("-inf"), "Max": float("inf")}
        in_t = g.tensor(dtype, [7])
        buf = g.buffer(in_t, "small")
        buf[:3] = np.array([0, 1, -1 if dtype != "UINT16" else 2],
                           dtype=buf.dtype)
        op = build_unary(g, clip, 0x3000, in_t, g.tensor(dtype, [7]),
                         op_params, {"Scale": float("inf"), "Bias": 0.0})
        g.add("edge", f"clip/{dtype}/packed/sb/scale_inf/fl3000/r1", op,
              0x3000, {"InputTensor": buf})
    # Infinite and NaN Min on integers saturate / become 0.
    for dtype, mn in (("INT16", float("-inf")), ("UINT8", float("inf")),
                      ("INT32", float("nan"))):
        gen_one_elementwise(g, thr, "threshold", 0x3000, dtype, 2, "packed",
                            params={"Min": mn}, group="edge",
                            variant=f"min_{mn}")
    # Float ScaleBias with an infinite Scale: 0 * inf = NaN -> Min (maxNum).
    for dtype in ("FLOAT32", "FLOAT16"):
        in_t = g.tensor(dtype, [6])
        buf = g.buffer(in_t, specials=[0.0, -0.0, np.nan, 1.0])
        op = build_unary(g, thr, 0x1000, in_t, g.tensor(dtype, [6]),
                         {"Min": -2.0}, {"Scale": float("inf"), "Bias": 1.0})
        g.add("edge", f"threshold/{dtype}/packed/sb/scale_inf/fl3000/r1", op,
              0x3000, {"InputTensor": buf})
    # Integer ScaleBias where x*Scale is an integer and a tiny Bias pulls it
    # just below: in double, v = s + Bias rounds back to s only within half
    # a double ulp of s (a quarter below a power of two), so trunc gives s
    # or s - 1 by a margin of 1e-8 (seen on an H100 in a random set:
    # 2067115896 * 0.5 - 1e-7 must give 1033557947). No random values: the
    # inputs are listed so that the corpus around it stays the same.
    for dtype, bias, xs in (
            ("INT32", -1e-7, [2067115896, 2**30, 2**30 + 2, -2067115896,
                              2**24 + 2, 6]),
            ("INT32", -6e-8, [2067115896, 2**30 + 2, 2**29 + 2, 2**30,
                              2**31 - 2, 10]),
            ("INT32", -5e-8, [2067115896, 2**30 + 2, 2**30, 2**29 + 2,
                              -(2**31), 10]),
            ("UINT32", -3e-7, [3000000000, 2**31, 2**32 - 2, 2**31 + 2,
                               2**25 + 2, 4]),
            ("UINT32", -2e-7, [3000000000, 2**31, 2**32 - 2, 2**31 + 2,
                               2**30 + 2, 4])):
        sizes = [1, 1, 2, len(xs) // 2]  # FL 2_1 wants 4 dimensions
        in_t = g.tensor(dtype, sizes)
        buf = np.array(xs, dtype=g.o.NP_DTYPE[dtype])
        op = build_unary(g, thr, 0x2100, in_t, g.tensor(dtype, sizes),
                         {"Min": -3e9}, {"Scale": 0.5, "Bias": bias})
        g.add("edge", f"threshold/{dtype}/packed/sb/double_rounding/"
              f"bias{bias:g}/fl2100/r4", op, 0x2100, {"InputTensor": buf})
    # MVN1 with an infinite Bias beside a product that overflows float32
    # (finite in exact arithmetic): y = Bias, not +inf + -inf = NaN (a fresh
    # random set's random/4269 on lavapipe and the H200). Listed values, no
    # random draws.
    mvn1 = "DML_OPERATOR_MEAN_VARIANCE_NORMALIZATION1"
    tanh = {"Type": "DML_OPERATOR_ACTIVATION_TANH",
            "Desc": {"InputTensor": None, "OutputTensor": None}}
    for nv, scale, fused in ((False, -9.19e24, tanh), (False, -9.19e24, None),
                             (True, 3e38, tanh), (True, 3e38, None)):
        sizes = [1, 2, 2, 2]
        d = {"InputTensor": g.tensor("FLOAT32", sizes),
             "OutputTensor": g.tensor("FLOAT32", sizes),
             "ScaleTensor": g.tensor("FLOAT32", [1, 2, 1, 1]),
             "BiasTensor": g.tensor("FLOAT32", [1, 2, 1, 1]),
             "NormalizeVariance": nv, "Epsilon": 1e-5,
             "FusedActivation": fused, "AxisCount": 2, "Axes": [2, 3]}
        bufs = {"InputTensor": np.array([1.39e12, -1.86e23, -1.6e15, 3.0,
                                         5.0, -7.0, 1e30, -2.0],
                                        dtype=np.float32),
                "ScaleTensor": np.array([scale, scale], dtype=np.float32),
                "BiasTensor": np.array([-np.inf, np.inf], dtype=np.float32)}
        g.add("edge", f"mvn1/FLOAT32/packed/ax23/bias_inf_product_overflows/"
              f"nv{int(nv)}/fa_{'tanh' if fused else 'none'}/fl6400/r4",
              {"Type": mvn1, "Desc": d}, 0x6400, bufs)


# ---------------------------------------------------------------------------
# MVN / MVN1
# ---------------------------------------------------------------------------

FUSABLE = None


def fused_desc(g, name, fl):
    params = elementwise_params(g, name, "FLOAT32", fl)
    return {"Type": name, "Desc": dict(InputTensor=None, OutputTensor=None,
                                       **params)}


def scale_bias_tensor(g, dtype, in_sizes, fl, opname, mode):
    """Scale/Bias desc broadcastable to in_sizes, by mode: 'full', 'dims1'
    (size-1 broadcast on random dims), 'zero' (zero strides), 'channel'."""
    rank = len(in_sizes)
    if mode == "full":
        return g.tensor(dtype, in_sizes, g.padded_strides(in_sizes)
                        if g.rng.random() < 0.3 else None)
    if mode == "zero":
        # Same sizes as the input, zero strides except on the channel.
        strides = [0] * rank
        if rank >= 2:
            strides[1] = 1
        else:
            strides[0] = 1
        return g.tensor(dtype, in_sizes, strides)
    if mode == "channel":
        sizes = [1] * rank
        if rank >= 2:
            sizes[1] = in_sizes[1]
        return g.tensor(dtype, sizes)
    # dims1: any dim may be 1 from FL 4_0 (MVN1) or always (MVN); before 4_0
    # the channel must match for MVN1.
    sizes = []
    for d, s in enumerate(in_sizes):
        keep_channel = (opname.endswith("NORMALIZATION1") and fl < 0x4000 and
                        rank >= 2 and d == 1)
        sizes.append(s if keep_channel or g.rng.random() < 0.4 else 1)
    return g.tensor(dtype, sizes)


def gen_one_mvn(g, opname, fl, dtype, sizes, axes=None, cross_channel=None,
                sb="both", sb_mode="dims1", nv=True, eps=1e-5, fused=None,
                in_layout="packed", out_layout="packed", dist="normal",
                specials=None, group="mvn", variant="", in_buf=None):
    rank = len(sizes)
    if in_layout == "packed":
        in_t = g.tensor(dtype, sizes)
    elif in_layout == "strided":
        in_t = g.tensor(dtype, sizes, g.transposed_strides(sizes), extra=8)
    elif in_layout == "broadcast":
        in_t = g.tensor(dtype, sizes, g.broadcast_strides(sizes))
    else:
        raise ValueError(in_layout)
    out_t = (g.tensor(dtype, sizes) if out_layout == "packed" else
             g.tensor(dtype, sizes, g.padded_strides(sizes), extra=16))
    d = {"InputTensor": in_t, "OutputTensor": out_t, "ScaleTensor": None,
         "BiasTensor": None, "NormalizeVariance": bool(nv), "Epsilon": eps,
         "FusedActivation": fused}
    bufs = {}
    if sb in ("both", "scale"):
        d["ScaleTensor"] = scale_bias_tensor(g, dtype, sizes, fl, opname,
                                             sb_mode)
        bufs["ScaleTensor"] = g.buffer(d["ScaleTensor"], "normal", scale=1.5)
    if sb in ("both", "bias"):
        d["BiasTensor"] = scale_bias_tensor(g, dtype, sizes, fl, opname,
                                            sb_mode)
        bufs["BiasTensor"] = g.buffer(d["BiasTensor"], "normal", scale=1.0)
    if opname.endswith("NORMALIZATION1"):
        d["AxisCount"] = len(axes)
        d["Axes"] = list(axes)
        tag = "ax" + "".join(str(a) for a in axes)
    else:
        d["CrossChannel"] = bool(cross_channel)
        tag = "cc" if cross_channel else "nocc"
    op = {"Type": opname, "Desc": d}
    bufs["InputTensor"] = (in_buf(in_t) if in_buf else
                           g.buffer(in_t, dist, specials))
    fname = field_of(fused["Type"]) if fused else "none"
    cid = (f"{field_of(opname)}/{dtype}/{in_layout}-{out_layout}/{tag}/"
           f"sb_{sb}_{sb_mode}/nv{int(nv)}/fa_{fname}"
           f"{'/' + variant if variant else ''}/fl{fl:x}/r{rank}")
    g.add(group, cid, op, fl, bufs)


def random_axes(g, rank):
    k = int(g.rng.integers(1, rank + 1))
    axes = sorted(int(a) for a in g.rng.choice(rank, size=k, replace=False))
    if g.rng.random() < 0.3:
        axes = list(reversed(axes))  # order does not matter
    return axes


def gen_mvn(g):
    o = g.o
    mvn1 = "DML_OPERATOR_MEAN_VARIANCE_NORMALIZATION1"
    mvn = "DML_OPERATOR_MEAN_VARIANCE_NORMALIZATION"
    fusable = [n for n, s in o.OPS.items()
               if s["kind"] == "act" and s["fusable_from"] is not None]
    # MVN1 at the highest FL: ranks 1..8, random axes, every layout and
    # scale/bias form.
    for dtype in ("FLOAT32", "FLOAT16"):
        for rank in range(1, 9):
            for _ in range(2):
                sizes = pick_sizes(g, rank, 800)
                gen_one_mvn(
                    g, mvn1, 0x6400, dtype, sizes, axes=random_axes(g, rank),
                    sb=str(g.rng.choice(["both", "scale", "bias", "none"])),
                    sb_mode=str(g.rng.choice(["dims1", "zero", "full",
                                              "channel"])),
                    nv=bool(g.rng.random() < 0.75),
                    eps=float(g.rng.choice([1e-5, 1e-3, 0.0])),
                    in_layout=str(g.rng.choice(["packed", "strided",
                                                "broadcast"])),
                    out_layout=str(g.rng.choice(["packed", "padded"])))
        # Every input x output layout class, for both operators.
        for in_layout in ("packed", "strided", "broadcast"):
            for out_layout in ("packed", "padded"):
                gen_one_mvn(g, mvn1, 0x6400, dtype, pick_sizes(g, 4, 500),
                            axes=random_axes(g, 4), sb="both",
                            sb_mode="dims1", in_layout=in_layout,
                            out_layout=out_layout, variant="layouts")
                gen_one_mvn(g, mvn, 0x1000, dtype, pick_sizes(g, 4, 500),
                            cross_channel=bool(g.rng.random() < 0.5),
                            sb="both", sb_mode="zero", in_layout=in_layout,
                            out_layout=out_layout, variant="layouts")
        # The classic 4-D forms at each tier boundary of MVN1.
        for fl in (0x2100, 0x3000, 0x3100, 0x4000, 0x5200):
            sizes = [2, 3, 4, 5]
            for axes in ([2, 3], [1, 2, 3], [3], [0, 2, 3]):
                sb = "both" if fl < 0x5200 else str(
                    g.rng.choice(["scale", "bias"]))
                gen_one_mvn(g, mvn1, fl, dtype, sizes, axes=axes, sb=sb,
                            sb_mode=str(g.rng.choice(["dims1", "zero",
                                                      "channel"])),
                            nv=bool(g.rng.random() < 0.7))
        # MVN (CrossChannel form), FL 1_0, 4-D.
        for cc in (False, True):
            for nv in (False, True):
                for sb in ("both", "none"):
                    gen_one_mvn(g, mvn, 0x1000, dtype,
                                pick_sizes(g, 4, 600), cross_channel=cc,
                                sb=sb, sb_mode="dims1", nv=nv,
                                in_layout=str(g.rng.choice(["packed",
                                                            "strided"])),
                                out_layout=str(g.rng.choice(["packed",
                                                             "padded"])))
        # Every fused activation, into MVN1 and MVN, at its own FL and above.
        for name in fusable:
            ffl = o.OPS[name]["fusable_from"]
            fl1 = max(ffl, 0x3100)
            gen_one_mvn(g, mvn1, fl1, dtype,
                        pick_sizes(g, 3, 400), axes=[1, 2],
                        sb="both", sb_mode="dims1",
                        fused=fused_desc(g, name, fl1), group="fused")
            gen_one_mvn(g, mvn1, 0x6400, dtype,
                        pick_sizes(g, 2, 200), axes=[0],
                        sb="scale", sb_mode="zero",
                        fused=fused_desc(g, name, 0x6400), group="fused")
            fl0 = max(ffl, 0x1000)
            gen_one_mvn(g, mvn, fl0, dtype, [2, 3, 3, 4],
                        cross_channel=bool(g.rng.random() < 0.5),
                        sb="none", fused=fused_desc(g, name, fl0),
                        group="fused")
    # §7.6: large common offset, NaN/Inf in one group, constant groups.
    for dtype, dist in (("FLOAT32", "offset"), ("FLOAT16", "offset16")):
        for axes in ([1], [0, 1], [2, 3]):
            gen_one_mvn(g, mvn1, 0x3100, dtype, [2, 4, 8, 8], axes=axes,
                        sb="none", dist=dist, group="edge",
                        variant="large_offset")
    for dtype in ("FLOAT32", "FLOAT16"):
        for special in (np.nan, np.inf, -np.inf):
            for fname in (None, "DML_OPERATOR_ACTIVATION_RELU"):
                gen_one_mvn(g, mvn1, 0x6400, dtype, [3, 5], axes=[1],
                            sb="both", sb_mode="full",
                            fused=fused_desc(g, fname, 0x6400) if fname
                            else None,
                            specials=[special], group="edge",
                            variant=f"nonfinite_{special}")
        for eps in (0.0, 1e-5):
            def const_groups(t, dtype=dtype):
                # Exactly representable constants: the mean is exact, the
                # variance exactly 0 (Epsilon 0 -> NaN, else -> Bias).
                b = g.buffer(t)
                b[:] = np.array(2.0, dtype=b.dtype)
                return b
            for fname in (None, "DML_OPERATOR_ACTIVATION_HARD_SIGMOID"):
                gen_one_mvn(g, mvn1, 0x6400, dtype, [2, 3, 4], axes=[2],
                            sb="both", sb_mode="channel", eps=eps,
                            fused=fused_desc(g, fname, 0x6400) if fname
                            else None, in_buf=const_groups, group="edge",
                            variant=f"constant_eps{eps}")
        # Reduction over size-1 axes: out = Bias.
        gen_one_mvn(g, mvn1, 0x6400, dtype, [3, 1, 4], axes=[1], sb="both",
                    sb_mode="full", group="edge", variant="size1_axis")


def gen_large(g):
    o = g.o
    # 64K-element cases: a transcendental, an integer CLIP through strides,
    # MVN1 in FLOAT16 with per-channel scale/bias.
    n = 65536
    gen_one_elementwise(g, "DML_OPERATOR_ACTIVATION_SIGMOID", "sigmoid",
                        0x6400, "FLOAT32", 1, "packed", sizes=[n],
                        group="large", variant="64k", dist="wide")
    gen_one_elementwise(g, "DML_OPERATOR_ELEMENT_WISE_CLIP", "clip", 0x6400,
                        "INT16", 3, "strided", sizes=[16, 64, 64],
                        group="large", variant="64k")
    gen_one_mvn(g, "DML_OPERATOR_MEAN_VARIANCE_NORMALIZATION1", 0x6400,
                "FLOAT16", [4, 16, 32, 32], axes=[2, 3], sb="both",
                sb_mode="channel", group="large", variant="64k")
    gen_one_mvn(g, "DML_OPERATOR_MEAN_VARIANCE_NORMALIZATION1", 0x6400,
                "FLOAT32", [2, 128, 256], axes=[1, 2], sb="none",
                dist="normal", fused=fused_desc(
                    g, "DML_OPERATOR_ACTIVATION_GELU", 0x6400),
                group="large", variant="32k_groups")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--oracle", required=True, help="path to oracle.py")
    ap.add_argument("--out-dir", default=os.path.join(REPO, "tests", "data"))
    ap.add_argument("--seed", type=int, default=20261121)
    args = ap.parse_args()
    oracle = load_oracle(args.oracle)
    with tempfile.TemporaryDirectory() as tmp:
        case_pb2 = compile_protos(tmp)
        g = Gen(oracle, case_pb2, args.seed)
        gen_elementwise(g)
        gen_edges(g)
        gen_mvn(g)
        gen_large(g)
        os.makedirs(args.out_dir, exist_ok=True)
        g.write(args.out_dir)


if __name__ == "__main__":
    main()
