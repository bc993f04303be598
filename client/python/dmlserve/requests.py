"""Requests of one operator: binding arrays and handles to an operator's
tensor descriptors (``prepare``), the ExecuteRequest they make
(``build_request``), and the plans the blocking and asyncio clients share
to send ExecuteRequests and turn responses into arrays (``ExecutePlan``,
``stream_plans``).

Pure functions; thread-safe.
"""

from typing import (Any, Dict, Iterable, List, Mapping, NamedTuple,
                    Optional, Tuple, Union)

import numpy as np

from dmlserve.errors import DmlError, error_from_response
from dmlserve.handle import HandleLike, TensorHandle, handle_id, is_handle
from dmlserve.layout import data_type_of, min_tensor_bytes, pack, unpack
from dmlserve.ops import (OperatorLike, as_array, data_type, level,
                          operator_body, operator_desc)
from dmlserve.v1 import dmlserve_pb2 as pb

#: A tensor source: a NumPy array (or anything np.asarray takes), a
#: TensorHandle, or a bare handle string (its sizes must then be
#: declared).
Source = Any
#: An operator's inputs: one source for "input", or a dict with "input" and
#: optional "scale" and "bias".
Inputs = Union[Source, Mapping[str, Source]]
#: What execute returns: the logical output array, or the TensorHandle of an
#: output kept on the server.
Result = Union[np.ndarray, TensorHandle]

_SLOTS = ("input", "scale", "bias")


def _fill_from_array(desc: pb.TensorDesc, array: np.ndarray) -> None:
    """Fills an absent data type / sizes / total size from `array`."""
    if not len(desc.sizes):
        desc.sizes[:] = list(array.shape) or [1]
    if desc.data_type == pb.DATA_TYPE_UNKNOWN:
        desc.data_type = data_type(data_type_of(array.dtype))
    if desc.total_tensor_size_in_bytes == 0:
        desc.total_tensor_size_in_bytes = min_tensor_bytes(
            desc.data_type, list(desc.sizes), list(desc.strides))


def bind_source(desc: pb.TensorDesc, source: Source, cast: Any = None,
                what: str = "input") -> Tuple[str, Union[bytes, str]]:
    """Completes `desc` from a tensor source (array or handle) and returns
    ("data", payload bytes) or ("handle", handle string). An array whose
    data type `desc` declares is converted to it; otherwise its own dtype
    is used (float64 only with `cast`, see ops.as_array)."""
    if is_handle(source):
        if isinstance(source, TensorHandle) and source.desc is not None \
                and not len(desc.sizes):
            desc.CopyFrom(source.desc)
        if not len(desc.sizes):
            raise ValueError("handle %s: the descriptor must give the tensor's "
                             "sizes (pass a TensorHandle to copy its desc)"
                             % handle_id(source))
        return "handle", handle_id(source)
    array = as_array(source, cast, what,
                     declared=desc.data_type != pb.DATA_TYPE_UNKNOWN)
    _fill_from_array(desc, array)
    return "data", pack(desc, array)


def fill_output(body: Any) -> pb.TensorDesc:
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


def _sources(inputs: Inputs) -> List[Tuple[str, Source]]:
    if not isinstance(inputs, Mapping):
        inputs = {"input": inputs}
    for name in inputs:
        if name not in _SLOTS:
            raise ValueError("unknown input %r (valid: %s)"
                             % (name, ", ".join(_SLOTS)))
    return [(n, s) for n, s in inputs.items() if s is not None]


def rank_of(source: Source) -> Optional[int]:
    """The rank a source's tensor has, when the source tells (an array: its
    ndim, at least 1; a TensorHandle with a desc: its sizes)."""
    if isinstance(source, TensorHandle):
        return len(source.desc.sizes) if source.desc is not None else None
    if isinstance(source, str) or source is None:
        return None
    return max(np.ndim(source), 1)


def prepare(op: OperatorLike, inputs: Inputs, cast: Any = None
            ) -> Tuple[pb.OperatorDesc, Dict[str, Tuple[str, Any]],
                       pb.TensorDesc]:
    """Binds `inputs` (an array or handle for the input, or a dict with
    "input" and optional "scale"/"bias", each an array, a TensorHandle or a
    handle string) to a copy of `op` (with ops.DEFAULTS filled in), filling
    what the tensor descriptors lack. `cast`: see ops.as_array. Returns
    (OperatorDesc, {name: ("data", bytes) | ("handle", str)}, output
    TensorDesc)."""
    sources = _sources(inputs)
    rank = rank_of(dict(sources).get("input"))
    op_copy = operator_desc(op, rank)
    _, body = operator_body(op_copy)
    bound = {}
    for name, source in sources:
        bound[name] = bind_source(getattr(body, name), source, cast, name)
    return op_copy, bound, fill_output(body)


