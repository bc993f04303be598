"""Every operator through gRPC, results checked against NumPy (reference.py)
with the tolerance classes of OPERATORS.md section 8."""

import unittest

import numpy as np

import dmlserve_client as dc
import reference as ref
from dmlserve.v1 import dmlserve_pb2 as pb
from e2e_server import ServerTestCase

MVN_TOL = "NORMALIZATION"


class OperatorTest(ServerTestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.rng = np.random.default_rng(1234)
        cls.tested = set()

    def random(self, shape, dtype=np.float32, low=-3.0, high=3.0):
        return self.rng.uniform(low, high, size=shape).astype(dtype)

    def assertClose(self, actual, expected, dtype, tol_class, what):
        bad = ref.mismatches(actual, expected, dtype, tol_class)
        if bad:
            i = bad[0]
            detail = (str(i) if isinstance(i, str) else
                      "at %s: got %r, expected %r" % (
                          i, actual[i], np.asarray(expected)[i]))
            self.fail("%s: %d mismatches, first %s" % (what, len(bad), detail))

    def test_every_standalone_activation_float32(self):
        x = self.random((2, 3, 4, 5))
        for name, (params, _) in ref.ACTIVATIONS.items():
            with self.subTest(op=name):
                y = self.client.execute_activation(name, x, **params)
                self.assertEqual(y.dtype, np.float32)
                self.assertClose(y, ref.activation(name, x), np.float32,
                                 ref.TOLERANCE_CLASS[name], name)
                self.tested.add(name)

    def test_celu_float16_and_strided_layouts(self):
        for dtype in (np.float32, np.float16):
            x = self.random((3, 5), dtype)
            y = self.client.execute_celu(x, alpha=0.75)
            self.assertEqual(y.dtype, dtype)
            self.assertClose(y, ref.activation("celu", x, {"alpha": 0.75}),
                             dtype, "TRANSCENDENTAL", "celu %s" % dtype)
            # Padded input rows and a transposed (column-major) output.
            y = self.client.execute_celu(x, alpha=0.75, input_strides=[8, 1],
                                         output_strides=[1, 3])
            self.assertClose(y, ref.activation("celu", x, {"alpha": 0.75}),
                             dtype, "TRANSCENDENTAL", "strided celu %s" % dtype)
        self.tested.add("celu")

    def test_celu_in_place(self):
        x = self.random((4, 6))
        y = self.client.execute_celu(x, alpha=1.0, in_place=True)
        self.assertClose(y, ref.activation("celu", x, {"alpha": 1.0}),
                         np.float32, "TRANSCENDENTAL", "in-place celu")

    def test_threshold_float(self):
        for dtype in (np.float32, np.float16):
            x = self.random((2, 3, 4, 5), dtype)
            y = self.client.execute_threshold(x, min=0.25)
            self.assertEqual(y.dtype, dtype)
            self.assertClose(y, ref.threshold(x, 0.25), dtype, "EXACT",
                             "threshold %s" % dtype)
            y = self.client.execute_threshold(x, min=-1.0,
                                              scale_bias=(1.5, -0.25))
            self.assertClose(y, ref.threshold(x, -1.0, (1.5, -0.25)), dtype,
                             "ARITH", "threshold+scale_bias %s" % dtype)
        self.tested.add("threshold")

    def test_threshold_broadcast_input(self):
        # Sizes {4,6} read from one stored row of 6 values (stride 0).
        row = self.random((1, 6))
        x = np.repeat(row, 4, axis=0)
        y = self.client.execute_threshold(x, min=0.0, input_strides=[0, 1])
        self.assertClose(y, ref.threshold(x, 0.0), np.float32, "EXACT",
                         "broadcast threshold")

    def test_integer_threshold_and_clip(self):
        x8 = self.rng.integers(-128, 128, size=(2, 3, 4, 5)).astype(np.int8)
        y = self.client.execute_threshold(x8, min=-2.5)
        self.assertEqual(y.dtype, np.int8)
        np.testing.assert_array_equal(y, np.maximum(x8, -2))
        xu = self.rng.integers(0, 256, size=(7, 3)).astype(np.uint8)
        y = self.client.execute_threshold(xu, min=300.0)  # saturates to 255
        np.testing.assert_array_equal(y, np.full_like(xu, 255))
        x16 = self.rng.integers(-100, 100, size=(2, 3, 4, 5)).astype(np.int16)
        y = self.client.execute_clip(x16, min=-3.7, max=5.9)
        self.assertEqual(y.dtype, np.int16)
        np.testing.assert_array_equal(y, np.clip(x16, -3, 5))
        x32 = self.rng.integers(-1000, 1000, size=(5, 4)).astype(np.int32)
        y = self.client.execute_clip(x32, min=-100, max=500,
                                     scale_bias=(2.0, 1.0))
        np.testing.assert_array_equal(y, np.clip(x32 * 2 + 1, -100, 500))
        self.tested.add("clip")

    def test_clip_float(self):
        for dtype in (np.float32, np.float16):
            x = self.random((2, 3, 4, 5), dtype)
            y = self.client.execute_clip(x, min=-0.5, max=1.25)
            self.assertClose(y, ref.clip(x, -0.5, 1.25), dtype, "EXACT",
                             "clip %s" % dtype)
        self.tested.add("clip")

    def test_mvn1_with_fused_activation_float32_and_float16(self):
        for dtype in (np.float32, np.float16):
            x = self.random((2, 3, 4, 5), dtype)
            scale = self.random((1, 3, 1, 1), dtype, 0.5, 2.0)
            bias = self.random((1, 3, 1, 1), dtype, -1.0, 1.0)
            for fused in (None, "relu", ("celu", {"alpha": 1.0})):
                y = self.client.execute_mvn1(x, axes=[2, 3], scale=scale,
                                             bias=bias, epsilon=1e-5,
                                             fused=fused)
                self.assertEqual(y.dtype, dtype)
                self.assertClose(
                    y, ref.mvn(x, [2, 3], scale, bias, 1e-5, fused=fused),
                    dtype, MVN_TOL, "mvn1 %s fused %s" % (dtype, fused))
        self.tested.add("mvn1")

    def test_mvn1_axes_and_every_fused_activation(self):
        x = self.random((3, 4, 6))
        for axes in ([0], [2, 1], [0, 1, 2]):
            y = self.client.execute_mvn1(x, axes=axes, epsilon=1e-3)
            self.assertClose(y, ref.mvn(x, axes, epsilon=1e-3), np.float32,
                             MVN_TOL, "mvn1 axes %s" % axes)
        y = self.client.execute_mvn1(x, axes=[2], normalize_variance=False)
        self.assertClose(y, ref.mvn(x, [2], normalize_variance=False),
                         np.float32, MVN_TOL, "mvn1 without variance")
        for name, (params, _) in ref.ACTIVATIONS.items():
            with self.subTest(fused=name):
                y = self.client.execute_mvn1(x, axes=[1, 2],
                                             fused=(name, params))
                self.assertClose(y, ref.mvn(x, [1, 2], fused=(name, params)),
                                 np.float32, MVN_TOL, "mvn1 fused " + name)

    def test_mvn1_strided_input(self):
        x = self.random((2, 3, 4))
        # Channels-last storage of a {2,3,4} tensor: strides {12, 1, 3}.
        y = self.client.execute_mvn1(x, axes=[2], input_strides=[12, 1, 3])
        self.assertClose(y, ref.mvn(x, [2]), np.float32, MVN_TOL,
                         "channels-last mvn1")

    def test_mvn_cross_channel(self):
        x = self.random((2, 3, 4, 5))
        scale = self.random((1, 3, 1, 1), np.float32, 0.5, 2.0)
        bias = self.random((1, 1, 1, 5), np.float32, -1.0, 1.0)
        for cross_channel, axes in ((False, [2, 3]), (True, [1, 2, 3])):
            op = pb.OperatorDesc()
            m = op.mvn
            m.input.CopyFrom(dc.tensor_desc(np.float32, x.shape))
            m.output.CopyFrom(dc.tensor_desc(np.float32, x.shape))
            m.scale.CopyFrom(dc.tensor_desc(np.float32, scale.shape))
            m.bias.CopyFrom(dc.tensor_desc(np.float32, bias.shape))
            m.cross_channel = cross_channel
            m.normalize_variance = True
            m.epsilon = 1e-5
            m.fused_activation.sigmoid.SetInParent()
            y = self.client.execute(op, {"input": x, "scale": scale,
                                         "bias": bias})
            self.assertClose(y, ref.mvn(x, axes, scale, bias, 1e-5,
                                        fused="sigmoid"),
                             np.float32, MVN_TOL,
                             "mvn cross_channel=%s" % cross_channel)
        self.tested.add("mvn")

    def test_zz_every_served_operator_was_run(self):
        # Runs last (alphabetical order): the operators the server lists in
        # its capabilities are exactly those exercised above.
        served = {o.field for o in self.client.capabilities().operators}
        expected = set(ref.ACTIVATIONS) | {"threshold", "clip", "mvn", "mvn1"}
        self.assertEqual(served, expected)
        self.assertTrue(expected <= self.tested,
                        "not run: %s" % sorted(expected - self.tested))


if __name__ == "__main__":
    unittest.main()
