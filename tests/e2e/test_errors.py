"""Rejected requests: one invalid descriptor per rule family, payload sizes,
unknown enum values. Each must come back INVALID_ARGUMENT with a
google.rpc.BadRequest naming the rule id and the field path, from Execute
(status details), ExecuteStream (per-response violations) and Validate."""

import unittest

import grpc
import numpy as np

import dmlserve_client as dc
from dmlserve.v1 import dmlserve_pb2 as pb
from dmlserve.v1 import dmlserve_pb2_grpc as pb_grpc
from e2e_server import ServerTestCase

F32 = pb.DATA_TYPE_FLOAT32
F16 = pb.DATA_TYPE_FLOAT16


def td(shape, data_type=F32, strides=None, **fields):
    return dc.tensor_desc(data_type, shape, strides, **fields)


def celu(shape=(2, 3), alpha=1.0, **tensors):
    op = pb.OperatorDesc()
    op.celu.input.CopyFrom(tensors.get("input", td(shape)))
    op.celu.output.CopyFrom(tensors.get("output", td(shape)))
    if alpha is not None:
        op.celu.alpha = alpha
    return op


def mvn1(shape=(1, 2, 3, 4), axes=(2, 3), axis_count=None, epsilon=1e-5,
         scale=None, bias=None, fused=None):
    op = pb.OperatorDesc()
    m = op.mvn1
    m.input.CopyFrom(td(shape))
    m.output.CopyFrom(td(shape))
    if scale is not None:
        m.scale.CopyFrom(scale)
    if bias is not None:
        m.bias.CopyFrom(bias)
    m.axes[:] = list(axes)
    m.axis_count = len(axes) if axis_count is None else axis_count
    m.normalize_variance = True
    m.epsilon = epsilon
    if fused is not None:
        m.fused_activation.CopyFrom(fused)
    return op


def threshold(shape=(1, 2, 3, 4), data_type=F32, min_value=0.0):
    op = pb.OperatorDesc()
    op.threshold.input.CopyFrom(td(shape, data_type))
    op.threshold.output.CopyFrom(td(shape, data_type))
    if min_value is not None:
        op.threshold.min = min_value
    return op


def fused(name, with_tensors=False, **params):
    fa = pb.FusedActivation()
    act = getattr(fa, name)
    act.SetInParent()
    for k, v in params.items():
        setattr(act, k, v)
    if with_tensors:
        act.input.CopyFrom(td((1, 2, 3, 4)))
        act.output.CopyFrom(td((1, 2, 3, 4)))
    return fa


def request_for(op, feature_level=0, in_place=False):
    """An ExecuteRequest whose payloads have exactly the declared sizes, so
    that the descriptor rule is what fails."""
    request = pb.ExecuteRequest(request_id=7, feature_level=feature_level,
                                in_place=in_place)
    request.operator.CopyFrom(op)
    member = op.WhichOneof("operator")
    if member is None:
        return request
    body = getattr(op, member)
    for name in ("input", "scale", "bias"):
        if name in body.DESCRIPTOR.fields_by_name and body.HasField(name):
            size = getattr(body, name).total_tensor_size_in_bytes
            setattr(request, name, bytes(min(size, 1 << 20)))
    return request


