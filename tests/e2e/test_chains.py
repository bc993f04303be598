"""Chains (ExecuteChain) end to end: results equal the same operators run
one by one with inline Execute; inline, resident and earlier-step sources;
a chain with an invalid step is rejected with the step's path and nothing
runs; 64 concurrent clients upload, chain and download at once."""

import threading
import unittest

import numpy as np

import dmlserve_client as dc
import reference as ref
from dmlserve.v1 import dmlserve_pb2 as pb
from e2e_server import ServerTestCase, health_status
from resident_helpers import (CELU, EXHAUSTED, INVALID, NOT_FOUND, THRESHOLD,
                              RejectionAsserts, mvn1_op, random_array)

MAX_STEPS = 8


def assert_close(test, actual, expected, dtype, tol_class):
    bad = ref.mismatches(actual, np.asarray(expected, np.float64), dtype,
                         tol_class)
    test.assertEqual(bad[:5], [], "%d mismatches" % len(bad))


class ChainResultsTest(ServerTestCase):
    TENANT = "chains"

    def test_celu_mvn1_threshold_equals_three_executes(self):
        x = random_array((2, 3, 4, 5), seed=10)
        scale = random_array((1, 3, 1, 1), seed=11, low=0.5, high=2.0)
        bias = random_array((1, 3, 1, 1), seed=12)
        mvn = mvn1_op([2, 3], fused="relu")
        # One by one, inline.
        y0 = self.client.execute(CELU, x)
        y1 = self.client.execute(mvn, {"input": y0, "scale": scale,
                                       "bias": bias})
        y2 = self.client.execute(THRESHOLD, y1)
        # As one chain: the bias from a resident tensor, step 1 kept.
        bias_h = self.client.create_tensor(bias)
        chain = dc.Chain()
        a = chain.step(CELU, x, return_output=True)
        b = chain.step(mvn, a, scale=scale, bias=bias_h, keep_output=True)
        chain.step(THRESHOLD, b, return_output=True)
        result = self.client.chain(chain)
        self.assertEqual(sorted(result.arrays), [0, 2])
        self.assertEqual(sorted(result.handles), [1])
        self.assertTrue(result.engine)
        assert_close(self, result.arrays[0], y0, np.float32, "TRANSCENDENTAL")
        assert_close(self, self.client.download(result.handles[1]), y1,
                     np.float32, "NORMALIZATION")
        assert_close(self, result.arrays[2], y2, np.float32, "NORMALIZATION")
        # And both against the float64 reference of the composition.
        expected = ref.threshold(ref.mvn(ref.activation(
            "celu", x, CELU["celu"]).astype(np.float32), [2, 3], scale, bias,
            fused="relu").astype(np.float32), 0.25)
        assert_close(self, result.arrays[2], expected, np.float32,
                     "NORMALIZATION")
        self.client.release(result.handles[1])
        self.client.release(bias_h)

    def test_float16_chain_of_activations(self):
        x = random_array((3, 40), seed=13, dtype=np.float16)
        ops = [{"leaky_relu": {"alpha": 0.1}}, {"clip": {"min": -1.0,
                                                          "max": 2.5}},
               {"tanh": {}}, {"linear": {"alpha": 1.5, "beta": -0.5}}]
        expected = x
        chain = dc.Chain()
        prev = x
        for i, op in enumerate(ops):
            expected = self.client.execute(op, expected)
            prev = chain.step(op, prev, return_output=i == len(ops) - 1)
        result = self.client.chain(chain)
        self.assertEqual(result.arrays[3].dtype, np.float16)
        assert_close(self, result.arrays[3], expected, np.float16,
                     "TRANSCENDENTAL")

    def test_handles_in_output_handle_and_in_place(self):
        x = random_array((4, 64), seed=14)
        h_in = self.client.create_tensor(x)
        h_out = self.client.create_tensor(dc.tensor_desc(np.float32, (4, 64)))
        chain = dc.Chain()
        a = chain.step(CELU, h_in)
        chain.step(THRESHOLD, a, output_handle=h_out)
        result = self.client.chain(chain)
        self.assertEqual(result.arrays, {})
        self.assertEqual(result.handles[1].handle, h_out.handle)
        y = self.client.execute(THRESHOLD, self.client.execute(CELU, x))
        assert_close(self, self.client.download(h_out), y, np.float32,
                     "TRANSCENDENTAL")
        np.testing.assert_array_equal(self.client.download(h_in), x)
        # In place on the resident input: the handle is updated.
        chain = dc.Chain()
        a = chain.step(CELU, h_in, in_place=True)
        chain.step({"relu": {}}, a, return_output=True)
        result = self.client.chain(chain)
        celu_x = self.client.execute(CELU, x)
        assert_close(self, self.client.download(h_in), celu_x, np.float32,
                     "EXACT")
        assert_close(self, result.arrays[1], np.maximum(celu_x, 0), np.float32,
                     "EXACT")
        self.client.release(h_in)
        self.client.release(h_out)


