"""dmlserve_client: a small Python client of the dmlserve.v1 gRPC service.

NumPy arrays in, NumPy arrays out. Needs Debian's python3-grpcio and
python3-numpy, and the generated modules of proto/ on sys.path (the build's
``python`` directory, produced by the CMake target ``dmls_python_stubs``).

    client = DmlClient("127.0.0.1:50051")
    y = client.execute_celu(np.linspace(-2, 2, 8, dtype=np.float32), alpha=1.0)

Tensor layout (dmlserve.proto, TensorDesc): a tensor's payload is the raw
little-endian bytes of its buffer range, ``total_tensor_size_in_bytes`` long,
with the element at logical index (i0..in-1) at element offset
sum_k(ik * strides[k]). ``pack`` and ``unpack`` convert between that buffer
and a logical C-order array, for packed and strided (padded, transposed,
zero-stride broadcast) layouts alike.

Errors: a rejected call raises DmlError carrying the gRPC code and the
google.rpc.BadRequest violations (rule id + field path) the server attaches.
"""

import collections

import grpc
import numpy as np
from google.protobuf import json_format

from dmlserve.v1 import dmlserve_pb2 as pb
from dmlserve.v1 import dmlserve_pb2_grpc as pb_grpc
from google.rpc import error_details_pb2
from google.rpc import status_pb2

_DTYPES = {
    pb.DATA_TYPE_FLOAT32: np.dtype("<f4"),
    pb.DATA_TYPE_FLOAT16: np.dtype("<f2"),
    pb.DATA_TYPE_UINT32: np.dtype("<u4"),
    pb.DATA_TYPE_UINT16: np.dtype("<u2"),
    pb.DATA_TYPE_UINT8: np.dtype("u1"),
    pb.DATA_TYPE_INT32: np.dtype("<i4"),
    pb.DATA_TYPE_INT16: np.dtype("<i2"),
    pb.DATA_TYPE_INT8: np.dtype("i1"),
    pb.DATA_TYPE_FLOAT64: np.dtype("<f8"),
    pb.DATA_TYPE_UINT64: np.dtype("<u8"),
    pb.DATA_TYPE_INT64: np.dtype("<i8"),
}

# OperatorDesc members that carry the optional Scale/Bias tensors.
_SCALE_BIAS_OPS = ("mvn", "mvn1")

Violation = collections.namedtuple("Violation", "rule field description")


class DmlError(Exception):
    """A failed call: gRPC code, message and BadRequest violations."""

    def __init__(self, code, message, violations=()):
        self.code = code
        self.message = message
        self.violations = list(violations)
        first = ("%s at %s" % (self.rule, self.field)) if self.violations else ""
        super().__init__("%s: %s%s" % (code.name if code else "?", message,
                                       " [" + first + "]" if first else ""))

    @property
    def rule(self):
        """Rule id of the first (normative) violation, or None."""
        return self.violations[0].rule if self.violations else None

    @property
    def field(self):
        """Field path of the first violation, or None."""
        return self.violations[0].field if self.violations else None


def _rule_of(description):
    return description.split(":", 1)[0].strip()


def violations_from_rpc_error(error):
    """Decodes the grpc-status-details-bin trailer of a grpc.RpcError."""
    out = []
    trailers = error.trailing_metadata() or ()
    for key, value in trailers:
        if key != "grpc-status-details-bin":
            continue
        status = status_pb2.Status.FromString(value)
        for any_msg in status.details:
            bad = error_details_pb2.BadRequest()
            if any_msg.Unpack(bad):
                for v in bad.field_violations:
                    out.append(Violation(_rule_of(v.description), v.field,
                                         v.description))
    return out


def error_from_rpc(error):
    return DmlError(error.code(), error.details(),
                    violations_from_rpc_error(error))


def data_type_of(dtype):
    """dmlserve DataType of a NumPy dtype."""
    dtype = np.dtype(dtype).newbyteorder("<") if np.dtype(dtype).itemsize > 1 \
        else np.dtype(dtype)
    for data_type, np_dtype in _DTYPES.items():
        if np_dtype == dtype:
            return data_type
    raise ValueError("no dmlserve data type for %s" % dtype)


def numpy_dtype(data_type):
    """NumPy dtype of a dmlserve DataType."""
    try:
        return _DTYPES[data_type]
    except KeyError:
        raise ValueError("no NumPy dtype for data type %d" % data_type)


def packed_strides(shape):
    strides = [1] * len(shape)
    for k in range(len(shape) - 2, -1, -1):
        strides[k] = strides[k + 1] * shape[k + 1]
    return strides


def min_tensor_bytes(data_type, sizes, strides=None):
    """DMLCalcBufferTensorSize (OPERATORS.md 2.4), rounded up to 4 bytes."""
    element = numpy_dtype(data_type).itemsize
    if strides:
        elements = sum((s - 1) * st for s, st in zip(sizes, strides)) + 1
    else:
        elements = int(np.prod(sizes, dtype=np.uint64)) if sizes else 1
    return (elements * element + 3) & ~3