# (case name, op, feature level, in place, rule, field)
CASES = [
    # Structural tensor rules (OPERATORS.md 2.7).
    ("size zero", celu(input=td((2, 0))), 0, False,
     "SIZE_ZERO", "operator.celu.input.sizes[1]"),
    ("total too small", celu(input=td((2, 3), total=20)), 0, False,
     "TOTAL_SIZE_TOO_SMALL", "operator.celu.input.total_tensor_size_in_bytes"),
    ("total not dword", celu(output=td((2, 3), total=26)), 0, False,
     "TOTAL_SIZE_NOT_DWORD_MULTIPLE",
     "operator.celu.output.total_tensor_size_in_bytes"),
    ("owned by dml on output", celu(output=td((2, 3), flags=1)), 0, False,
     "FLAGS_OWNED_BY_DML_ON_OUTPUT", "operator.celu.output.flags"),
    ("alignment", celu(input=td((2, 3), guaranteed_base_offset_alignment=3)),
     0, False, "ALIGNMENT_INVALID",
     "operator.celu.input.guaranteed_base_offset_alignment"),
    ("nine dimensions", celu(shape=(1,) * 9), 0, False,
     "DIMCOUNT_RANGE", "operator.celu.input.dimension_count"),
    # Feature-level support tables (section 3).
    ("celu before 3_0", celu(), pb.FEATURE_LEVEL_2_1, False,
     "OP_NOT_AVAILABLE", "operator.celu"),
    ("int8 threshold at 2_0", threshold(data_type=pb.DATA_TYPE_INT8),
     pb.FEATURE_LEVEL_2_0, False, "DATATYPE_UNSUPPORTED",
     "operator.threshold.input.data_type"),
    ("8-D mvn1 at 3_0", mvn1(shape=(1, 1, 1, 1, 1, 2, 3, 4), axes=(7,)),
     pb.FEATURE_LEVEL_3_0, False, "DIMCOUNT_UNSUPPORTED",
     "operator.mvn1.input.dimension_count"),
    # Cross-tensor rules.
    ("data type mismatch", celu(output=td((2, 3), F16)), 0, False,
     "DATATYPE_MISMATCH", "operator.celu.output.data_type"),
    ("sizes mismatch", celu(output=td((3, 2))), 0, False,
     "SIZES_MISMATCH", "operator.celu.output.sizes"),
    # Output overlap.
    ("output overlap", celu(output=td((2, 3), strides=[0, 1])), 0, False,
     "OUTPUT_OVERLAP", "operator.celu.output.strides"),
    # Operator parameters.
    ("celu alpha 0", celu(alpha=0.0), 0, False,
     "CELU_ALPHA_INVALID", "operator.celu.alpha"),
    ("celu alpha missing", celu(alpha=None), 0, False,
     "PARAM_MISSING", "operator.celu.alpha"),
    ("threshold min missing", threshold(min_value=None), 0, False,
     "PARAM_MISSING", "operator.threshold.min"),
    ("mvn1 epsilon negative", mvn1(epsilon=-1.0), 0, False,
     "MVN_EPSILON_INVALID", "operator.mvn1.epsilon"),
    ("mvn1 scale without bias", mvn1(scale=td((1, 2, 1, 1))),
     pb.FEATURE_LEVEL_5_1, False, "MVN_SCALE_BIAS_PAIRING",
     "operator.mvn1.bias"),
    ("mvn1 scale broadcast", mvn1(scale=td((1, 2, 3, 2)),
                                  bias=td((1, 2, 1, 1))),
     0, False, "MVN_SCALE_BIAS_BROADCAST", "operator.mvn1.scale.sizes[3]"),
    # MVN1 axes.
    ("mvn1 duplicate axes", mvn1(axes=(1, 1)), 0, False,
     "MVN_AXES_DUPLICATE", "operator.mvn1.axes[1]"),
    ("mvn1 axis out of range", mvn1(axes=(4,)), 0, False,
     "MVN_AXIS_OUT_OF_RANGE", "operator.mvn1.axes[0]"),
    ("mvn1 empty axes", mvn1(axes=()), 0, False,
     "MVN_AXES_EMPTY", "operator.mvn1.axis_count"),
    ("mvn1 axis count", mvn1(axes=(2, 3), axis_count=3), 0, False,
     "MVN_AXIS_COUNT_MISMATCH", "operator.mvn1.axis_count"),
    # Fused activation.
    ("fused none", mvn1(fused=pb.FusedActivation()), 0, False,
     "FUSED_NOT_FUSABLE", "operator.mvn1.fused_activation"),
    ("fused gelu at 5_0", mvn1(fused=fused("gelu")), pb.FEATURE_LEVEL_5_0,
     False, "FUSED_NOT_AVAILABLE", "operator.mvn1.fused_activation.gelu"),
    ("fused with tensors", mvn1(fused=fused("relu", with_tensors=True)), 0,
     False, "FUSED_TENSORS_NOT_NULL", "operator.mvn1.fused_activation.relu"),
    ("fused celu alpha 0", mvn1(fused=fused("celu", alpha=0.0)), 0, False,
     "FUSED_PARAM_INVALID", "operator.mvn1.fused_activation.celu.alpha"),
    ("fused elu alpha missing", mvn1(fused=fused("elu")), 0, False,
     "PARAM_MISSING", "operator.mvn1.fused_activation.elu.alpha"),
    # In-place.
    ("mvn1 in place", mvn1(), 0, True, "INPLACE_NOT_SUPPORTED", "in_place"),
    ("in-place layout", celu(output=td((2, 3), strides=[1, 2])), 0, True,
     "INPLACE_LAYOUT_MISMATCH", "in_place"),
    # Unknown enum values.
    ("data type 99", celu(input=td((2, 3), 99, total=24)), 0, False,
     "DATATYPE_UNKNOWN", "operator.celu.input.data_type"),
    ("feature level 0x2200", celu(), 0x2200, False,
     "FL_UNKNOWN", "feature_level"),
    ("no operator", pb.OperatorDesc(), 0, False, "OP_UNKNOWN", "operator"),
]


