"""Offline unit tests of the dmlserve package (no server): layouts, request
building and the decoding of BadRequest trailers."""

import unittest

import grpc
import numpy as np

import dmlserve as dc
from dmlserve.v1 import dmlserve_pb2 as pb
from dmlserve.errors import error_details_pb2, status_pb2


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
        fa = dc.fused_activation(("celu", {"alpha": 2.0}))
        self.assertEqual(fa.WhichOneof("activation"), "celu")
        self.assertEqual(fa.celu.alpha, 2.0)
        self.assertEqual(dc.fused_activation("relu").WhichOneof("activation"),
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


class HandleRequestTest(unittest.TestCase):

    def test_handles_travel_by_name_and_desc_comes_from_the_handle(self):
        desc = dc.tensor_desc(np.float32, (2, 3))
        h = dc.TensorHandle("t-" + "a" * 32, desc)
        request, out = dc.build_request({"celu": {"alpha": 1.0}}, h,
                                        keep_output=True, keep_output_ttl=9)
        self.assertEqual(request.input_handle, h.handle)
        self.assertEqual(request.input, b"")
        self.assertTrue(request.keep_output)
        self.assertEqual(request.keep_output_ttl_seconds, 9)
        self.assertEqual(list(request.operator.celu.input.sizes), [2, 3])
        self.assertEqual(out.total_tensor_size_in_bytes, 24)

    def test_mixed_sources_and_output_handle(self):
        x = np.ones((1, 2, 4), np.float32)
        scale = dc.TensorHandle("t-s", dc.tensor_desc(np.float32, (1, 1, 4)))
        request, _ = dc.build_request(
            {"mvn1": {"axes": [2], "axisCount": 1}},
            {"input": x, "scale": scale, "bias": None},
            output_handle="t-out")
        self.assertEqual(len(request.input), 32)
        self.assertEqual(request.scale_handle, "t-s")
        self.assertFalse(request.operator.mvn1.HasField("bias"))
        self.assertEqual(request.output_handle, "t-out")

    def test_bare_handle_string_needs_a_declared_desc(self):
        with self.assertRaises(ValueError):
            dc.build_request({"relu": {}}, "t-x")
        op = pb.OperatorDesc()
        op.relu.input.CopyFrom(dc.tensor_desc(np.float16, (8,)))
        request, out = dc.build_request(op, "t-x")
        self.assertEqual(request.input_handle, "t-x")
        self.assertEqual(out.data_type, pb.DATA_TYPE_FLOAT16)

    def test_handle_object(self):
        info = pb.ResidentTensorInfo(handle="t-1", size_bytes=24,
                                     expires_unix_ms=5, device="cpu")
        info.desc.CopyFrom(dc.tensor_desc(np.float32, (6,)))
        h = dc.TensorHandle.from_info(info)
        self.assertEqual((h.handle, h.size, h.expiry, h.device),
                         ("t-1", 24, 5, "cpu"))
        self.assertEqual(str(h), "t-1")
        self.assertEqual(h, "t-1")
        self.assertNotEqual(h, dc.TensorHandle("t-2"))


class ExecuteProgressTest(unittest.TestCase):

    def test_only_inline_calls_that_return_their_output_can_go_chunked(self):
        from dmlserve.requests import ExecutePlan
        x = np.ones((2, 3), np.float32)
        plan = ExecutePlan.of({"mvn1": {"axes": [1]}},
                              {"input": x, "scale": np.ones((1, 3), np.float32)})
        payloads = plan.chunked_payloads()
        self.assertEqual(sorted(payloads), ["input", "scale"])
        self.assertEqual(len(payloads["input"]), 24)
        h = dc.TensorHandle("t-x", dc.tensor_desc(np.float32, (2, 3)))
        self.assertIsNone(ExecutePlan.of({"relu": {}}, h).chunked_payloads())
        self.assertIsNone(ExecutePlan.of({"relu": {}}, x, keep_output=True)
                          .chunked_payloads())
        self.assertIsNone(ExecutePlan.of({"relu": {}}, x, output_handle="t-o")
                          .chunked_payloads())
        self.assertIsNone(ExecutePlan(pb.ExecuteRequest(), None)
                          .chunked_payloads())

    def test_a_unary_call_reports_its_start_and_both_messages_at_the_end(self):
        from dmlserve.progress import MessageProgress
        seen = []
        request = pb.ExecuteRequest(input=b"x" * 100)
        message = MessageProgress(lambda d, t: seen.append((d, t)), request)
        message.sent()
        self.assertEqual(seen, [(0, None)])
        response = pb.ExecuteResponse(output=b"y" * 60)
        message.received(response)
        n = request.ByteSize() + response.ByteSize()
        self.assertGreater(n, 160)
        self.assertEqual(seen, [(0, None), (n, n)])


class ChunkTest(unittest.TestCase):

    def test_chunk_ranges(self):
        self.assertEqual(dc.chunk_ranges(10, 4), [(0, 4), (4, 4), (8, 2)])
        self.assertEqual(dc.chunk_ranges(8, 4, start=100), [(100, 4), (104, 4)])
        self.assertEqual(dc.chunk_ranges(0, 4), [])
        with self.assertRaises(ValueError):
            dc.chunk_ranges(4, 0)

    def test_write_requests_create_and_progress(self):
        seen = []
        create = pb.CreateTensorRequest(desc=dc.tensor_desc(np.uint8, (10,)))
        payload = bytes(range(12))
        reqs = list(dc.write_requests(payload, 5, create=create,
                                      progress=lambda d, t: seen.append((d, t))))
        self.assertEqual(len(reqs), 3)
        self.assertTrue(reqs[0].HasField("create"))
        self.assertEqual(reqs[0].total_bytes, 12)
        self.assertEqual([(r.chunk.offset, r.chunk.data) for r in reqs],
                         [(0, payload[:5]), (5, payload[5:10]),
                          (10, payload[10:])])
        self.assertFalse(reqs[1].HasField("create"))
        self.assertEqual(seen, [(5, 12), (10, 12), (12, 12)])

    def test_write_requests_overwrite_at_offset(self):
        reqs = list(dc.write_requests(b"abcdef", 4, handle="t-h",
                                      start_offset=8))
        self.assertEqual(reqs[0].handle, "t-h")
        self.assertEqual(reqs[0].start_offset, 8)
        self.assertEqual([r.chunk.offset for r in reqs], [8, 12])
        empty = list(dc.write_requests(b"", 4, handle="t-h"))
        self.assertEqual(len(empty), 1)
        self.assertFalse(empty[0].HasField("chunk"))

    def test_chunked_requests_order(self):
        header = pb.ChunkedHeader(request_id=3)
        seen = []
        reqs = list(dc.chunked_requests(
            header, {"bias": b"bb", "input": b"iiiii"}, 2,
            progress=lambda d, t: seen.append((d, t))))
        kinds = [r.WhichOneof("part") for r in reqs]
        self.assertEqual(kinds, ["header"] + ["chunk"] * 4 + ["end"])
        self.assertEqual([(r.chunk.slot, r.chunk.offset) for r in reqs[1:5]],
                         [(pb.TENSOR_SLOT_INPUT, 0), (pb.TENSOR_SLOT_INPUT, 2),
                          (pb.TENSOR_SLOT_INPUT, 4), (pb.TENSOR_SLOT_BIAS, 0)])
        self.assertEqual(seen[-1], (7, 7))

    def test_assemble_chunks(self):
        c = lambda o, d: pb.TensorChunk(offset=o, data=d)
        self.assertEqual(dc.assemble_chunks([c(4, b"ab"), c(6, b"c")], 4, 3),
                         b"abc")
        for bad, total in (([c(0, b"ab"), c(3, b"c")], None),   # gap
                           ([c(0, b"ab"), c(1, b"c")], None),   # overlap
                           ([c(0, b"abcd")], 3),                # overrun
                           ([c(0, b"ab")], 3)):                 # short
            with self.assertRaises(ValueError):
                dc.assemble_chunks(bad, 0, total)


class ChainTest(unittest.TestCase):

    def test_sources_and_desc_propagation(self):
        x = np.zeros((2, 4), np.float32)
        h = dc.TensorHandle("t-b", dc.tensor_desc(np.float32, (1, 4)))
        chain = dc.Chain()
        a = chain.step({"celu": {"alpha": 1.0}}, x)
        b = chain.step({"mvn1": {"axes": [1], "axisCount": 1}}, a, bias=h,
                       keep_output=True, keep_output_ttl=7)
        chain.step({"threshold": {"min": 0.0}}, b, return_output=True,
                   output_handle=h)
        request, outputs = chain.request(feature_level=pb.FEATURE_LEVEL_6_4)
        s = request.steps
        self.assertEqual(len(s[0].input.data), 32)
        self.assertEqual(s[1].input.step, 0)
        self.assertEqual(s[1].bias.handle, "t-b")
        self.assertEqual(list(s[1].operator.mvn1.input.sizes), [2, 4])
        self.assertEqual(list(s[1].operator.mvn1.bias.sizes), [1, 4])
        self.assertTrue(s[1].keep_output)
        self.assertEqual(s[1].keep_output_ttl_seconds, 7)
        self.assertEqual(s[2].input.WhichOneof("source"), "step")
        self.assertEqual(s[2].input.step, 1)
        self.assertTrue(s[2].return_output)
        self.assertEqual(s[2].output_handle, "t-b")
        self.assertEqual(list(outputs[2].sizes), [2, 4])
        self.assertEqual(request.feature_level, pb.FEATURE_LEVEL_6_4)

    def test_step_zero_is_a_reference_and_forward_refs_are_left_to_the_server(
            self):
        op = pb.OperatorDesc()
        op.relu.input.CopyFrom(dc.tensor_desc(np.float32, (3,)))
        chain = dc.Chain.from_steps([
            {"op": op, "input": 1},
            {"op": {"relu": {}}, "input": 0, "return_output": True}])
        request, _ = chain.request()
        self.assertEqual(request.steps[0].input.WhichOneof("source"), "step")
        self.assertEqual(request.steps[0].input.step, 1)
        self.assertEqual(request.steps[1].input.WhichOneof("source"), "step")
        self.assertEqual(request.steps[1].input.step, 0)
        self.assertEqual(list(request.steps[1].operator.relu.input.sizes), [3])


if __name__ == "__main__":
    unittest.main()
