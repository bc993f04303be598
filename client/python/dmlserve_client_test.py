"""Offline unit tests of dmlserve_client (no server): layouts, request
building and the decoding of BadRequest trailers."""

import unittest

import grpc
import numpy as np

import dmlserve_client as dc
from dmlserve.v1 import dmlserve_pb2 as pb
from google.rpc import error_details_pb2, status_pb2


class FakeRpcError(grpc.RpcError):
    def __init__(self, code, details, trailers):
        self._code, self._details, self._trailers = code, details, trailers

    def code(self):
        return self._code

    def details(self):
        return self._details

    def trailing_metadata(self):
        return self._trailers


class LayoutTest(unittest.TestCase):

    def test_min_tensor_bytes_follow_the_spec_examples(self):
        self.assertEqual(dc.min_tensor_bytes(pb.DATA_TYPE_FLOAT32, [1, 1, 2, 3]), 24)
        self.assertEqual(dc.min_tensor_bytes(pb.DATA_TYPE_FLOAT16, [1, 1, 1, 3]), 8)
        self.assertEqual(dc.min_tensor_bytes(pb.DATA_TYPE_INT8, [5]), 8)
        self.assertEqual(dc.min_tensor_bytes(pb.DATA_TYPE_FLOAT32, [2, 3], [4, 1]), 28)
        self.assertEqual(dc.min_tensor_bytes(pb.DATA_TYPE_FLOAT32, [2, 3], [0, 1]), 12)

    def test_pack_unpack_padded_transposed_broadcast(self):
        x = np.arange(6, dtype=np.float32).reshape(2, 3)
        padded = dc.tensor_desc(np.float32, (2, 3), [4, 1])
        buf = dc.pack(padded, x)
        np.testing.assert_array_equal(np.frombuffer(buf, np.float32),
                                      [0, 1, 2, 0, 3, 4, 5])
        np.testing.assert_array_equal(dc.unpack(padded, buf), x)
        transposed = dc.tensor_desc(np.float32, (2, 3), [1, 2])
        np.testing.assert_array_equal(
            np.frombuffer(dc.pack(transposed, x), np.float32), [0, 3, 1, 4, 2, 5])
        broadcast = dc.tensor_desc(np.float32, (2, 3), [0, 1])
        np.testing.assert_array_equal(
            dc.unpack(broadcast, np.float32([7, 8, 9]).tobytes()),
            [[7, 8, 9], [7, 8, 9]])

    def test_float16_and_int8_round_trip(self):
        h = np.float16([1.5, -2.25, 65504])
        d = dc.tensor_desc(np.float16, h.shape)
        self.assertEqual(d.total_tensor_size_in_bytes, 8)
        np.testing.assert_array_equal(dc.unpack(d, dc.pack(d, h)), h)
        i = np.int8([-128, 0, 127, 5, 6])
        d = dc.tensor_desc(np.int8, i.shape)
        self.assertEqual(d.data_type, pb.DATA_TYPE_INT8)
        np.testing.assert_array_equal(dc.unpack(d, dc.pack(d, i)), i)

    def test_unpack_rejects_short_payload(self):
        d = dc.tensor_desc(np.float32, (4,))
        with self.assertRaises(ValueError):
            dc.unpack(d, bytes(12))


class RequestTest(unittest.TestCase):

    def test_build_request_fills_missing_tensor_fields(self):
        x = np.ones((2, 3), np.float16)
        request, out = dc.build_request({"celu": {"alpha": 1.0}}, x,
                                        request_id=5)
        self.assertEqual(request.request_id, 5)
        self.assertEqual(list(out.sizes), [2, 3])
        self.assertEqual(out.data_type, pb.DATA_TYPE_FLOAT16)
        self.assertEqual(request.operator.celu.input.total_tensor_size_in_bytes, 12)
        self.assertEqual(len(request.input), 12)

    def test_build_request_keeps_declared_layout(self):
        op = pb.OperatorDesc()
        op.celu.input.CopyFrom(dc.tensor_desc(np.float32, (2, 3), [4, 1]))
        op.celu.alpha = 1.0
        request, out = dc.build_request(op, np.ones((2, 3), np.float32))
        self.assertEqual(len(request.input), 28)
        self.assertEqual(out.total_tensor_size_in_bytes, 24)

    def test_fused_activation(self):
        fa = dc._fused_activation(("celu", {"alpha": 2.0}))
        self.assertEqual(fa.WhichOneof("activation"), "celu")
        self.assertEqual(fa.celu.alpha, 2.0)
        self.assertEqual(dc._fused_activation("relu").WhichOneof("activation"),
                         "relu")


class ErrorTest(unittest.TestCase):

    def test_bad_request_trailer_is_decoded(self):
        bad = error_details_pb2.BadRequest()
        v = bad.field_violations.add()
        v.field = "operator.mvn1.axes[1]"
        v.description = "MVN_AXES_DUPLICATE: axes [1, 1] contain 1 twice"
        status = status_pb2.Status(code=3, message="MVN_AXES_DUPLICATE: ...")
        status.details.add().Pack(bad)
        e = dc.error_from_rpc(FakeRpcError(
            grpc.StatusCode.INVALID_ARGUMENT, "MVN_AXES_DUPLICATE: ...",
            (("grpc-status-details-bin", status.SerializeToString()),)))
        self.assertEqual(e.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertEqual(e.rule, "MVN_AXES_DUPLICATE")
        self.assertEqual(e.field, "operator.mvn1.axes[1]")
        self.assertIn("MVN_AXES_DUPLICATE at operator.mvn1.axes[1]", str(e))

    def test_error_without_details(self):
        e = dc.error_from_rpc(FakeRpcError(grpc.StatusCode.UNAVAILABLE,
                                           "down", None))
        self.assertEqual(e.violations, [])
        self.assertIsNone(e.rule)


if __name__ == "__main__":
    unittest.main()