class ChainRejectionTest(RejectionAsserts, ServerTestCase):
    SERVER_ARGS = ("--max_chain_steps=%d" % MAX_STEPS,)
    TENANT = "chains"

    def test_invalid_step_rejected_with_its_path_and_nothing_run(self):
        x = random_array((1, 2, 4, 4), seed=15)
        marker = np.full((1, 2, 4, 4), 7.0, np.float32)
        h = self.client.create_tensor(marker)
        before = {t.handle for t in self.client.list_tensors().tensors}
        chain = dc.Chain()
        a = chain.step(CELU, x, output_handle=h)
        b = chain.step(THRESHOLD, a, keep_output=True)
        chain.step(mvn1_op([2, 2]), b, return_output=True)
        self.assertRejected(lambda: self.client.chain(chain), INVALID,
                            "MVN_AXES_DUPLICATE",
                            field="steps[2].operator.mvn1.axes[1]")
        np.testing.assert_array_equal(self.client.download(h), marker)
        self.assertEqual({t.handle for t in self.client.list_tensors().tensors},
                         before)
        self.client.release(h)

    def raw(self, chain, mutate=None):
        request, _ = chain.request()
        if mutate is not None:
            mutate(request)
        return lambda: self.client._call(self.client.stub.ExecuteChain,
                                         request, None)

    def test_chain_rules(self):
        x = np.ones((2, 4), np.float32)
        relu = {"relu": {}}
        explicit = pb.OperatorDesc()
        explicit.relu.input.CopyFrom(dc.tensor_desc(np.float32, (2, 4)))
        explicit.relu.output.CopyFrom(dc.tensor_desc(np.float32, (2, 4)))
        bigger = pb.OperatorDesc()
        bigger.relu.input.CopyFrom(dc.tensor_desc(np.float32, (3, 4)))
        half = pb.OperatorDesc()
        half.relu.input.CopyFrom(dc.tensor_desc(np.float16, (2, 8)))
        small = self.client.create_tensor(np.ones((3,), np.float32))

        def steps(*specs):
            return dc.Chain.from_steps(specs)

        def add_scale(request):
            request.steps[0].scale.data = bytes(32)

        cases = [
            ("empty", dc.Chain(), None, "CHAIN_EMPTY", None),
            ("forward", steps({"op": explicit, "input": 1},
                              {"op": relu, "input": x,
                               "return_output": True}), None,
             "CHAIN_STEP_FORWARD", "steps[0].input.step"),
            ("self", steps({"op": explicit, "input": 0,
                            "return_output": True}), None,
             "CHAIN_STEP_FORWARD", "steps[0].input.step"),
            ("no input", steps({"op": explicit, "input": None,
                                "return_output": True}), None,
             "CHAIN_SOURCE_MISSING", "steps[0].input"),
            ("scale on celu", steps({"op": CELU, "input": x,
                                     "return_output": True}), add_scale,
             "CHAIN_SOURCE_UNEXPECTED", "steps[0].scale"),
            ("size", steps({"op": CELU, "input": x},
                           {"op": bigger, "input": 0,
                            "return_output": True}), None,
             "CHAIN_SIZE_MISMATCH", None),
            ("type", steps({"op": CELU, "input": x},
                           {"op": half, "input": 0,
                            "return_output": True}), None,
             "CHAIN_TYPE_MISMATCH", None),
            ("no output", steps({"op": CELU, "input": x},
                                {"op": relu, "input": 0}), None,
             "CHAIN_NO_OUTPUT", None),
            ("handle size", steps({"op": explicit, "input": small,
                                   "return_output": True}), None,
             "HANDLE_SIZE_MISMATCH", "steps[0].input.handle"),
            ("both", steps({"op": CELU, "input": x, "return_output": True}),
             lambda r: setattr(r.steps[0].input, "data", b"") or
             r.steps[0].input.__setattr__("handle", small.handle) or
             None, None, None),
        ]
        for name, chain, mutate, rule, field in cases[:-1]:
            with self.subTest(case=name):
                e = self.assertRejected(self.raw(chain, mutate), INVALID, rule)
                if field is not None:
                    self.assertTrue(e.field.startswith(field), e.field)
                elif rule not in ("CHAIN_EMPTY", "CHAIN_NO_OUTPUT"):
                    self.assertTrue(e.field.startswith("steps[1]"), e.field)

    def test_unknown_handle_in_a_step(self):
        chain = dc.Chain()
        a = chain.step(CELU, np.ones((2, 4), np.float32))
        chain.step({"threshold": {"min": 0.0}}, a, return_output=True)
        chain.step({"relu": {}}, dc.TensorHandle(
            "t-" + "e" * 32, dc.tensor_desc(np.float32, (2, 4))),
            return_output=True)
        self.assertRejected(lambda: self.client.chain(chain), NOT_FOUND,
                            "HANDLE_NOT_FOUND", field="steps[2].input.handle")

    def test_chain_length_limit(self):
        x = np.ones((4,), np.float32)
        for n, ok in ((MAX_STEPS, True), (MAX_STEPS + 1, False)):
            chain = dc.Chain()
            prev = x
            for i in range(n):
                prev = chain.step({"relu": {}}, prev, return_output=i == n - 1)
            if ok:
                np.testing.assert_array_equal(
                    self.client.chain(chain).arrays[n - 1], x)
            else:
                self.assertRejected(lambda: self.client.chain(chain),
                                    EXHAUSTED, "CHAIN_TOO_LONG")


