"""Operator descriptions for the dmlserve client: the one table of client
defaults, operator and fused-activation names checked locally, NumPy-style
axes, and the dtype rules for arrays.

Every path that sends an operator (DmlClient.execute and its helpers,
Chain steps, stream(), the asyncio client) builds it through
``operator_desc``, so a parameter left out gets the same default
everywhere. Pure functions; thread-safe.
"""

import copy
from typing import (Any, Dict, List, Mapping, Optional, Sequence, Tuple,
                    Union)
from typing import cast as type_cast

import numpy as np
from google.protobuf import json_format

from dmlserve.v1 import dmlserve_pb2 as pb

#: An operator: an OperatorDesc, or its proto3 JSON dict form such as
#: ``{"mvn1": {"axes": [-1]}}`` (snake_case or camelCase keys).
OperatorLike = Union[pb.OperatorDesc, Mapping[str, Any]]
#: A fused activation: a name ("relu"), (name, {param: value}), or a
#: FusedActivation message.
FusedLike = Union[None, str, Tuple[str, Mapping[str, float]],
                  pb.FusedActivation]

#: The operators the service defines (OperatorDesc's oneof members).
OPERATORS: Tuple[str, ...] = tuple(sorted(
    f.name for f in pb.OperatorDesc.DESCRIPTOR.oneofs_by_name["operator"]
    .fields))
#: The activations MVN and MVN1 can fuse (FusedActivation's members).
FUSABLE: Tuple[str, ...] = tuple(sorted(
    f.name for f in pb.FusedActivation.DESCRIPTOR.oneofs_by_name[
        "activation"].fields))

#: Client-side defaults: the documented "typical defaults" of DirectML,
#: filled into any operator (or fused activation) that leaves the field out.
#: The wire always carries every value (the server has no defaults and
#: answers PARAM_MISSING); parameters without a documented default (LINEAR,
#: PARAMETRIC_SOFTPLUS, THRESHOLD's min, CLIP's min and max) must be given.
DEFAULTS: Mapping[str, Mapping[str, Any]] = {
    "elu": {"alpha": 1.0},
    "celu": {"alpha": 1.0},
    "leaky_relu": {"alpha": 0.01},
    "hard_sigmoid": {"alpha": 0.2, "beta": 0.5},
    "scaled_elu": {"alpha": 1.67326319217681884765625,
                   "gamma": 1.05070102214813232421875},
    "scaled_tanh": {"alpha": 1.0, "beta": 0.5},
    "softplus": {"steepness": 1.0},
    "thresholded_relu": {"alpha": 1.0},
    "shrink": {"bias": 0.0, "threshold": 0.5},
    "mvn1": {"normalize_variance": True, "epsilon": 1e-5},
    "mvn": {"cross_channel": False, "normalize_variance": True,
            "epsilon": 1e-5},
}

_CAST_HINT = ("dmlserve serves float32 and float16 (NumPy arrays default to "
              "float64): convert with x.astype(np.float32), or pass "
              "cast=np.float32 (to the call or to the client) to convert "
              "float64 arrays before they are sent")


def _names(descriptor: Any) -> Dict[str, str]:
    """{snake_case or camelCase name: field name} of a message's fields."""
    out = {}
    for f in descriptor.fields:
        out[f.name] = f.name
        out[f.json_name] = f.name
    return out


_OP_NAMES = {k: v for k, v in _names(pb.OperatorDesc.DESCRIPTOR).items()
             if v in OPERATORS}
_FUSED_NAMES = _names(pb.FusedActivation.DESCRIPTOR)


def _unknown(kind: str, name: Any, valid: Sequence[str]) -> ValueError:
    return ValueError("unknown %s %r; valid names: %s"
                      % (kind, name, ", ".join(valid)))


def level(feature_level: int) -> "pb.FeatureLevel":
    """A feature level as the messages' type: any int the proto takes (0,
    the server's highest, or a DML_FEATURE_LEVEL value such as 0x6400;
    pb.FEATURE_LEVEL_6_4 is one)."""
    return type_cast("pb.FeatureLevel", feature_level)


def data_type(value: int) -> "pb.DataType":
    """A DataType number as the messages' type."""
    return type_cast("pb.DataType", value)


def normalize_axes(axes: Union[int, Sequence[int]],
                   rank: Optional[int]) -> List[int]:
    """Axes as non-negative ints: a scalar becomes a list, a negative axis
    counts from the end (-1 is the last of `rank`). Axes at or past `rank`
    are left for the server to reject with MVN_AXIS_OUT_OF_RANGE."""
    if isinstance(axes, (int, np.integer)):
        axes = [axes]
    out = []
    for a in axes:
        a = int(a)
        if a < 0:
            if rank is None:
                raise ValueError(
                    "negative axis %d needs the input's rank: pass an array "
                    "or a TensorHandle, or declare the input's sizes" % a)
            if a < -rank:
                raise ValueError("axis %d is out of range for a rank-%d "
                                 "input (valid: %d..%d)"
                                 % (a, rank, -rank, rank - 1))
            a += rank
        out.append(a)
    return out