def build_request(op: OperatorLike, inputs: Inputs, feature_level: int = 0,
                  in_place: bool = False, request_id: int = 0,
                  keep_output: bool = False,
                  output_handle: Optional[HandleLike] = None,
                  keep_output_ttl: int = 0, cast: Any = None
                  ) -> Tuple[pb.ExecuteRequest, pb.TensorDesc]:
    """An ExecuteRequest for `op` with tensors from `inputs` (see prepare):
    arrays travel as bytes, handles by name. keep_output / output_handle
    leave the output on the server. Returns (request, output TensorDesc);
    DmlClient.stream takes the pair as it is."""
    op, bound, out = prepare(op, inputs, cast)
    request = pb.ExecuteRequest(request_id=request_id,
                                feature_level=level(feature_level),
                                in_place=in_place, keep_output=keep_output,
                                keep_output_ttl_seconds=keep_output_ttl)
    request.operator.CopyFrom(op)
    for name, (kind, value) in bound.items():
        if kind == "data":
            setattr(request, name, value)
        else:
            setattr(request, name + "_handle", value)
    if output_handle is not None:
        request.output_handle = handle_id(output_handle)
    return request, operator_body(request.operator)[1].output


class ExecutePlan(NamedTuple):
    """An ExecuteRequest and how its response becomes what execute returns.
    `output` None: the response itself is the result (raw requests)."""
    request: pb.ExecuteRequest
    output: Optional[pb.TensorDesc]
    output_handle: Optional[HandleLike] = None

    @classmethod
    def of(cls, op: OperatorLike, inputs: Inputs,
           output_handle: Optional[HandleLike] = None, **kw: Any
           ) -> "ExecutePlan":
        """The plan of execute(op, inputs, ...) (kw: build_request's)."""
        request, out = build_request(op, inputs, output_handle=output_handle,
                                     **kw)
        return cls(request, out, output_handle)

    def decode(self, response: pb.ExecuteResponse) -> Any:
        """The output array, or the TensorHandle of an output kept on the
        server; the response itself for a raw request."""
        if self.output is None:
            return response
        if response.output_handle:
            if isinstance(self.output_handle, TensorHandle):
                return self.output_handle
            return TensorHandle(response.output_handle, self.output)
        return unpack(self.output, response.output)

    def chunked_payloads(self) -> Optional[Dict[str, bytes]]:
        """The request's tensors as ExecuteChunked takes them ({name:
        bytes}), or None when it cannot go that way: a tensor named by
        handle, an output kept on the server, a raw request."""
        r = self.request
        if self.output is None or r.input_handle or r.scale_handle or \
                r.bias_handle or r.output_handle or r.keep_output:
            return None
        payloads = {"input": r.input}
        if r.scale:
            payloads["scale"] = r.scale
        if r.bias:
            payloads["bias"] = r.bias
        return payloads


#: One call of stream(): (op, inputs); a dict with "op", "inputs" and
#: execute's keyword arguments; an (ExecuteRequest, output TensorDesc) pair
#: as build_request returns; or a bare ExecuteRequest (its raw response
#: comes back).
StreamCall = Union[Tuple[Any, ...], Mapping[str, Any], pb.ExecuteRequest]


def _plan_of(call: StreamCall, cast: Any) -> ExecutePlan:
    if isinstance(call, pb.ExecuteRequest):
        return ExecutePlan(call, None)
    if isinstance(call, Mapping):
        kw = dict(call)
        op, inputs = kw.pop("op"), kw.pop("inputs")
        kw.setdefault("cast", cast)
        return ExecutePlan.of(op, inputs, **kw)
    if isinstance(call, tuple) and len(call) == 2 and \
            isinstance(call[0], pb.ExecuteRequest):
        return ExecutePlan(call[0], call[1])
    if isinstance(call, tuple) and len(call) == 2:
        return ExecutePlan.of(call[0], call[1], cast=cast)
    raise TypeError("a stream call is (op, inputs), a dict with op and "
                    "inputs, build_request's (request, desc) pair or an "
                    "ExecuteRequest; got %s" % type(call).__name__)


def stream_plans(calls: Iterable[StreamCall], cast: Any = None
                 ) -> List[ExecutePlan]:
    """The plans of stream()'s calls. Calls built here get request ids
    1..n in order (responses are matched by id); raw ExecuteRequests keep
    theirs and must not be mixed with the other forms."""
    plans = [_plan_of(c, cast) for c in calls]
    raw = [p.output is None for p in plans]
    if any(raw) and not all(raw):
        raise TypeError("stream(): bare ExecuteRequests (raw responses) "
                        "cannot be mixed with calls that return arrays")
    if not any(raw):
        for i, plan in enumerate(plans):
            plan.request.request_id = i + 1
    return plans


def stream_results(plans: List[ExecutePlan],
                   responses: Iterable[pb.ExecuteResponse],
                   raise_errors: bool = True) -> List[Any]:
    """stream()'s results in call order: what execute would return for each,
    or (raise_errors False) the DmlError of a failed one in its place. Raw
    requests: the responses in arrival order."""
    responses = list(responses)
    if plans and plans[0].output is None:
        return responses
    results: List[Any] = [None] * len(plans)
    seen = [False] * len(plans)
    for response in responses:
        index = response.request_id - 1
        if not 0 <= index < len(plans) or seen[index]:
            raise DmlError(None, "stream: unexpected response id %d"
                           % response.request_id)
        seen[index] = True
        if response.status_code != 0:
            error = error_from_response(response)
            if raise_errors:
                raise error
            results[index] = error
        else:
            results[index] = plans[index].decode(response)
    if not all(seen):
        raise DmlError(None, "stream: %d of %d responses missing"
                       % (seen.count(False), len(plans)))
    return results