def tensor_desc(dtype, shape, strides=None, total=None, **fields):
    """A TensorDesc of a NumPy dtype (or DataType int) and shape; total size
    defaults to the minimum. Extra keyword fields are set verbatim."""
    data_type = dtype if isinstance(dtype, int) else data_type_of(dtype)
    desc = pb.TensorDesc(data_type=data_type, sizes=list(shape),
                         strides=list(strides or ()), **fields)
    desc.total_tensor_size_in_bytes = (
        total if total is not None
        else min_tensor_bytes(data_type, list(shape), list(strides or ())))
    return desc


def _effective_strides(desc):
    return list(desc.strides) if len(desc.strides) else packed_strides(
        list(desc.sizes))


def pack(desc, array):
    """Payload bytes of `desc` holding the logical C-order `array`."""
    dtype = numpy_dtype(desc.data_type)
    array = np.ascontiguousarray(np.asarray(array, dtype=dtype))
    sizes = tuple(int(s) for s in desc.sizes)
    if array.shape != sizes:
        array = array.reshape(sizes)
    buf = bytearray(desc.total_tensor_size_in_bytes)
    count = len(buf) // dtype.itemsize
    flat = np.frombuffer(buf, dtype=dtype, count=count)
    view = np.lib.stride_tricks.as_strided(
        flat, shape=sizes,
        strides=[s * dtype.itemsize for s in _effective_strides(desc)])
    view[...] = array  # zero strides: the last write of an offset wins
    return bytes(buf)


def unpack(desc, payload):
    """The logical C-order array of `desc` read out of its buffer bytes."""
    dtype = numpy_dtype(desc.data_type)
    sizes = tuple(int(s) for s in desc.sizes)
    strides = _effective_strides(desc)
    last = sum((s - 1) * st for s, st in zip(sizes, strides))
    if len(payload) < (last + 1) * dtype.itemsize:
        raise ValueError("payload of %d bytes is too short for the layout"
                         % len(payload))
    flat = np.frombuffer(payload, dtype=dtype, count=last + 1)
    view = np.lib.stride_tricks.as_strided(
        flat, shape=sizes, strides=[s * dtype.itemsize for s in strides])
    return np.array(view, copy=True)


def _fill_from_array(desc, array):
    """Fills an absent data type / sizes / total size from `array`."""
    if not len(desc.sizes):
        desc.sizes[:] = list(array.shape) or [1]
    if desc.data_type == pb.DATA_TYPE_UNKNOWN:
        desc.data_type = data_type_of(array.dtype)
    if desc.total_tensor_size_in_bytes == 0:
        desc.total_tensor_size_in_bytes = min_tensor_bytes(
            desc.data_type, list(desc.sizes), list(desc.strides))


def operator_desc(op):
    """An OperatorDesc from a message or its proto3 JSON dict form."""
    if isinstance(op, pb.OperatorDesc):
        return op
    return json_format.ParseDict(op, pb.OperatorDesc())



def _operator_body(op):
    member = op.WhichOneof("operator")
    if member is None:
        raise ValueError("the OperatorDesc names no operator")
    return member, getattr(op, member)


def build_request(op, inputs, feature_level=0, in_place=False, request_id=0):
    """An ExecuteRequest for `op` with payloads from `inputs`: an array (the
    input) or a dict with "input" and optional "scale"/"bias" arrays. Tensor
    fields the descriptor lacks are filled packed from the arrays; the output
    copies the input's. Returns (request, output TensorDesc)."""
    request = pb.ExecuteRequest(request_id=request_id,
                                feature_level=feature_level,
                                in_place=in_place)
    request.operator.CopyFrom(operator_desc(op))
    member, body = _operator_body(request.operator)
    if not isinstance(inputs, dict):
        inputs = {"input": inputs}
    for name, array in inputs.items():
        if array is None:
            continue
        if name not in ("input", "scale", "bias"):
            raise ValueError("unknown input %r" % name)
        array = np.asarray(array)
        desc = getattr(body, name)  # marks an optional tensor present
        _fill_from_array(desc, array)
        setattr(request, name, pack(desc, array))
    if body.HasField("input"):
        out = body.output
        if not len(out.sizes):
            out.sizes[:] = list(body.input.sizes)
        if out.data_type == pb.DATA_TYPE_UNKNOWN:
            out.data_type = body.input.data_type
        if out.total_tensor_size_in_bytes == 0:
            out.total_tensor_size_in_bytes = min_tensor_bytes(
                out.data_type, list(out.sizes), list(out.strides))
    return request, body.output


def _fused_activation(fused):
    """FusedActivation from "relu" or ("celu", {"alpha": 1.0})."""
    if fused is None:
        return None
    name, params = (fused, {}) if isinstance(fused, str) else fused
    fa = pb.FusedActivation()
    getattr(fa, name).SetInParent()
    for key, value in params.items():
        setattr(getattr(fa, name), key, value)
    return fa