class RuleFamilyTest(ServerTestCase):

    def test_execute_names_rule_and_field(self):
        for name, op, fl, in_place, rule, field in CASES:
            with self.subTest(case=name):
                request = request_for(op, fl, in_place)
                with self.assertRaises(dc.DmlError) as cm:
                    self.client.execute_request(request)
                e = cm.exception
                self.assertEqual(e.code, grpc.StatusCode.INVALID_ARGUMENT)
                self.assertEqual((e.rule, e.field), (rule, field),
                                 "violations: %s" % e.violations)
                self.assertTrue(e.violations[0].description.startswith(
                    rule + ": "))
                self.assertIn(rule, e.message)

    def test_validate_reports_the_same_first_violation(self):
        for name, op, fl, in_place, rule, field in CASES:
            with self.subTest(case=name):
                # As sent: the client would fill a missing parameter.
                response = self.client.validate(op, fl, in_place,
                                                fill_defaults=False)
                self.assertFalse(response.valid)
                v = response.violations[0]
                self.assertEqual((v.rule, v.field), (rule, field))
        self.assertTrue(self.client.validate(celu()).valid)
        response = self.client.validate(celu(), pb.FEATURE_LEVEL_3_1)
        self.assertEqual(response.feature_level, pb.FEATURE_LEVEL_3_1)

    def test_stream_reports_violations_per_request(self):
        requests = []
        for i, (name, op, fl, in_place, rule, field) in enumerate(CASES):
            r = request_for(op, fl, in_place)
            r.request_id = 1000 + i
            requests.append(r)
        good = pb.ExecuteRequest(request_id=1)
        good.operator.CopyFrom(celu())
        good.input = dc.pack(good.operator.celu.input,
                             np.ones((2, 3), np.float32))
        requests.append(good)
        responses = {r.request_id: r for r in self.client.stream(requests)}
        self.assertEqual(len(responses), len(requests))
        for i, (name, _, _, _, rule, field) in enumerate(CASES):
            r = responses[1000 + i]
            self.assertEqual(r.status_code, grpc.StatusCode.INVALID_ARGUMENT
                             .value[0], name)
            self.assertEqual((r.violations[0].rule, r.violations[0].field),
                             (rule, field), name)
        self.assertEqual(responses[1].status_code, 0)
        np.testing.assert_allclose(
            dc.unpack(good.operator.celu.output, responses[1].output),
            np.ones((2, 3)), rtol=1e-6)


class PayloadTest(ServerTestCase):

    def test_payload_length_differs_from_total_size(self):
        op = celu(shape=(2, 3))
        for length in (0, 20, 28, 24 + 1024):
            with self.subTest(length=length):
                request = request_for(op)
                request.input = bytes(length)
                with self.assertRaises(dc.DmlError) as cm:
                    self.client.execute_request(request)
                self.assertEqual(cm.exception.code,
                                 grpc.StatusCode.INVALID_ARGUMENT)
                self.assertEqual(cm.exception.rule, "PAYLOAD_SIZE_MISMATCH")
                self.assertEqual(cm.exception.field, "input")

    def test_payload_for_absent_tensor(self):
        request = request_for(mvn1())
        request.scale = bytes(8)
        with self.assertRaises(dc.DmlError) as cm:
            self.client.execute_request(request)
        self.assertEqual(cm.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertEqual((cm.exception.rule, cm.exception.field),
                         ("PAYLOAD_SIZE_MISMATCH", "scale"))

    def test_declared_total_larger_than_minimum_is_accepted(self):
        x = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
        op = celu(input=td((2, 3), total=64), output=td((2, 3), total=48))
        y = self.client.execute(op, x)
        expected = np.where(x > 0, x, np.expm1(x))
        np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-6)