class ConcurrentClientsTest(ServerTestCase):
    """64 clients (one channel and tenant each) upload, chain and download
    at once; every result is checked and every tenant ends with nothing."""

    CLIENTS = 64

    def test_64_clients_upload_chain_download(self):
        barrier = threading.Barrier(self.CLIENTS)
        errors = []

        def work(i):
            try:
                x = random_array((4, 16, 64), seed=100 + i)  # 16 KiB
                with dc.DmlClient(self.target, tenant="w%d" % i) as c:
                    barrier.wait(timeout=60)
                    h = c.upload(x, chunk_bytes=4096)
                    chain = dc.Chain()
                    a = chain.step(CELU, h)
                    b = chain.step(mvn1_op([2]), a)
                    chain.step(THRESHOLD, b, keep_output=True)
                    kept = c.chain(chain).handles[2]
                    y = c.download(kept, chunk_bytes=4096)
                    c.release(kept)
                    c.release(h)
                    left = c.list_tensors()
                y0 = ref.activation("celu", x, CELU["celu"]).astype(np.float32)
                y1 = ref.mvn(y0, [2]).astype(np.float32)
                bad = ref.mismatches(y, ref.threshold(y1, 0.25), np.float32,
                                     "NORMALIZATION")
                if bad or left.tensors or left.principal_bytes:
                    errors.append((i, len(bad), left))
            except Exception as e:  # reported below with the client index
                errors.append((i, repr(e)))

        threads = [threading.Thread(target=work, args=(i,))
                   for i in range(self.CLIENTS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=240)
        self.assertFalse(any(t.is_alive() for t in threads), "hung clients")
        self.assertEqual(errors, [])
        self.assertEqual(health_status(self.target), "SERVING")


if __name__ == "__main__":
    unittest.main()