class DmlClient:
    """Synchronous client of dmlserve.v1.DmlService. Thread-safe (gRPC
    channels and stubs are); use as a context manager to close the channel."""

    def __init__(self, target="127.0.0.1:50051", timeout=60.0,
                 max_message_bytes=256 << 20):
        self.timeout = timeout
        self.channel = grpc.insecure_channel(target, options=[
            ("grpc.max_send_message_length", max_message_bytes),
            ("grpc.max_receive_message_length", max_message_bytes),
        ])
        self.stub = pb_grpc.DmlServiceStub(self.channel)

    def close(self):
        self.channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _call(self, method, request, timeout):
        try:
            return method(request, timeout=self.timeout if timeout is None
                          else timeout)
        except grpc.RpcError as e:
            raise error_from_rpc(e) from None

    def capabilities(self, timeout=None):
        return self._call(self.stub.GetCapabilities,
                          pb.GetCapabilitiesRequest(), timeout)

    def validate(self, op, feature_level=0, in_place=False, timeout=None):
        """ValidateResponse (valid, violations) for `op`."""
        request = pb.ValidateRequest(feature_level=feature_level,
                                     in_place=in_place)
        request.operator.CopyFrom(operator_desc(op))
        return self._call(self.stub.Validate, request, timeout)

    def execute_request(self, request, timeout=None):
        """Raw ExecuteResponse; raises DmlError."""
        return self._call(self.stub.Execute, request, timeout)

    def execute(self, op, inputs, feature_level=0, in_place=False,
                timeout=None):
        """Runs `op` (OperatorDesc or JSON dict) on `inputs` (see
        build_request) and returns the logical output array."""
        request, out = build_request(op, inputs, feature_level, in_place)
        response = self.execute_request(request, timeout)
        return unpack(out, response.output)

    def stream(self, requests, timeout=None):
        """Sends `requests` on one ExecuteStream; returns the responses in
        arrival order (each with its request_id and per-request status)."""
        try:
            return list(self.stub.ExecuteStream(
                iter(requests),
                timeout=self.timeout if timeout is None else timeout))
        except grpc.RpcError as e:
            raise error_from_rpc(e) from None

    # Convenience helpers. Layout keywords: input_strides / output_strides
    # (element strides; the payload is packed through them).

    @staticmethod
    def _unary(member, x, params, input_strides, output_strides,
               output_dtype=None):
        x = np.asarray(x)
        op = pb.OperatorDesc()
        body = getattr(op, member)
        body.input.CopyFrom(tensor_desc(x.dtype, x.shape, input_strides))
        body.output.CopyFrom(tensor_desc(output_dtype or x.dtype, x.shape,
                                         output_strides))
        for key, value in params.items():
            if value is not None:
                if key == "scale_bias":
                    body.scale_bias.scale, body.scale_bias.bias = value
                else:
                    setattr(body, key, value)
        return op

    def execute_activation(self, name, x, input_strides=None,
                           output_strides=None, feature_level=0,
                           in_place=False, **params):
        """Any standalone activation, e.g. ("leaky_relu", x, alpha=0.1)."""
        op = self._unary(name, x, params, input_strides, output_strides)
        return self.execute(op, x, feature_level, in_place)

    def execute_celu(self, x, alpha=1.0, **kw):
        return self.execute_activation("celu", x, alpha=alpha, **kw)

    def execute_threshold(self, x, min, scale_bias=None, input_strides=None,
                          output_strides=None, feature_level=0,
                          in_place=False):
        """max(x*scale+bias, min); scale_bias is (scale, bias) or None."""
        op = self._unary("threshold", x, {"min": min, "scale_bias": scale_bias},
                         input_strides, output_strides)
        return self.execute(op, x, feature_level, in_place)

    def execute_clip(self, x, min, max, scale_bias=None, input_strides=None,
                     output_strides=None, feature_level=0, in_place=False):
        op = self._unary("clip", x, {"min": min, "max": max,
                                     "scale_bias": scale_bias},
                         input_strides, output_strides)
        return self.execute(op, x, feature_level, in_place)

    def execute_mvn1(self, x, axes, scale=None, bias=None, epsilon=1e-5,
                     normalize_variance=True, fused=None, input_strides=None,
                     output_strides=None, feature_level=0):
        """MVN1 over `axes`; scale/bias arrays of the input's rank (any dim
        may be 1); fused is e.g. "relu" or ("celu", {"alpha": 1.0})."""
        x = np.asarray(x)
        op = pb.OperatorDesc()
        m = op.mvn1
        m.input.CopyFrom(tensor_desc(x.dtype, x.shape, input_strides))
        m.output.CopyFrom(tensor_desc(x.dtype, x.shape, output_strides))
        inputs = {"input": x}
        for name, arr in (("scale", scale), ("bias", bias)):
            if arr is not None:
                arr = np.asarray(arr, dtype=x.dtype)
                getattr(m, name).CopyFrom(tensor_desc(arr.dtype, arr.shape))
                inputs[name] = arr
        m.axes[:] = list(axes)
        m.axis_count = len(axes)
        m.normalize_variance = normalize_variance
        m.epsilon = epsilon
        fa = _fused_activation(fused)
        if fa is not None:
            m.fused_activation.CopyFrom(fa)
        return self.execute(op, inputs, feature_level)
