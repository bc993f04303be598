"""Chain: a ChainRequest built step by step (ExecuteChain runs every step
on the device in one call), and the ChainResult it gives back.

Not thread-safe while steps are added; the built request is a new message.
"""

from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Tuple

import numpy as np

from dmlserve.handle import HandleLike, TensorHandle, handle_id
from dmlserve.layout import unpack
from dmlserve.ops import OperatorLike, level, operator_body, operator_desc
from dmlserve.requests import Source, bind_source, fill_output, rank_of
from dmlserve.v1 import dmlserve_pb2 as pb


class ChainResult(NamedTuple):
    """ExecuteChain's outcome: {step: logical array} of the steps that
    return their output, {step: TensorHandle} of those that keep it or
    write it to an output handle, the engine and the server time."""
    arrays: Dict[int, np.ndarray]
    handles: Dict[int, TensorHandle]
    engine: str
    server_time_us: int


def _is_step_ref(source: Any) -> bool:
    return isinstance(source, (int, np.integer)) and \
        not isinstance(source, bool)


class Chain:
    """Builds a ChainRequest step by step. Each step's input/scale/bias is a
    NumPy array (sent inline), a TensorHandle or handle string (resident), or
    the int index of an earlier step (its output, kept on the device).
    Descriptors the operator lacks are filled from the source (an earlier
    step's output descriptor, a TensorHandle's desc, an array's shape), and
    the output copies the input's. Operators get ops.DEFAULTS and negative
    MVN1 axes count from the end of the step input's rank, as in execute.

        chain = Chain()
        a = chain.step({"celu": {}}, x)
        b = chain.step({"mvn1": {"axes": -1}}, a)
        chain.step({"threshold": {"min": 0.0}}, b, return_output=True)
        result = client.chain(chain)      # result.arrays[2]

    `cast`: how float64 arrays are converted (see ops.as_array).
    """

    def __init__(self, cast: Any = None) -> None:
        self.cast = cast
        # (OperatorDesc, {name: source}, {flag: value}, input rank or None)
        self._steps: List[Tuple[pb.OperatorDesc, Dict[str, Source],
                                Dict[str, Any], Optional[int]]] = []

    def __len__(self) -> int:
        return len(self._steps)

    def _rank_of(self, source: Source) -> Optional[int]:
        if _is_step_ref(source):
            if 0 <= source < len(self._steps):
                return self._steps[source][3]
            return None
        return rank_of(source)

    def step(self, op: OperatorLike, input: Source, scale: Source = None,
             bias: Source = None, in_place: bool = False,
             return_output: bool = False,
             output_handle: Optional[HandleLike] = None,
             keep_output: bool = False, keep_output_ttl: int = 0) -> int:
        """Appends a step; returns its index (a source for later steps).
        return_output sends the output back; keep_output (ttl seconds) or
        output_handle leave it on the server as a resident tensor."""
        rank = self._rank_of(input)
        sources = {"input": input, "scale": scale, "bias": bias}
        self._steps.append((operator_desc(op, rank), sources, {
            "in_place": in_place, "return_output": return_output,
            "output_handle": output_handle, "keep_output": keep_output,
            "keep_output_ttl": keep_output_ttl}, rank))
        return len(self._steps) - 1

    @classmethod
    def from_steps(cls, steps: List[Mapping[str, Any]], cast: Any = None
                   ) -> "Chain":
        """From dicts with "op" and the keyword arguments of step()."""
        chain = cls(cast)
        for s in steps:
            s = dict(s)
            chain.step(s.pop("op"), **s)
        return chain

    def request(self, feature_level: int = 0, request_id: int = 0
                ) -> Tuple[pb.ChainRequest, List[pb.TensorDesc]]:
        """(ChainRequest, [output TensorDesc of each step])."""
        request = pb.ChainRequest(request_id=request_id,
                                  feature_level=level(feature_level))
        outputs: List[pb.TensorDesc] = []
        for op, sources, flags, _ in self._steps:
            step = request.steps.add(in_place=flags["in_place"],
                                     return_output=flags["return_output"],
                                     keep_output=flags["keep_output"],
                                     keep_output_ttl_seconds=flags[
                                         "keep_output_ttl"])
            step.operator.CopyFrom(op)
            _, body = operator_body(step.operator)
            for name, source in sources.items():
                if source is None:
                    continue
                tensor = getattr(step, name)
                if _is_step_ref(source):
                    tensor.step = int(source)
                    desc = getattr(body, name)
                    if 0 <= source < len(outputs) and not len(desc.sizes):
                        desc.CopyFrom(outputs[source])
                    continue
                kind, value = bind_source(getattr(body, name), source,
                                          self.cast, name)
                setattr(tensor, kind, value)
            if flags["output_handle"] is not None:
                step.output_handle = handle_id(flags["output_handle"])
            out = pb.TensorDesc()
            out.CopyFrom(fill_output(body))
            outputs.append(out)
        return request, outputs


def chain_result(response: pb.ChainResponse,
                 outputs: List[pb.TensorDesc]) -> ChainResult:
    """The ChainResult of an ExecuteChain response."""
    arrays, handles = {}, {}
    for o in response.outputs:
        if o.data:
            arrays[o.step] = unpack(outputs[o.step], o.data)
        if o.handle:
            handles[o.step] = TensorHandle(o.handle, outputs[o.step])
    return ChainResult(arrays, handles, response.engine,
                       response.server_time_us)
