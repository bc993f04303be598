"""The oracle-generated conformance corpus (tests/data/conformance_*.pb,
format tests/conformance/case.proto) driven through gRPC: every case's
ExecuteRequest goes to the real server over ExecuteStream and its output is
compared with the expected logical elements under the case's OPERATORS.md
section 8 tolerance class."""

import glob
import os
import unittest

import numpy as np

import case_pb2
import dmlserve_client as dc
import reference as ref
from e2e_server import ServerTestCase

DATA_DIR = os.environ.get("DMLS_CONFORMANCE_DATA", os.path.join(
    os.path.dirname(__file__), "..", "data"))

_DTYPES = {"FLOAT32": np.float32, "FLOAT16": np.float16, "INT8": np.int8,
           "UINT8": np.uint8, "INT16": np.int16, "UINT16": np.uint16,
           "INT32": np.int32, "UINT32": np.uint32, "INT64": np.int64,
           "UINT64": np.uint64}

BATCH = 64  # requests per stream: bounded memory, many in flight


def load_cases():
    cases = []
    for path in sorted(glob.glob(os.path.join(DATA_DIR, "conformance_*.pb"))):
        with open(path, "rb") as f:
            cases.extend(case_pb2.CaseSet.FromString(f.read()).cases)
    return cases


def output_desc(request):
    op = request.operator
    return getattr(op, op.WhichOneof("operator")).output


class ConformanceTest(ServerTestCase):
    SERVER_ARGS = ("--max_in_flight=1024",)

    def test_every_corpus_case(self):
        cases = load_cases()
        self.assertGreater(len(cases), 100, "corpus missing in " + DATA_DIR)
        ops = set()
        failures = []
        for start in range(0, len(cases), BATCH):
            batch = cases[start:start + BATCH]
            requests = []
            for i, case in enumerate(batch):
                request = case.request.__class__()
                request.CopyFrom(case.request)
                request.request_id = start + i
                requests.append(request)
            responses = self.client.stream(requests, timeout=90)
            by_id = {r.request_id: r for r in responses}
            self.assertEqual(len(by_id), len(batch))
            for i, case in enumerate(batch):
                r = by_id[start + i]
                ops.add(case.request.operator.WhichOneof("operator"))
                if r.status_code != 0:
                    failures.append("%s: status %d %s" % (
                        case.id, r.status_code, r.status_message))
                    continue
                dtype = _DTYPES[case.output_dtype]
                actual = dc.unpack(output_desc(case.request), r.output)
                expected = np.frombuffer(case.expected, dtype=dtype).reshape(
                    actual.shape)
                bad = ref.mismatches(actual, expected, dtype,
                                     case.tolerance_class)
                if bad and case.expected_ftz:
                    # OPERATORS.md 7.5: each element may instead match the
                    # result with float32 denormal inputs flushed.
                    flushed = np.frombuffer(case.expected_ftz,
                                            dtype=dtype).reshape(actual.shape)
                    also = set(ref.mismatches(actual, flushed, dtype,
                                              case.tolerance_class))
                    bad = [j for j in bad if j in also]
                if bad:
                    j = bad[0]
                    failures.append("%s: %d mismatches, first at %s: got %r "
                                    "expected %r" % (case.id, len(bad), j,
                                                     actual[j], expected[j]))
        self.assertFalse(failures, "%d of %d cases failed:\n%s" % (
            len(failures), len(cases), "\n".join(failures[:20])))
        # The corpus reaches every operator the server serves.
        served = {o.field for o in self.client.capabilities().operators}
        self.assertEqual(served - ops, set())


if __name__ == "__main__":
    unittest.main()
