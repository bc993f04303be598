"""Operator helpers shared by DmlClient and AsyncDmlClient: each builds an
OperatorDesc from NumPy-style arguments and returns self.execute(...), so
the blocking client returns the array and the asyncio client an awaitable
of it. Defaults come from ops.DEFAULTS (an argument left None is filled
there), as for execute, chains and streams.

Stateless mixin; as thread-safe as the client it is mixed into.
"""

from typing import Any, Callable, Optional, Sequence, Tuple, Union


from dmlserve.handle import TensorHandle
from dmlserve.layout import numpy_dtype, tensor_desc
from dmlserve.ops import (OPERATORS, FusedLike, as_array, fused_activation,
                          normalize_axes)
from dmlserve.v1 import dmlserve_pb2 as pb

#: The standalone activations execute_activation takes.
ACTIVATIONS: Tuple[str, ...] = tuple(
    n for n in OPERATORS if n not in ("clip", "threshold", "mvn", "mvn1"))

Strides = Optional[Sequence[int]]


def _tensor_of(x: Any, cast: Any, strides: Strides
               ) -> Tuple[Any, pb.TensorDesc]:
    """(source, input TensorDesc) of an array or a TensorHandle with a
    desc (its layout is kept; `strides` applies to arrays)."""
    if isinstance(x, TensorHandle) and x.desc is not None:
        desc = pb.TensorDesc()
        desc.CopyFrom(x.desc)
        return x, desc
    array = as_array(x, cast, "x")
    return array, tensor_desc(array.dtype, array.shape or (1,), strides)


def _output_of(desc: pb.TensorDesc, strides: Strides) -> pb.TensorDesc:
    return tensor_desc(numpy_dtype(desc.data_type), list(desc.sizes),
                       strides)


#: execute()'s keywords that helpers taking operator parameters as
#: keywords pass on to it.
EXECUTE_KEYWORDS = ("timeout", "keep_output", "output_handle",
                    "keep_output_ttl", "progress")


class OperatorHelpers:
    """execute_* helpers; the class they are mixed into provides
    execute(op, inputs, **kw) and a `cast` attribute."""

    cast: Any = None
    execute: Callable[..., Any]  # DmlClient.execute or its coroutine twin

    def _run_unary(self, member: str, x: Any, params: dict,
                   input_strides: Strides, output_strides: Strides,
                   cast: Any, kw: dict) -> Any:
        source, desc = _tensor_of(x, cast if cast is not None else self.cast,
                                  input_strides)
        op = pb.OperatorDesc()
        body = getattr(op, member)
        body.input.CopyFrom(desc)
        body.output.CopyFrom(_output_of(desc, output_strides))
        for key, value in params.items():
            if value is None:
                continue
            if key == "scale_bias":
                body.scale_bias.scale, body.scale_bias.bias = value
            else:
                setattr(body, key, value)
        return self.execute(op, source, **kw)

    def execute_activation(self, name: str, x: Any,
                           input_strides: Strides = None,
                           output_strides: Strides = None,
                           feature_level: int = 0, in_place: bool = False,
                           cast: Any = None, **params: Any) -> Any:
        """Any standalone activation by name, e.g. ("leaky_relu", x,
        alpha=0.1); parameters left out get ops.DEFAULTS. x: an array or a
        TensorHandle. Unknown names raise ValueError listing ACTIVATIONS."""
        if name not in ACTIVATIONS:
            raise ValueError("unknown activation %r; valid names: %s"
                             % (name, ", ".join(ACTIVATIONS)))
        kw = {k: params.pop(k) for k in EXECUTE_KEYWORDS if k in params}
        return self._run_unary(name, x, params, input_strides,
                               output_strides, cast,
                               dict(kw, feature_level=feature_level,
                                    in_place=in_place))

    def execute_celu(self, x: Any, alpha: Optional[float] = None,
                     **kw: Any) -> Any:
        """CELU: max(0, x) + min(0, alpha * (exp(x / alpha) - 1)); alpha
        defaults to 1.0. Other keywords as execute_activation."""
        return self.execute_activation("celu", x, alpha=alpha, **kw)

    def execute_threshold(self, x: Any, min: float,
                          scale_bias: Optional[Tuple[float, float]] = None,
                          input_strides: Strides = None,
                          output_strides: Strides = None,
                          feature_level: int = 0, in_place: bool = False,
                          cast: Any = None, **kw: Any) -> Any:
        """max(x * scale + bias, min); scale_bias is (scale, bias) or None."""
        return self._run_unary(
            "threshold", x, {"min": min, "scale_bias": scale_bias},
            input_strides, output_strides, cast,
            dict(kw, feature_level=feature_level, in_place=in_place))

    def execute_clip(self, x: Any, min: float, max: float,
                     scale_bias: Optional[Tuple[float, float]] = None,
                     input_strides: Strides = None,
                     output_strides: Strides = None, feature_level: int = 0,
                     in_place: bool = False, cast: Any = None,
                     **kw: Any) -> Any:
        """min(max(x * scale + bias, min), max); scale_bias as threshold."""
        return self._run_unary(
            "clip", x, {"min": min, "max": max, "scale_bias": scale_bias},
            input_strides, output_strides, cast,
            dict(kw, feature_level=feature_level, in_place=in_place))

    def execute_mvn1(self, x: Any, axes: Union[int, Sequence[int]],
                     scale: Any = None, bias: Any = None,
                     epsilon: Optional[float] = None,
                     normalize_variance: Optional[bool] = None,
                     fused: FusedLike = None, input_strides: Strides = None,
                     output_strides: Strides = None, feature_level: int = 0,
                     cast: Any = None, **kw: Any) -> Any:
        """MVN1 over `axes` (an int or a list; negative counts from the end,
        NumPy style); scale/bias arrays of the input's rank (any dim may be
        1); epsilon (default 1e-5) and normalize_variance (default True) as
        ops.DEFAULTS; fused is e.g. "relu" or ("celu", {"alpha": 1.0})."""
        cast = cast if cast is not None else self.cast
        source, desc = _tensor_of(x, cast, input_strides)
        op = pb.OperatorDesc()
        m = op.mvn1
        m.input.CopyFrom(desc)
        m.output.CopyFrom(_output_of(desc, output_strides))
        inputs = {"input": source}
        dtype = numpy_dtype(desc.data_type)
        for name, arr in (("scale", scale), ("bias", bias)):
            if arr is None:
                continue
            if not isinstance(arr, TensorHandle):  # the input's type
                arr = as_array(arr, cast, name, declared=True).astype(
                    dtype, copy=False)
            arr_source, arr_desc = _tensor_of(arr, cast, None)
            getattr(m, name).CopyFrom(arr_desc)
            inputs[name] = arr_source
        m.axes[:] = normalize_axes(axes, len(desc.sizes))
        m.axis_count = len(m.axes)
        if normalize_variance is not None:
            m.normalize_variance = normalize_variance
        if epsilon is not None:
            m.epsilon = epsilon
        fa = fused_activation(fused)
        if fa is not None:
            m.fused_activation.CopyFrom(fa)
        return self.execute(op, inputs, feature_level=feature_level, **kw)