class BoundedErrorTest(ServerTestCase):
    """A request that breaks a rule many times over (a 5,000-axes MVN1)
    still reaches a client with default settings as INVALID_ARGUMENT: the
    error trailer stays far below gRPC's default 8 KiB metadata limit
    (before, from about 3,000 axes, RESOURCE_EXHAUSTED: received initial
    metadata size exceeds limit)."""

    AXES = [1] * 5000

    def test_huge_axes_list_through_a_default_client(self):
        request = request_for(mvn1(axes=self.AXES))
        self.assertGreater(request.ByteSize(), 5000)
        with grpc.insecure_channel(self.target) as channel:  # default options
            stub = pb_grpc.DmlServiceStub(channel)
            with self.assertRaises(grpc.RpcError) as cm:
                stub.Execute(request, timeout=30)
        e = cm.exception
        self.assertEqual(e.code(), grpc.StatusCode.INVALID_ARGUMENT,
                         e.details())
        violations = dc.violations_from_rpc_error(e)
        self.assertEqual((violations[0].rule, violations[0].field),
                         ("MVN_AXES_DUPLICATE", "operator.mvn1.axes[1]"))
        self.assertIn("... and 4992 more", violations[0].description)
        self.assertTrue(e.details().startswith("MVN_AXES_DUPLICATE: "))
        trailer = len(e.details()) + sum(
            len(value) for key, value in e.trailing_metadata() or ()
            if key == "grpc-status-details-bin")
        self.assertLess(trailer, 4096)

    def test_huge_axes_list_on_a_stream_and_in_validate(self):
        op = mvn1(axes=self.AXES)
        request = request_for(op)
        request.request_id = 5
        responses = list(self.client.stream([request]))
        self.assertEqual(len(responses), 1)
        r = responses[0]
        self.assertEqual(r.status_code,
                         grpc.StatusCode.INVALID_ARGUMENT.value[0])
        self.assertEqual((r.violations[0].rule, r.violations[0].field),
                         ("MVN_AXES_DUPLICATE", "operator.mvn1.axes[1]"))
        self.assertLess(r.ByteSize(), 4096)
        response = self.client.validate(op)
        self.assertEqual(response.violations[0].rule, "MVN_AXES_DUPLICATE")
        self.assertLess(response.ByteSize(), 4096)


class UnparseableMessageTest(ServerTestCase):
    """Bytes that are not a serialized request: INVALID_ARGUMENT with the
    reason, not gRPC's UNIMPLEMENTED with an empty message."""

    GARBAGE = b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"

    def raw_unary(self, method, payload):
        with grpc.insecure_channel(self.target) as channel:
            call = channel.unary_unary("/dmlserve.v1.DmlService/" + method,
                                       request_serializer=None,
                                       response_deserializer=None)
            return call(payload, timeout=30)

    def test_garbage_to_execute_and_validate(self):
        for method in ("Execute", "Validate"):
            with self.subTest(method=method):
                with self.assertRaises(grpc.RpcError) as cm:
                    self.raw_unary(method, self.GARBAGE)
                self.assertEqual(cm.exception.code(),
                                 grpc.StatusCode.INVALID_ARGUMENT)
                self.assertEqual(
                    cm.exception.details(),
                    "the request is not a valid dmlserve.v1.%sRequest "
                    "(12 bytes): malformed field tag at byte 0" % method)
        # A truncated real request names the field that is cut.
        good = request_for(celu())
        cut = good.SerializeToString()[:-3]
        with self.assertRaises(grpc.RpcError) as cm:
            self.raw_unary("Execute", cut)
        self.assertEqual(cm.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("runs past the end", cm.exception.details())
        # The same bytes, whole, still work.
        response = pb.ExecuteResponse.FromString(
            self.raw_unary("Execute", good.SerializeToString()))
        self.assertEqual(response.request_id, good.request_id)

    def test_garbage_on_a_stream(self):
        # A good request, then garbage: the good one is answered, then the
        # stream ends with INVALID_ARGUMENT and the reason.
        good = pb.ExecuteRequest(request_id=1)
        good.operator.CopyFrom(celu())
        good.input = dc.pack(good.operator.celu.input,
                             np.ones((2, 3), np.float32))
        with grpc.insecure_channel(self.target) as channel:
            call = channel.stream_stream(
                "/dmlserve.v1.DmlService/ExecuteStream",
                request_serializer=None, response_deserializer=None)
            responses = []
            with self.assertRaises(grpc.RpcError) as cm:
                for raw in call(iter([good.SerializeToString(),
                                      self.GARBAGE]), timeout=30):
                    responses.append(pb.ExecuteResponse.FromString(raw))
        self.assertEqual(cm.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("the request is not a valid dmlserve.v1.ExecuteRequest",
                      cm.exception.details())
        self.assertEqual([r.request_id for r in responses], [1])
        self.assertEqual(responses[0].status_code, 0)


if __name__ == "__main__":
    unittest.main()
