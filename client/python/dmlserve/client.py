"""dmlserve_client: a small Python client of the dmlserve.v1 gRPC service.

NumPy arrays in, NumPy arrays out. Needs Debian's python3-grpcio and
python3-numpy, and the generated modules of proto/ on sys.path (the build's
``python`` directory, produced by the CMake target ``dmls_python_stubs``).

    client = DmlClient("127.0.0.1:50051")
    y = client.execute_celu(np.linspace(-2, 2, 8, dtype=np.float32), alpha=1.0)

Tensor layout: ``pack`` / ``unpack`` (from dmlserve_layout, re-exported)
convert between a tensor's buffer bytes and a logical C-order array.

Resident tensors (TensorService): ``create_tensor``, ``upload`` (WriteTensor
in chunks, with a progress callback), ``download`` (ReadTensor in chunks),
``release`` and ``list_tensors`` deal in ``TensorHandle`` objects; ``execute``
takes handles for any tensor and can keep its output on the server; ``chain``
runs a ``Chain`` of operators on the device in one call; ``execute_chunked``
streams one operator's tensors both ways in chunks. The optional ``tenant``
is sent as metadata on every call and owns the client's tensors.

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
from dmlserve.layout import (  # noqa: F401 (re-exported)
    data_type_of, min_tensor_bytes, numpy_dtype, pack, packed_strides,
    tensor_desc, unpack)

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


def _handle_id(handle):
    """The handle string of a TensorHandle or a str."""
    return handle.handle if isinstance(handle, TensorHandle) else str(handle)


def _is_handle(source):
    return isinstance(source, (TensorHandle, str))


def _bind_source(desc, source):
    """Completes `desc` from a tensor source (array or handle) and returns
    ("data", payload bytes) or ("handle", handle string)."""
    if _is_handle(source):
        if isinstance(source, TensorHandle) and source.desc is not None \
                and not len(desc.sizes):
            desc.CopyFrom(source.desc)
        if not len(desc.sizes):
            raise ValueError("handle %s: the descriptor must give the tensor's "
                             "sizes (pass a TensorHandle to copy its desc)"
                             % _handle_id(source))
        return "handle", _handle_id(source)
    array = np.asarray(source)
    _fill_from_array(desc, array)
    return "data", pack(desc, array)


def _fill_output(body):
    """The output copies what it lacks from the input (packed)."""
    if body.HasField("input"):
        out = body.output
        if not len(out.sizes):
            out.sizes[:] = list(body.input.sizes)
        if out.data_type == pb.DATA_TYPE_UNKNOWN:
            out.data_type = body.input.data_type
        if out.total_tensor_size_in_bytes == 0:
            out.total_tensor_size_in_bytes = min_tensor_bytes(
                out.data_type, list(out.sizes), list(out.strides))
    return body.output


def _sources(inputs):
    if not isinstance(inputs, dict):
        inputs = {"input": inputs}
    for name in inputs:
        if name not in ("input", "scale", "bias"):
            raise ValueError("unknown input %r" % name)
    return [(n, s) for n, s in inputs.items() if s is not None]


def prepare(op, inputs):
    """Binds `inputs` (an array or handle for the input, or a dict with
    "input" and optional "scale"/"bias", each an array, a TensorHandle or a
    handle string) to a copy of `op`, filling what the tensor descriptors
    lack. Returns (OperatorDesc, {name: ("data", bytes) | ("handle", str)},
    output TensorDesc)."""
    op_copy = pb.OperatorDesc()
    op_copy.CopyFrom(operator_desc(op))
    _, body = _operator_body(op_copy)
    bound = {}
    for name, source in _sources(inputs):
        bound[name] = _bind_source(getattr(body, name), source)
    return op_copy, bound, _fill_output(body)


def build_request(op, inputs, feature_level=0, in_place=False, request_id=0,
                  keep_output=False, output_handle=None, keep_output_ttl=0):
    """An ExecuteRequest for `op` with tensors from `inputs` (see prepare):
    arrays travel as bytes, handles by name. keep_output / output_handle
    leave the output on the server. Returns (request, output TensorDesc)."""
    op, bound, out = prepare(op, inputs)
    request = pb.ExecuteRequest(request_id=request_id,
                                feature_level=feature_level,
                                in_place=in_place, keep_output=keep_output,
                                keep_output_ttl_seconds=keep_output_ttl)
    request.operator.CopyFrom(op)
    for name, (kind, value) in bound.items():
        if kind == "data":
            setattr(request, name, value)
        else:
            setattr(request, name + "_handle", value)
    if output_handle is not None:
        request.output_handle = _handle_id(output_handle)
    return request, _operator_body(request.operator)[1].output


class TensorHandle:
    """A resident tensor: its opaque handle string, TensorDesc, size in bytes,
    expiry (Unix ms; 0 never, None unknown) and device. str() is the handle;
    a TensorHandle or the bare string may be passed wherever a handle goes."""

    def __init__(self, handle, desc=None, size=None, expiry=None, device=""):
        self.handle = handle
        self.desc = desc
        self.size = size if size is not None else (
            desc.total_tensor_size_in_bytes if desc is not None else None)
        self.expiry = expiry
        self.device = device

    @classmethod
    def from_info(cls, info):
        """From a ResidentTensorInfo."""
        desc = pb.TensorDesc()
        desc.CopyFrom(info.desc)
        return cls(info.handle, desc, info.size_bytes, info.expires_unix_ms,
                   info.device)

    def __str__(self):
        return self.handle

    def __repr__(self):
        return "TensorHandle(%s, %s bytes)" % (self.handle, self.size)

    def __eq__(self, other):
        return _handle_id(other) == self.handle if _is_handle(other) else \
            NotImplemented

    def __hash__(self):
        return hash(self.handle)


TensorList = collections.namedtuple(
    "TensorList", "tensors principal_bytes principal_quota_bytes")

ChainResult = collections.namedtuple(
    "ChainResult", "arrays handles engine server_time_us")


def chunk_ranges(total, chunk_bytes, start=0):
    """[(offset, length)] covering [start, start + total) in chunks of at most
    chunk_bytes (none when total is 0)."""
    if chunk_bytes <= 0:
        raise ValueError("chunk_bytes must be positive")
    return [(start + o, min(chunk_bytes, total - o))
            for o in range(0, total, chunk_bytes)]


def _progress_chunks(payload, chunk_bytes, start, progress):
    """(absolute offset, chunk bytes) of `payload` written from `start`;
    calls progress(bytes so far, total) as each is handed over."""
    view = memoryview(payload)
    total = len(payload)
    for offset, length in chunk_ranges(total, chunk_bytes, start):
        yield offset, bytes(view[offset - start:offset - start + length])
        if progress is not None:
            progress(offset - start + length, total)


def write_requests(payload, chunk_bytes, handle=None, create=None,
                   start_offset=0, progress=None):
    """The WriteTensorRequest stream of an upload: the first message names
    the tensor (handle, or create: a CreateTensorRequest) with start_offset,
    total_bytes and the first chunk; the rest carry one chunk each."""
    first = pb.WriteTensorRequest(start_offset=start_offset,
                                  total_bytes=len(payload))
    if handle is not None:
        first.handle = _handle_id(handle)
    else:
        first.create.CopyFrom(create)
    chunks = _progress_chunks(payload, chunk_bytes, start_offset, progress)
    head = next(chunks, None)
    if head is not None:
        first.chunk.offset, first.chunk.data = head
    yield first
    for offset, data in chunks:
        yield pb.WriteTensorRequest(chunk=pb.TensorChunk(offset=offset,
                                                         data=data))


def chunked_requests(header, payloads, chunk_bytes, progress=None):
    """The ChunkedRequest stream of ExecuteChunked: the header, then each
    tensor's chunks (input, scale, bias; offsets from 0), then `end`.
    progress(bytes so far, total of all tensors) after each chunk."""
    yield pb.ChunkedRequest(header=header)
    total = sum(len(p) for p in payloads.values())
    done = 0
    for name, slot in (("input", pb.TENSOR_SLOT_INPUT),
                       ("scale", pb.TENSOR_SLOT_SCALE),
                       ("bias", pb.TENSOR_SLOT_BIAS)):
        if name not in payloads:
            continue
        for offset, data in _progress_chunks(payloads[name], chunk_bytes, 0,
                                             None):
            yield pb.ChunkedRequest(chunk=pb.TensorChunk(
                slot=slot, offset=offset, data=data))
            done += len(data)
            if progress is not None:
                progress(done, total)
    yield pb.ChunkedRequest(end=True)


def assemble_chunks(chunks, start, total=None, progress=None):
    """Joins TensorChunks that must arrive in order from `start`; raises
    ValueError on a gap, overlap or overrun. Returns bytes."""
    buf = bytearray()
    for chunk in chunks:
        if chunk.offset != start + len(buf):
            raise ValueError("chunk at offset %d, expected %d"
                             % (chunk.offset, start + len(buf)))
        buf += chunk.data
        if total is not None and len(buf) > total:
            raise ValueError("%d bytes received, expected %d"
                             % (len(buf), total))
        if progress is not None:
            progress(len(buf), total)
    if total is not None and len(buf) != total:
        raise ValueError("%d bytes received, expected %d" % (len(buf), total))
    return bytes(buf)


class Chain:
    """Builds a ChainRequest step by step. Each step's input/scale/bias is a
    NumPy array (sent inline), a TensorHandle or handle string (resident), or
    the int index of an earlier step (its output, kept on the device).
    Descriptors the operator lacks are filled from the source (an earlier
    step's output descriptor, a TensorHandle's desc, an array's shape), and
    the output copies the input's.

        chain = Chain()
        a = chain.step({"celu": {"alpha": 1.0}}, x)
        b = chain.step(mvn1_op, a)
        chain.step({"threshold": {"min": 0.0}}, b, return_output=True)
        result = client.chain(chain)      # result.arrays[2]
    """

    _FLAGS = ("in_place", "return_output", "output_handle", "keep_output",
              "keep_output_ttl")

    def __init__(self):
        self._steps = []  # (OperatorDesc, {name: source}, {flag: value})

    def __len__(self):
        return len(self._steps)

    def step(self, op, input, scale=None, bias=None, in_place=False,
             return_output=False, output_handle=None, keep_output=False,
             keep_output_ttl=0):
        """Appends a step; returns its index (a source for later steps)."""
        sources = {"input": input, "scale": scale, "bias": bias}
        self._steps.append((operator_desc(op), sources, {
            "in_place": in_place, "return_output": return_output,
            "output_handle": output_handle, "keep_output": keep_output,
            "keep_output_ttl": keep_output_ttl}))
        return len(self._steps) - 1

    @classmethod
    def from_steps(cls, steps):
        """From dicts with "op" and the keyword arguments of step()."""
        chain = cls()
        for s in steps:
            s = dict(s)
            chain.step(s.pop("op"), **s)
        return chain

    def request(self, feature_level=0, request_id=0):
        """(ChainRequest, [output TensorDesc of each step])."""
        request = pb.ChainRequest(request_id=request_id,
                                  feature_level=feature_level)
        outputs = []
        for op, sources, flags in self._steps:
            step = request.steps.add(in_place=flags["in_place"],
                                     return_output=flags["return_output"],
                                     keep_output=flags["keep_output"],
                                     keep_output_ttl_seconds=flags[
                                         "keep_output_ttl"])
            step.operator.CopyFrom(op)
            _, body = _operator_body(step.operator)
            for name, source in sources.items():
                if source is None:
                    continue
                tensor = getattr(step, name)
                if isinstance(source, (int, np.integer)) and \
                        not isinstance(source, bool):
                    tensor.step = int(source)
                    desc = getattr(body, name)
                    if 0 <= source < len(outputs) and not len(desc.sizes):
                        desc.CopyFrom(outputs[source])
                    continue
                kind, value = _bind_source(getattr(body, name), source)
                setattr(tensor, kind, value)
            if flags["output_handle"] is not None:
                step.output_handle = _handle_id(flags["output_handle"])
            out = pb.TensorDesc()
            out.CopyFrom(_fill_output(body))
            outputs.append(out)
        return request, outputs


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


def _pem(value):
    """PEM bytes from bytes, or from the file a str path names; None stays."""
    if value is None or isinstance(value, bytes):
        return value
    with open(value, "rb") as f:
        return f.read()


class DmlClient:
    """Synchronous client of dmlserve.v1.DmlService and TensorService.
    Thread-safe (gRPC channels and stubs are); use as a context manager to
    close the channel. `tenant`, when given, is sent as the `tenant` metadata
    of every call: the principal that owns resident tensors (without it the
    server uses the connection's peer, so only this channel sees them).

    TLS: `tls=True` (system roots), or `root_certificates` (PEM bytes or a
    file path) for a private CA; `certificate_chain` and `private_key` (PEM
    bytes or paths) for mutual TLS; `server_name` overrides the name checked
    against the server's certificate. `token` is sent as
    `authorization: Bearer TOKEN` (servers with --auth_tokens_file)."""

    def __init__(self, target="127.0.0.1:50051", timeout=60.0,
                 max_message_bytes=256 << 20, tenant=None, tls=False,
                 root_certificates=None, certificate_chain=None,
                 private_key=None, server_name=None, token=None):
        self.timeout = timeout
        self.tenant = tenant
        metadata = []
        if tenant is not None:
            metadata.append(("tenant", tenant))
        if token is not None:
            metadata.append(("authorization", "Bearer " + token))
        self._metadata = tuple(metadata)
        self._limits = None
        options = [
            ("grpc.max_send_message_length", max_message_bytes),
            ("grpc.max_receive_message_length", max_message_bytes),
            # A connection of its own (gRPC would otherwise share one among
            # channels to the same target), so that without a tenant this
            # client's resident tensors are its own.
            ("grpc.use_local_subchannel_pool", 1),
        ]
        if server_name is not None:
            options.append(("grpc.ssl_target_name_override", server_name))
        if tls or root_certificates or certificate_chain or private_key:
            credentials = grpc.ssl_channel_credentials(
                root_certificates=_pem(root_certificates),
                private_key=_pem(private_key),
                certificate_chain=_pem(certificate_chain))
            self.channel = grpc.secure_channel(target, credentials,
                                               options=options)
        else:
            self.channel = grpc.insecure_channel(target, options=options)
        self.stub = pb_grpc.DmlServiceStub(self.channel)
        self.tensors = pb_grpc.TensorServiceStub(self.channel)

    def close(self):
        self.channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _timeout(self, timeout):
        return self.timeout if timeout is None else timeout

    def _call(self, method, request, timeout):
        """Calls a unary method with `request`, or a client-streaming one with
        an iterator of requests; DmlError on failure."""
        try:
            return method(request, timeout=self._timeout(timeout),
                          metadata=self._metadata)
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
                timeout=None, keep_output=False, output_handle=None,
                keep_output_ttl=0):
        """Runs `op` (OperatorDesc or JSON dict) on `inputs` (arrays and/or
        handles, see prepare) and returns the logical output array, or a
        TensorHandle when the output stays on the server (keep_output,
        output_handle, or in_place on an input handle)."""
        request, out = build_request(op, inputs, feature_level, in_place,
                                     keep_output=keep_output,
                                     output_handle=output_handle,
                                     keep_output_ttl=keep_output_ttl)
        response = self.execute_request(request, timeout)
        if response.output_handle:
            if isinstance(output_handle, TensorHandle):
                return output_handle
            return TensorHandle(response.output_handle, out)
        return unpack(out, response.output)

    def stream(self, requests, timeout=None):
        """Sends `requests` on one ExecuteStream; returns the responses in
        arrival order (each with its request_id and per-request status)."""
        try:
            return list(self.stub.ExecuteStream(
                iter(requests), timeout=self._timeout(timeout),
                metadata=self._metadata))
        except grpc.RpcError as e:
            raise error_from_rpc(e) from None

    # Resident tensors, chains and chunked transfers.

    def limits(self):
        """The server's Limits (cached after the first call)."""
        if self._limits is None:
            self._limits = self.capabilities().limits
        return self._limits

    def _chunk_bytes(self, chunk_bytes):
        """chunk_bytes, or the server's default chunk within its maximum."""
        if chunk_bytes:
            return chunk_bytes
        limits = self.limits()
        size = limits.default_chunk_bytes or (1 << 20)
        return min(size, limits.max_chunk_bytes or size)

    def _read_stream(self, method, request, start, total, progress, timeout,
                     unwrap=lambda r: r, done=lambda r: False):
        """Assembles a server stream of chunks (in order from `start`) into
        bytes; unwrap picks a response's chunk (or None), done ends it."""
        def chunks(responses):
            for r in responses:
                chunk = unwrap(r)
                if chunk is not None:
                    yield chunk
                if done(r):
                    return
        try:
            responses = method(request, timeout=self._timeout(timeout),
                               metadata=self._metadata)
            return assemble_chunks(chunks(responses), start, total, progress)
        except grpc.RpcError as e:
            raise error_from_rpc(e) from None

    def create_tensor(self, source, ttl=0, chunk_bytes=None, progress=None,
                      timeout=None):
        """A resident tensor from a TensorDesc (zero-filled) or an array
        (its packed desc; larger than one chunk: uploaded in chunks).
        ttl: seconds to live (0: the server's default). Returns a
        TensorHandle."""
        if isinstance(source, pb.TensorDesc):
            return TensorHandle.from_info(self._call(
                self.tensors.CreateTensor,
                pb.CreateTensorRequest(desc=source, ttl_seconds=ttl), timeout))
        array = np.asarray(source)
        desc = tensor_desc(array.dtype, array.shape or (1,))
        payload = pack(desc, array)
        if len(payload) > self._chunk_bytes(chunk_bytes):
            return self.upload(array, desc=desc, ttl=ttl,
                               chunk_bytes=chunk_bytes, progress=progress,
                               timeout=timeout)
        return TensorHandle.from_info(self._call(
            self.tensors.CreateTensor,
            pb.CreateTensorRequest(desc=desc, data=payload, ttl_seconds=ttl),
            timeout))

    def upload(self, data, desc=None, handle=None, offset=0, chunk_bytes=None,
               progress=None, ttl=0, timeout=None):
        """Writes `data` (an array, packed through `desc`, the handle's desc
        or its own packed desc; or raw bytes) with WriteTensor in chunks of
        chunk_bytes, calling progress(bytes sent, total). With `handle` it
        overwrites that tensor from byte `offset`; otherwise it creates one
        (desc required for bytes; ttl as create_tensor) that exists only
        once every chunk arrived. Returns the TensorHandle."""
        if isinstance(data, (bytes, bytearray, memoryview)):
            payload = data
            if handle is None and desc is None:
                raise ValueError("raw bytes need a desc to create a tensor")
        else:
            array = np.asarray(data)
            if desc is None and isinstance(handle, TensorHandle):
                desc = handle.desc
            if desc is None:
                desc = tensor_desc(array.dtype, array.shape or (1,))
            payload = pack(desc, array)
        create = None if handle is not None else pb.CreateTensorRequest(
            desc=desc, ttl_seconds=ttl)
        requests = write_requests(payload, self._chunk_bytes(chunk_bytes),
                                  handle=handle, create=create,
                                  start_offset=offset, progress=progress)
        info = self._call(self.tensors.WriteTensor, requests, timeout)
        return TensorHandle.from_info(info)

    def download(self, handle, offset=0, length=0, chunk_bytes=0,
                 progress=None, timeout=None):
        """Reads a resident tensor with ReadTensor (server chunks of
        chunk_bytes; 0: its default), calling progress(bytes so far, total).
        The whole tensor comes back as its logical array (the desc from a
        TensorHandle, else looked up with list_tensors); a partial range
        (offset/length) as bytes."""
        desc = handle.desc if isinstance(handle, TensorHandle) else None
        partial = offset != 0 or length != 0
        if desc is None and not partial:
            desc = self._lookup(handle).desc
        if desc is not None and not partial:
            total = desc.total_tensor_size_in_bytes
        elif desc is not None and length == 0 and \
                offset <= desc.total_tensor_size_in_bytes:
            total = desc.total_tensor_size_in_bytes - offset
        else:
            total = length or None
        request = pb.ReadTensorRequest(handle=_handle_id(handle), offset=offset,
                                       length=length, chunk_bytes=chunk_bytes)
        data = self._read_stream(self.tensors.ReadTensor, request, offset,
                                    total, progress, timeout)
        return data if partial else unpack(desc, data)

    def _lookup(self, handle):
        for t in self.list_tensors().tensors:
            if t.handle == _handle_id(handle):
                return t
        raise DmlError(grpc.StatusCode.NOT_FOUND,
                       "HANDLE_NOT_FOUND: %s is not listed" % _handle_id(handle))

    def release(self, handle, timeout=None):
        self._call(self.tensors.ReleaseTensor,
                   pb.ReleaseTensorRequest(handle=_handle_id(handle)), timeout)

    def list_tensors(self, timeout=None):
        """TensorList(tensors=[TensorHandle], principal_bytes,
        principal_quota_bytes) of the caller's resident tensors."""
        r = self._call(self.tensors.ListTensors, pb.ListTensorsRequest(),
                       timeout)
        return TensorList([TensorHandle.from_info(t) for t in r.tensors],
                          r.principal_bytes, r.principal_quota_bytes)

    def chain(self, steps, feature_level=0, timeout=None):
        """Runs a Chain (or a list of step dicts, see Chain.from_steps) with
        ExecuteChain. Returns ChainResult: arrays {step: logical array} of
        the steps that return their output, handles {step: TensorHandle} of
        those that keep it or write it to output_handle."""
        chain = steps if isinstance(steps, Chain) else Chain.from_steps(steps)
        request, outputs = chain.request(feature_level)
        response = self._call(self.stub.ExecuteChain, request, timeout)
        arrays, handles = {}, {}
        for o in response.outputs:
            if o.data:
                arrays[o.step] = unpack(outputs[o.step], o.data)
            if o.handle:
                handles[o.step] = TensorHandle(o.handle, outputs[o.step])
        return ChainResult(arrays, handles, response.engine,
                           response.server_time_us)

    def execute_chunked(self, op, inputs, chunk_bytes=None, progress=None,
                        feature_level=0, in_place=False,
                        response_chunk_bytes=0, download_progress=None,
                        timeout=None):
        """Runs `op` on arrays through ExecuteChunked: the tensors go up in
        chunks of chunk_bytes (progress(bytes sent, total)) and the output
        comes back in chunks (response_chunk_bytes; 0: the server's default;
        download_progress(bytes so far, total)), so no message holds a whole
        tensor. Returns the logical output array."""
        op, bound, out = prepare(op, inputs)
        payloads = {}
        for name, (kind, value) in bound.items():
            if kind != "data":
                raise ValueError("execute_chunked takes arrays, not handles")
            payloads[name] = value
        header = pb.ChunkedHeader(feature_level=feature_level,
                                  in_place=in_place,
                                  chunk_bytes=response_chunk_bytes)
        header.operator.CopyFrom(op)
        total = out.total_tensor_size_in_bytes
        if in_place:
            total = max(total, len(payloads.get("input", b"")))
        requests = chunked_requests(header, payloads,
                                    self._chunk_bytes(chunk_bytes), progress)
        data = self._read_stream(
            self.stub.ExecuteChunked, requests, 0, total, download_progress,
            timeout, unwrap=lambda r: r.chunk if r.HasField("chunk") else None,
            done=lambda r: r.done)
        return unpack(out, data)

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
