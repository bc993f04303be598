#!/usr/bin/env python3
"""Generates engine/ops/testdata/validation_cases.txt: operator descriptors
(valid, edge-case and broken in every field) with the first rule that the
reference oracle (OPERATORS.md §9) reports for each. The C++ validator test
replays the file; neither Python nor the oracle is needed at test time.

Usage (Debian's Python, which has numpy):
  /usr/bin/python3 tests/gen/gen_validation_cases.py \
      --oracle ../shared/oracle.py --out engine/ops/testdata/validation_cases.txt

Line format (one case per line; '#' starts a comment line). Space-separated
key=value tokens, every key optional except fl, op, inplace and expect:
  fl=<raw feature level, hex>  op=<raw DML_OPERATOR_TYPE>  inplace=0|1
  expect=<RULE_ID or ->   ('-' = valid)
  in= sc= bi= out=  tensors: type/data_type/flags/dimcount/sizes/strides/total/align
        dimcount '-' = absent (sizes.size()); sizes/strides comma lists,
        '.' = empty list, strides '-' = NULL
  min= max=  sbs= sbb= (ScaleBias present when either key is given, '-' = member missing)
  a0= a1=  activation params (compact order)
  axc= axes=<list>  nv= cc=  eps=
  fa=type/has_tensors/p0/p1  (fused activation; p '-' = missing)
Floats are binary32 values written as Python repr (nan, inf, -inf allowed).
"""

import argparse
import importlib.util
import random
import warnings

import numpy as np

U32 = 2**32 - 1


