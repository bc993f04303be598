"""32 concurrent ExecuteStream streams, each with several requests in
flight; every response is matched to its request by request_id and checked
against NumPy."""

import threading
import unittest

import numpy as np

import dmlserve_client as dc
import reference as ref
from e2e_server import ServerTestCase, health_status

STREAMS = 32
PER_STREAM = 8


def make_request(stream, i):
    """Alternates operators and types so that streams mix kernels."""
    rng = np.random.default_rng(stream * 1000 + i)
    request_id = (stream << 16) | i
    kind = (stream + i) % 4
    if kind == 0:
        x = rng.uniform(-3, 3, size=(4, 33)).astype(np.float32)
        op = {"celu": {"alpha": 0.5 + i}}
        expected = ref.activation("celu", x, {"alpha": 0.5 + i})
        tol = "TRANSCENDENTAL"
    elif kind == 1:
        x = rng.uniform(-3, 3, size=(2, 3, 4, 5)).astype(np.float16)
        op = {"threshold": {"min": 0.1 * i, "scaleBias": {"scale": 2.0,
                                                         "bias": -0.5}}}
        expected = ref.threshold(x, 0.1 * i, (2.0, -0.5))
        tol = "ARITH"
    elif kind == 2:
        x = rng.uniform(-3, 3, size=(3, 4, 16)).astype(np.float32)
        op = {"mvn1": {"axes": [2], "axisCount": 1, "normalizeVariance": True,
                       "epsilon": 1e-5, "fusedActivation": {"relu": {}}}}
        expected = ref.mvn(x, [2], fused="relu")
        tol = "NORMALIZATION"
    else:
        x = rng.integers(-50, 50, size=(5, 7)).astype(np.int32)
        op = {"clip": {"min": -10.0 - i, "max": 20.0}}
        expected = np.clip(x, -10 - i, 20)
        tol = "EXACT"
    request, out = dc.build_request(op, x, request_id=request_id)
    return request, out, expected, x.dtype, tol


class ConcurrentStreamsTest(ServerTestCase):
    # Room for every request of every stream in flight at once.
    SERVER_ARGS = ("--max_in_flight=1024",)

    def test_32_concurrent_streams(self):
        results = [None] * STREAMS
        errors = []
        start = threading.Barrier(STREAMS)

        def run(stream):
            try:
                cases = [make_request(stream, i) for i in range(PER_STREAM)]
                start.wait(30)
                responses = self.client.stream([c[0] for c in cases],
                                               timeout=90)
                results[stream] = (cases, responses)
            except Exception as e:  # reported below, with the stream index
                errors.append((stream, e))

        threads = [threading.Thread(target=run, args=(s,))
                   for s in range(STREAMS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        self.assertFalse(errors, errors[:3])
        for stream, (cases, responses) in enumerate(results):
            by_id = {r.request_id: r for r in responses}
            self.assertEqual(len(responses), PER_STREAM)
            self.assertEqual(len(by_id), PER_STREAM, "duplicate request ids")
            for request, out, expected, dtype, tol in cases:
                r = by_id.get(request.request_id)
                self.assertIsNotNone(r, "no response to %x" %
                                     request.request_id)
                self.assertEqual(r.status_code, 0, r.status_message)
                y = dc.unpack(out, r.output)
                bad = ref.mismatches(y, expected, dtype, tol)
                self.assertFalse(bad, "request %x: %d mismatches" % (
                    request.request_id, len(bad)))
        self.assertEqual(health_status(self.target), "SERVING")

    def test_stream_of_many_small_requests(self):
        cases = [make_request(99, i) for i in range(200)]
        responses = self.client.stream([c[0] for c in cases])
        by_id = {r.request_id: r for r in responses}
        self.assertEqual(len(by_id), len(cases))
        for request, out, expected, dtype, tol in cases:
            r = by_id[request.request_id]
            self.assertEqual(r.status_code, 0, r.status_message)
            self.assertFalse(ref.mismatches(dc.unpack(out, r.output),
                                            expected, dtype, tol))


if __name__ == "__main__":
    unittest.main()