def fused_activation(fused: FusedLike) -> Optional[pb.FusedActivation]:
    """A FusedActivation from "relu", ("celu", {"alpha": 1.0}) or a
    message, with DEFAULTS filled in; None stays None. Unknown names raise
    ValueError listing the valid ones."""
    if fused is None:
        return None
    if isinstance(fused, pb.FusedActivation):
        fa = pb.FusedActivation()
        fa.CopyFrom(fused)
    else:
        name, params = (fused, {}) if isinstance(fused, str) else fused
        member = _FUSED_NAMES.get(name)
        if member is None:
            raise _unknown("fused activation", name, FUSABLE)
        fa = pb.FusedActivation()
        body = getattr(fa, member)
        body.SetInParent()
        for key, value in params.items():
            setattr(body, key, value)
    _fill_defaults(fa, "activation")
    return fa


def _fill_defaults(message: Any, oneof: str) -> None:
    member = message.WhichOneof(oneof)
    if member is None:
        return
    body = getattr(message, member)
    for key, value in DEFAULTS.get(member, {}).items():
        if not body.HasField(key):
            setattr(body, key, value)
    if member in ("mvn", "mvn1") and body.HasField("fused_activation"):
        _fill_defaults(body.fused_activation, "activation")


def _dict_body(op: Mapping[str, Any], rank: Optional[int]) -> Dict[str, Any]:
    """`op` (a one-key JSON dict) with its name checked, a fused activation
    given by name expanded, and MVN1's axes normalised."""
    if len(op) != 1:
        raise ValueError("an operator dict has exactly one key, the operator "
                         "name (valid: %s); got %s"
                         % (", ".join(OPERATORS), sorted(op)))
    (name, body), = op.items()
    member = _OP_NAMES.get(name)
    if member is None:
        raise _unknown("operator", name, OPERATORS)
    body = copy.deepcopy(dict(body or {}))
    for key in ("fused_activation", "fusedActivation"):
        fused = body.get(key)
        if isinstance(fused, (str, tuple)):
            body[key] = json_format.MessageToDict(
                fused_activation(fused))  # type: ignore[arg-type]
        elif isinstance(fused, Mapping):
            for fused_name in fused:
                if fused_name not in _FUSED_NAMES:
                    raise _unknown("fused activation", fused_name, FUSABLE)
    if member == "mvn1" and "axes" in body:
        if rank is None:
            sizes = (body.get("input") or {}).get("sizes")
            rank = len(sizes) if sizes else None
        body["axes"] = normalize_axes(body["axes"], rank)
    return {member: body}


def operator_desc(op: OperatorLike, rank: Optional[int] = None,
                  fill_defaults: bool = True) -> pb.OperatorDesc:
    """A new OperatorDesc from a message or its proto3 JSON dict form, with
    DEFAULTS filled in (unless fill_defaults is False). `rank` (the
    input's) resolves negative MVN1 axes of a dict. Unknown operator or
    fused-activation names raise ValueError listing the valid ones."""
    out = pb.OperatorDesc()
    if isinstance(op, pb.OperatorDesc):
        out.CopyFrom(op)
    elif isinstance(op, Mapping):
        json_format.ParseDict(_dict_body(op, rank), out)
    else:
        raise TypeError("an operator is an OperatorDesc or a dict such as "
                        "{\"celu\": {\"alpha\": 1.0}}, not %s"
                        % type(op).__name__)
    if fill_defaults:
        _fill_defaults(out, "operator")
    return out


def operator_body(op: pb.OperatorDesc) -> Tuple[str, Any]:
    """(member name, message) of the operator an OperatorDesc holds."""
    member = op.WhichOneof("operator")
    if member is None:
        raise ValueError("the OperatorDesc names no operator")
    return member, getattr(op, member)


def as_array(value: Any, cast: Any = None, what: str = "input",
             declared: bool = False) -> np.ndarray:
    """`value` as a NumPy array the service can take. float64 arrays raise
    ValueError saying what to do, unless `cast` (a dtype such as np.float32)
    converts them or the tensor's descriptor `declared` its data type (the
    array is then converted to it when packed); strings and objects (a
    handle string where an array goes, say) raise TypeError."""
    array = np.asarray(value)
    if array.dtype.kind in "USOV":
        raise TypeError(
            "%s: expected a NumPy array, got %s%s" % (
                what, type(value).__name__,
                " (a bare handle string has no shape: pass the TensorHandle "
                "that create_tensor/upload returned, or declare the tensor "
                "in an OperatorDesc and call execute())"
                if isinstance(value, str) else ""))
    if array.dtype == np.float64 and not declared:
        if cast is None:
            raise ValueError("%s is float64. %s" % (what, _CAST_HINT))
        array = array.astype(cast)
    return array