def load_oracle(path):
    spec = importlib.util.spec_from_file_location("oracle", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def f32(v):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(np.float32(v))


# ---------------------------------------------------------------------------
# A case in the C++ shape (engine/core/operator_desc.h), as a dict:
#   fl, op (int), inplace, tensors in/sc/bi/out (dict or None), min, max,
#   sb (None or {"scale": v|None, "bias": v|None}), a (list of 2, None=missing),
#   axc, axes, nv, cc, eps, fa (None or {"type","tensors","p"}).
# Tensor: {"tt","dt","flags","dc" (None = absent),"sizes","strides","total","align"}


class Gen:
    def __init__(self, oracle, seed):
        self.o = oracle
        self.rng = random.Random(seed)
        self.ops = {v["code"]: (k, v) for k, v in oracle.OPS.items()}
        self.fls = [v for _, v in oracle.FEATURE_LEVELS]
        self.codes = {k: v for k, v in oracle.DATA_TYPE_CODES.items()}

    # -- building blocks ----------------------------------------------------
    def tensor(self, dtype_code, sizes, strides=None, pad=0, align=0):
        name = self.o.DATA_TYPE_BY_CODE[dtype_code]
        total = self.o.calc_buffer_tensor_size(name, sizes, strides) + 4 * pad
        return {"tt": 1, "dt": dtype_code, "flags": 0, "dc": None,
                "sizes": list(sizes), "strides": strides, "total": total,
                "align": align}

    def tier(self, spec, fl):
        t = self.o.tier_for(spec["tiers"], fl)
        return t if t else spec["tiers"][0]

    def base(self, code, fl, rank=None, dtype=None):
        """A valid case of operator `code` at `fl` (when fl >= introduced)."""
        name, spec = self.ops[code]
        _, ranks, types = self.tier(spec, fl)
        r = rank if rank is not None else self.rng.choice(list(ranks))
        dt = self.codes[dtype if dtype else self.rng.choice(list(types))]
        sizes = [self.rng.randint(1, 4) for _ in range(r)]
        layout = self.rng.random()
        strides = None
        if layout < 0.25:
            strides = self.o.packed_strides(sizes)
        elif layout < 0.4:
            # padded row-major
            strides = self.o.packed_strides([s + 1 for s in sizes])
        align = self.rng.choice([0, 0, 16, 32, 256])
        pad = self.rng.choice([0, 0, 0, 1, 3])
        inp = self.tensor(dt, sizes, strides, pad, align)
        out = self.tensor(dt, sizes, None if self.rng.random() < 0.7 else
                          self.o.packed_strides(sizes))
        c = {"fl": fl, "op": code, "inplace": 0, "in": inp, "sc": None,
             "bi": None, "out": out, "min": None, "max": None, "sb": None,
             "a": [None, None], "axc": None, "axes": None, "nv": None,
             "cc": None, "eps": None, "fa": None}
        kind = spec["kind"]
        if kind == "unary_sb":
            c["min"] = f32(self.rng.uniform(-3, 3))
            if "Max" in spec["params"]:
                c["max"] = f32(self.rng.uniform(-3, 3))
            if self.rng.random() < 0.5 and name != "x":
                c["sb"] = {"scale": f32(self.rng.uniform(-2, 2)),
                           "bias": f32(self.rng.uniform(-2, 2))}
            if c["sb"] and dt in (10, 11):
                c["sb"] = None
        elif kind == "act":
            for i, p in enumerate(spec["params"]):
                c["a"][i] = self.good_param(name, p)
        else:
            if self.rng.random() < 0.6:
                ssz = self.broadcast_sizes(sizes, fl, kind)
                c["sc"] = self.tensor(dt, ssz)
                c["bi"] = self.tensor(dt, ssz if self.rng.random() < 0.5 else
                                      self.broadcast_sizes(sizes, fl, kind))
                if self.rng.random() < 0.2:  # zero-stride broadcast, any FL
                    c["sc"] = self.tensor(dt, sizes,
                                          [0] * r if r != 1 else [0])
                    c["sc"]["strides"] = [0 if i != 1 else 1
                                          for i in range(r)]
                    c["sc"]["total"] = self.o.calc_buffer_tensor_size(
                        self.o.DATA_TYPE_BY_CODE[dt], sizes,
                        c["sc"]["strides"])
            c["nv"] = self.rng.choice([0, 1])
            c["eps"] = f32(self.rng.choice([0.0, 1e-5, 1e-3, 0.5]))
            if kind == "mvn1":
                k = self.rng.randint(1, r)
                c["axes"] = self.rng.sample(range(r), k)
                c["axc"] = k
            else:
                c["cc"] = self.rng.choice([0, 1])
            if self.rng.random() < 0.5:
                c["fa"] = self.good_fused(fl)
        return c

    def broadcast_sizes(self, sizes, fl, kind):
        out = []
        for i, s in enumerate(sizes):
            keep_channel = (i == 1 and kind == "mvn1" and fl < 0x4000)
            out.append(s if keep_channel or self.rng.random() < 0.5 else 1)
        return out

    def good_param(self, opname, p):
        if opname.endswith("SOFTPLUS") and p == "Steepness":
            return f32(self.rng.choice([1.0, 1.5, 2.0, 10.0]))
        if opname.endswith("CELU"):
            return f32(self.rng.choice([1.0, 0.5, -2.0, 3.0]))
        return f32(self.rng.uniform(-2, 2))

    def good_fused(self, fl):
        cands = [(c, n, s) for c, (n, s) in self.ops.items()
                 if s["fusable_from"] is not None and s["fusable_from"] <= fl]
        code, name, spec = self.rng.choice(cands)
        p = [None, None]
        for i, pn in enumerate(spec["params"]):
            p[i] = self.good_param(name, pn)
        return {"type": code, "tensors": 0, "p": p}

    # -- oracle form ---------------------------------------------------------
    def o_tensor(self, t):
        if t is None:
            return None
        d = {"Type": t["tt"], "DataType": t["dt"], "Flags": t["flags"],
             "Sizes": list(t["sizes"]),
             "Strides": None if t["strides"] is None else list(t["strides"]),
             "TotalTensorSizeInBytes": t["total"],
             "GuaranteedBaseOffsetAlignment": t["align"]}
        if t["dc"] is not None:
            d["DimensionCount"] = t["dc"]
        return d

    def o_params(self, code, vals, desc):
        if code not in self.ops:
            return
        for i, p in enumerate(self.ops[code][1]["params"]):
            if i < 2 and vals[i] is not None:
                desc[p] = vals[i]

    def to_oracle(self, c):
        d = {"InputTensor": self.o_tensor(c["in"]),
             "OutputTensor": self.o_tensor(c["out"])}
        kind = self.ops[c["op"]][1]["kind"] if c["op"] in self.ops else None
        if kind in ("mvn", "mvn1"):
            d["ScaleTensor"] = self.o_tensor(c["sc"])
            d["BiasTensor"] = self.o_tensor(c["bi"])
            if c["axc"] is not None:
                d["AxisCount"] = c["axc"]
            if kind == "mvn1":
                d["Axes"] = list(c["axes"] or [])
            for k, v in (("NormalizeVariance", c["nv"]),
                         ("CrossChannel", c["cc"] if kind == "mvn" else None),
                         ("Epsilon", c["eps"])):
                if v is not None:
                    d[k] = v
            if c["fa"] is not None:
                fd = {"InputTensor": None, "OutputTensor": None}
                if c["fa"]["tensors"]:
                    fd["InputTensor"] = self.o_tensor(c["in"])
                self.o_params(c["fa"]["type"], c["fa"]["p"], fd)
                d["FusedActivation"] = {"Type": c["fa"]["type"], "Desc": fd}
        elif kind == "unary_sb":
            if c["min"] is not None:
                d["Min"] = c["min"]
            if c["max"] is not None and "Max" in self.ops[c["op"]][1]["params"]:
                d["Max"] = c["max"]
            if c["sb"] is not None:
                sb = {}
                if c["sb"]["scale"] is not None:
                    sb["Scale"] = c["sb"]["scale"]
                if c["sb"]["bias"] is not None:
                    sb["Bias"] = c["sb"]["bias"]
                d["ScaleBias"] = sb
        elif kind == "act":
            self.o_params(c["op"], c["a"], d)
        return {"Type": c["op"], "Desc": d}

    # -- line form -----------------------------------------------------------
    @staticmethod
    def lst(v):
        return "." if len(v) == 0 else ",".join(str(x) for x in v)

    @staticmethod
    def num(v):
        return "-" if v is None else repr(float(v))

    def line_tensor(self, t):
        return "/".join([str(t["tt"]), str(t["dt"]), str(t["flags"]),
                         "-" if t["dc"] is None else str(t["dc"]),
                         self.lst(t["sizes"]),
                         "-" if t["strides"] is None else self.lst(t["strides"]),
                         str(t["total"]), str(t["align"])])

    def to_line(self, c, expect, note):
        toks = [f"fl=0x{c['fl']:X}", f"op={c['op']}",
                f"inplace={c['inplace']}", f"expect={expect or '-'}"]
        for k in ("in", "sc", "bi", "out"):
            if c[k] is not None:
                toks.append(f"{k}={self.line_tensor(c[k])}")
        for k in ("min", "max", "eps"):
            if c[k] is not None:
                toks.append(f"{k}={self.num(c[k])}")
        if c["sb"] is not None:
            toks.append(f"sbs={self.num(c['sb']['scale'])}")
            toks.append(f"sbb={self.num(c['sb']['bias'])}")
        for i in range(2):
            if c["a"][i] is not None:
                toks.append(f"a{i}={self.num(c['a'][i])}")
        if c["axc"] is not None:
            toks.append(f"axc={c['axc']}")
        if c["axes"]:
            toks.append(f"axes={self.lst(c['axes'])}")
        for k in ("nv", "cc"):
            if c[k] is not None:
                toks.append(f"{k}={c[k]}")
        if c["fa"] is not None:
            fa = c["fa"]
            toks.append("fa=" + "/".join([str(fa["type"]), str(fa["tensors"]),
                                          self.num(fa["p"][0]),
                                          self.num(fa["p"][1])]))
        if note:
            toks.append(f"note={note}")
        return " ".join(toks)


# ---------------------------------------------------------------------------
# Mutations: each breaks (or stresses) one field of a case. They return False
# when they do not apply to the case.

def t_of(c, rng, with_scale=True):
    names = ["in", "out"] + (["sc", "bi"] if with_scale else [])
    names = [n for n in names if c[n] is not None]
    return rng.choice(names)


def recompute_total(g, t):
    name = g.o.DATA_TYPE_BY_CODE.get(t["dt"])
    if name and name != "UNKNOWN":
        t["total"] = g.o.calc_buffer_tensor_size(name, t["sizes"], t["strides"])


def mutations(g):
    rng = g.rng
    M = {}

    def m(fn):
        M[fn.__name__] = fn
        return fn

    @m
    def tensor_type(c):
        c[t_of(c, rng)]["tt"] = rng.choice([0, 2, 7])

    @m
    def dtype_unknown(c):
        c[t_of(c, rng)]["dt"] = rng.choice([0, 14, 99])

    @m
    def dtype_other(c):
        t = c[t_of(c, rng)]
        t["dt"] = rng.randint(1, 13)
        recompute_total(g, t)

    @m
    def flags_bad(c):
        c[t_of(c, rng)]["flags"] = rng.choice([2, 3, 0x80000000])

    @m
    def owned_by_dml(c):
        c[t_of(c, rng)]["flags"] = 1

    @m
    def dimcount_range(c):
        c[t_of(c, rng)]["dc"] = rng.choice([0, 9, 12])

    @m
    def dimcount_disagree(c):
        t = c[t_of(c, rng)]
        t["dc"] = len(t["sizes"]) + rng.choice([1, -1])
        if t["dc"] == 0:
            t["dc"] = 2 if len(t["sizes"]) != 2 else 3

    @m
    def dimcount_explicit(c):
        t = c[t_of(c, rng)]
        t["dc"] = len(t["sizes"])

    @m
    def size_invalid(c):
        t = c[t_of(c, rng)]
        t["sizes"][rng.randrange(len(t["sizes"]))] = rng.choice(
            [2**32, 2**40, 2**64 - 1])

    @m
    def size_zero(c):
        t = c[t_of(c, rng)]
        t["sizes"][rng.randrange(len(t["sizes"]))] = 0

    @m
    def size_u32max(c):
        t = c[t_of(c, rng)]
        t["sizes"][rng.randrange(len(t["sizes"]))] = U32
        t["strides"] = None

    @m
    def strides_len(c):
        t = c[t_of(c, rng)]
        t["strides"] = [1] * (len(t["sizes"]) + rng.choice([1, -1]))

    @m
    def stride_invalid(c):
        t = c[t_of(c, rng)]
        t["strides"] = g.o.packed_strides(t["sizes"])
        t["strides"][rng.randrange(len(t["sizes"]))] = rng.choice(
            [2**32, 2**50])

    @m
    def too_large_count(c):
        t = c[t_of(c, rng)]
        t["sizes"] = [65536, 65536] + [1] * (len(t["sizes"]) - 2) \
            if len(t["sizes"]) >= 2 else [U32]
        if len(t["sizes"]) == 1:
            t["sizes"] = [U32]
        t["strides"] = None
        recompute_total(g, t)

    @m
    def too_large_last_index(c):
        t = c[t_of(c, rng)]
        t["sizes"][0] = 3
        t["strides"] = g.o.packed_strides(t["sizes"])
        t["strides"][0] = 2**31
        recompute_total(g, t)

    @m
    def too_large_total(c):
        t = c[t_of(c, rng)]
        t["total"] = rng.choice([2**36, 2**40 + 4, 2**34 + 4])

    @m
    def total_small(c):
        t = c[t_of(c, rng)]
        t["total"] = max(0, t["total"] - rng.choice([1, 4, 8]))

    @m
    def total_not_dword(c):
        t = c[t_of(c, rng)]
        t["total"] += rng.choice([1, 2, 3, 6])

    @m
    def align_bad(c):
        t = c[t_of(c, rng)]
        t["align"] = rng.choice([3, 6, 24, 1, 2, 4, 8, 2**63])

    @m
    def rank_change(c):
        t = c[t_of(c, rng)]
        r = rng.choice([1, 2, 3, 5, 6, 8, 4])
        t["sizes"] = [rng.randint(1, 3) for _ in range(r)]
        t["strides"] = None
        recompute_total(g, t)

    @m
    def all_rank(c):
        r = rng.choice([1, 2, 3, 5, 6, 8])
        sizes = [rng.randint(1, 3) for _ in range(r)]
        for k in ("in", "sc", "bi", "out"):
            if c[k] is not None:
                c[k]["sizes"] = list(sizes)
                c[k]["strides"] = None
                recompute_total(g, c[k])
        if c["axes"] is not None:
            c["axes"] = [a for a in c["axes"] if a < r] or [0]
            c["axc"] = len(c["axes"])

    @m
    def all_dtype(c):
        dt = rng.randint(1, 13)
        for k in ("in", "sc", "bi", "out"):
            if c[k] is not None:
                c[k]["dt"] = dt
                recompute_total(g, c[k])
        if dt in (10, 11) and c["sb"] is not None and rng.random() < 0.3:
            c["sb"] = None

    @m
    def sizes_mismatch(c):
        t = c["out"]
        i = rng.randrange(len(t["sizes"]))
        t["sizes"][i] += 1
        t["strides"] = None
        recompute_total(g, t)

    @m
    def overlap_zero(c):
        t = c["out"]
        i = max(range(len(t["sizes"])), key=lambda k: t["sizes"][k])
        t["sizes"][i] = max(2, t["sizes"][i])
        t["strides"] = g.o.packed_strides(t["sizes"])
        t["strides"][i] = 0
        recompute_total(g, t)
        c["in"]["sizes"] = list(t["sizes"])
        recompute_total(g, c["in"])

    @m
    def interleaved(c):
        # A layout that fails the nesting test: enumeration decides.
        t = c["out"]
        r = len(t["sizes"])
        if r < 2:
            return False
        t["sizes"] = [1] * (r - 2) + [3, 2]
        t["strides"] = [6] * (r - 2) + rng.choice([[2, 3], [2, 1], [1, 2],
                                                   [3, 1]])
        recompute_total(g, t)
        c["in"]["sizes"] = list(t["sizes"])
        c["in"]["strides"] = None
        recompute_total(g, c["in"])

    @m
    def missing_tensor(c):
        c[rng.choice(["in", "out"])] = None

    @m
    def drop_param(c):
        keys = [k for k in ("min", "max", "axc", "nv", "cc", "eps")
                if c[k] is not None]
        idx = [i for i in range(2) if c["a"][i] is not None]
        if not keys and not idx:
            return False
        if idx and (not keys or rng.random() < 0.5):
            c["a"][rng.choice(idx)] = None
        else:
            c[rng.choice(keys)] = None

    @m
    def scale_bias_member(c):
        if g.ops[c["op"]][1]["kind"] != "unary_sb":
            return False
        c["sb"] = {"scale": 1.0, "bias": 0.5}
        c["sb"][rng.choice(["scale", "bias"])] = None

    @m
    def scale_bias_64(c):
        if g.ops[c["op"]][1]["kind"] != "unary_sb":
            return False
        dt = rng.choice([10, 11])
        for k in ("in", "out"):
            if c[k] is not None:
                c[k]["dt"] = dt
                recompute_total(g, c[k])
        c["sb"] = {"scale": 2.0, "bias": -1.0}

    @m
    def bad_float(c):
        v = rng.choice([0.0, -0.0, float("nan"), float("inf"), -float("inf"),
                        0.5, 0.999, 1e-50, -1.0, 1e39])
        if g.ops[c["op"]][1]["kind"] == "act":
            idx = [i for i in range(2) if c["a"][i] is not None]
            if not idx:
                return False
            c["a"][rng.choice(idx)] = f32(v)
        elif c["eps"] is not None:
            c["eps"] = f32(v)
        else:
            c["min"] = f32(v)

    @m
    def bool_bad(c):
        keys = [k for k in ("nv", "cc") if c[k] is not None]
        if not keys:
            return False
        c[rng.choice(keys)] = rng.choice([2, 7, 2**31])

    @m
    def pairing(c):
        if c["sc"] is None and c["bi"] is None:
            return False
        c[rng.choice(["sc", "bi"])] = None

    @m
    def broadcast(c):
        t = c[rng.choice(["sc", "bi"])]
        if t is None:
            return False
        i = rng.randrange(len(t["sizes"]))
        if rng.random() < 0.5:
            t["sizes"][i] = c["in"]["sizes"][i] + 1 if c["in"] else 7
        elif len(t["sizes"]) >= 2:
            t["sizes"][1] = 1
            if c["in"]:
                c["in"]["sizes"][1] = max(2, c["in"]["sizes"][1])
                c["out"]["sizes"][1] = c["in"]["sizes"][1] if c["out"] else 0
                for k in ("in", "out"):
                    if c[k]:
                        c[k]["strides"] = None
                        recompute_total(g, c[k])
        t["strides"] = None
        recompute_total(g, t)

    @m
    def axes_bad(c):
        if c["axes"] is None:
            return False
        r = len(c["in"]["sizes"]) if c["in"] else 4
        which = rng.choice(["count", "empty", "range", "dup", "nocount"])
        if which == "count":
            c["axc"] = len(c["axes"]) + rng.choice([1, -1, 2**32])
        elif which == "empty":
            c["axes"] = []
            c["axc"] = 0
        elif which == "range":
            c["axes"] = c["axes"] + [rng.choice([r, r + 3, 2**32 + 1])]
            c["axc"] = len(c["axes"])
        elif which == "dup":
            c["axes"] = c["axes"] + [c["axes"][0]]
            c["axc"] = len(c["axes"])
        else:
            c["axc"] = None

    @m
    def fused_bad(c):
        if g.ops[c["op"]][1]["kind"] not in ("mvn", "mvn1"):
            return False
        which = rng.choice(["type", "late", "tensors", "param", "missing"])
        fa = c["fa"] or g.good_fused(c["fl"])
        c["fa"] = fa
        if which == "type":
            fa["type"] = rng.choice([0, 8, 32, 36, 41, 42, 48, 73, 115, 158,
                                     167, 168, 153, 171, 999])
        elif which == "late":
            fa["type"] = rng.choice([128, 157, 90])
            fa["p"] = [1.0, 0.5]
        elif which == "tensors":
            fa["tensors"] = 1
        elif which == "param":
            fa["type"] = rng.choice([128, 49])
            fa["p"] = [f32(rng.choice([0.0, 0.5, float("nan"), float("inf"),
                                       2.0])), None]
        else:
            fa["type"] = rng.choice([128, 49, 37, 45, 90, 40])
            fa["p"] = [None, 1.0] if rng.random() < 0.5 else [1.0, None]

    @m
    def inplace(c):
        c["inplace"] = 1

    @m
    def inplace_layout(c):
        c["inplace"] = 1
        if c["out"] is None or c["in"] is None:
            return
        which = rng.choice(["strides", "packed_explicit", "dtype"])
        if which == "strides":
            c["out"]["strides"] = g.o.packed_strides(
                [s + 1 for s in c["out"]["sizes"]])
            recompute_total(g, c["out"])
        elif which == "packed_explicit":
            c["in"]["strides"] = None
            c["out"]["strides"] = g.o.packed_strides(c["out"]["sizes"])
        else:
            c["out"]["dt"] = c["in"]["dt"] % 8 + 1
            recompute_total(g, c["out"])

    @m
    def fl_unknown(c):
        c["fl"] = rng.choice([0, 0x2200, 0x7000, 0x1001, 0xFFFFFFFF])

    @m
    def op_unknown(c):
        c["op"] = rng.choice([0, 1, 36, 48, 153, 171, 1000])

    return M


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--oracle", required=True, help="path to oracle.py")
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=20261121)
    ap.add_argument("--random", type=int, default=250,
                    help="number of random multi-mutation cases")
    args = ap.parse_args()
    o = load_oracle(args.oracle)
    g = Gen(o, args.seed)
    M = mutations(g)
    rng = g.rng
    lines = []
    seen = set()

    U64 = 2**64 - 1

    def representable(c):
        # The C++ descriptor holds uint64 sizes/strides/totals/axes and
        # uint32 enums/flags/counts/BOOLs: skip what the wire cannot carry.
        def ok(v, hi):
            return v is None or 0 <= v <= hi
        for k in ("in", "sc", "bi", "out"):
            t = c[k]
            if t is None:
                continue
            if not all(ok(t[f], U32) for f in ("tt", "dt", "flags", "dc")):
                return False
            if not all(ok(t[f], U64) for f in ("total", "align")):
                return False
            if not all(ok(v, U64) for v in t["sizes"] + (t["strides"] or [])):
                return False
        if not ok(c["axc"], U64) or not all(ok(a, U64)
                                             for a in (c["axes"] or [])):
            return False
        return ok(c["nv"], U32) and ok(c["cc"], U32)

    def emit(c, note):
        if not representable(c):
            return None
        exp = o.validate_rule(g.to_oracle(c), c["fl"], bool(c["inplace"]))
        line = g.to_line(c, exp, note)
        if line not in seen:
            seen.add(line)
            lines.append(line)
        return exp

    import copy

    def apply(fn, c):
        # A mutation that does not fit the case (e.g. a missing tensor it
        # would edit) is skipped.
        try:
            return fn(c) is not False
        except (TypeError, KeyError, IndexError, ValueError):
            return False
    codes = sorted(g.ops)
    # 1. A valid case per operator and FL (and OP_NOT_AVAILABLE below it).
    for code in codes:
        for fl in g.fls:
            emit(g.base(code, fl), "base")
    # 2. Every mutation on every operator at a random FL.
    for code in codes:
        for name, fn in sorted(M.items()):
            for _ in range(1):
                fl = rng.choice(g.fls)
                c = g.base(code, fl)
                c2 = copy.deepcopy(c)
                if not apply(fn, c2):
                    continue
                emit(c2, name)
    # 3. The parameter and cross-tensor mutations again, at FLs where the
    #    operator exists, so that the operator-specific rules are reached.
    targeted = ["drop_param", "scale_bias_member", "scale_bias_64",
                "bad_float", "bool_bad", "pairing", "broadcast", "axes_bad",
                "fused_bad", "inplace", "inplace_layout", "sizes_mismatch",
                "interleaved", "overlap_zero", "all_rank", "all_dtype"]
    for code in codes:
        intro = g.ops[code][1]["introduced"]
        fls = [f for f in g.fls if f >= intro]
        # MVN/MVN1 carry most of the operator-specific rules: more tries.
        tries = 30 if g.ops[code][1]["kind"] in ("mvn", "mvn1") else 8
        for name in targeted:
            for _ in range(tries):
                c = g.base(code, rng.choice(fls))
                if apply(M[name], c):
                    emit(c, name)
    # 4. Random combinations of two or three mutations (rule order).
    names = sorted(M)
    for _ in range(args.random):
        code = rng.choice(codes)
        c = g.base(code, rng.choice(g.fls))
        applied = []
        for _ in range(rng.randint(2, 3)):
            n = rng.choice(names)
            if n in ("op_unknown", "fl_unknown") and rng.random() < 0.8:
                continue
            c2 = copy.deepcopy(c)
            if apply(M[n], c2):
                c = c2
                applied.append(n)
        emit(c, "+".join(applied) or "base")

    with open(args.out, "w") as f:
        f.write("# Generated by tests/gen/gen_validation_cases.py from the "
                "reference oracle; do not edit.\n")
        f.write(f"# seed={args.seed} cases={len(lines)}\n")
        for line in lines:
            f.write(line + "\n")
    counts = {}
    for line in lines:
        r = line.split(" expect=")[1].split(" ")[0]
        counts[r] = counts.get(r, 0) + 1
    for r in sorted(counts):
        print(f"{counts[r]:5d} {r}")
    print(f"{len(lines)} cases -> {args.out}")


if __name__ == "__main__":
    main()
