"""Writes the ghz call data for the serving benchmark's payloads.

    make_data.py [--op=celu] [--dtype=float32] [--bytes=1KiB] [--out=FILE]

ghz takes the request as JSON (protobuf JSON mapping: bytes fields are
base64). This writes one dmlserve.v1.ExecuteRequest like dmls_load's
generated payload: OPERATOR over a packed 1-D tensor of BYTES of random
values in [-4, 4), with the operator's parameters set. The files for 64 KiB
and up are large (4/3 of the payload), so they are generated at run time
and never committed. Default output: bench/ghz/data/<op>_<dtype>_<bytes>.json
(ignored by git).
"""

import argparse
import base64
import json
import os
import random
import re
import struct
import sys

UNITS = {"": 1, "b": 1, "k": 1 << 10, "kib": 1 << 10, "kb": 1 << 10,
         "m": 1 << 20, "mib": 1 << 20, "mb": 1 << 20,
         "g": 1 << 30, "gib": 1 << 30, "gb": 1 << 30}

# The parameters each generated operator needs (all are required on the
# wire); the same values as dmls_load (bench/load/payload.cc).
PARAMS = {
    "celu": {"alpha": 1.0},
    "elu": {"alpha": 1.0},
    "threshold": {"min": -1.0},
    "clip": {"min": -1.0, "max": 1.0},
    "leaky_relu": {"alpha": 1.0},
    "relu": {},
    "sigmoid": {},
    "tanh": {},
    "identity": {},
}


def parse_bytes(text):
    m = re.fullmatch(r"(\d+)\s*([A-Za-z]*)", text.strip())
    if not m or m.group(2).lower() not in UNITS:
        sys.exit("bad --bytes '%s' (want e.g. 64KiB)" % text)
    return int(m.group(1)) * UNITS[m.group(2).lower()]


def random_payload(count, dtype):
    try:
        import numpy
        rng = numpy.random.default_rng(1)
        values = rng.uniform(-4.0, 4.0, count)
        return values.astype("<f4" if dtype == "float32" else "<f2").tobytes()
    except ImportError:  # slower, same distribution
        rng = random.Random(1)
        fmt = "<%d%s" % (count, "f" if dtype == "float32" else "e")
        return struct.pack(fmt, *(rng.uniform(-4.0, 4.0) for _ in range(count)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--op", default="celu", choices=sorted(PARAMS))
    parser.add_argument("--dtype", default="float32",
                        choices=["float32", "float16"])
    parser.add_argument("--bytes", default="1KiB")
    parser.add_argument("--out", default="")
    args = parser.parse_args()

    size = parse_bytes(args.bytes)
    element = 4 if args.dtype == "float32" else 2
    if size == 0 or size % element:
        sys.exit("--bytes must be a positive multiple of %d" % element)
    count = size // element
    data_type = "DATA_TYPE_" + args.dtype.upper()
    tensor = {"dataType": data_type, "sizes": [str(count)],
              "totalTensorSizeInBytes": str(size)}
    body = {"input": tensor, "output": dict(tensor)}
    body.update(PARAMS[args.op])
    request = {
        "requestId": "1",
        "operator": {args.op: body},
        "input": base64.b64encode(random_payload(count, args.dtype)).decode(),
    }
    out = args.out or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "data",
        "%s_%s_%s.json" % (args.op, args.dtype, args.bytes))
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump(request, f)
    print("wrote %s (%s, %d elements)" % (out, args.op, count))


if __name__ == "__main__":
    main()
