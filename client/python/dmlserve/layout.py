"""Tensor layouts of the dmlserve Python client.

A TensorDesc's payload is the raw little-endian bytes of its buffer range,
``total_tensor_size_in_bytes`` long, with the element at logical index
(i0..in-1) at element offset sum_k(ik * strides[k]) (dmlserve.proto).
``pack`` and ``unpack`` convert between that buffer and a logical C-order
NumPy array, for packed and strided (padded, transposed, zero-stride
broadcast) layouts alike. Pure functions; no gRPC; thread-safe. The
dmlserve package re-exports every public name.
"""

from typing import Any, Dict, List, Optional, Sequence, cast

import numpy as np

from dmlserve.v1 import dmlserve_pb2 as pb

_DTYPES: Dict[int, np.dtype] = {
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


def data_type_of(dtype: Any) -> int:
    """dmlserve DataType of a NumPy dtype."""
    dtype = np.dtype(dtype).newbyteorder("<") if np.dtype(dtype).itemsize > 1 \
        else np.dtype(dtype)
    for data_type, np_dtype in _DTYPES.items():
        if np_dtype == dtype:
            return data_type
    raise ValueError("no dmlserve data type for %s" % dtype)


def numpy_dtype(data_type: int) -> np.dtype:
    """NumPy dtype of a dmlserve DataType."""
    try:
        return _DTYPES[data_type]
    except KeyError:
        raise ValueError("no NumPy dtype for data type %d" % data_type)


def packed_strides(shape: Sequence[int]) -> List[int]:
    """Element strides of the packed row-major layout of `shape`."""
    strides = [1] * len(shape)
    for k in range(len(shape) - 2, -1, -1):
        strides[k] = strides[k + 1] * shape[k + 1]
    return strides


def min_tensor_bytes(data_type: int, sizes: Sequence[int],
                     strides: Optional[Sequence[int]] = None) -> int:
    """DMLCalcBufferTensorSize (OPERATORS.md 2.4), rounded up to 4 bytes."""
    element = numpy_dtype(data_type).itemsize
    if strides:
        elements = sum((s - 1) * st for s, st in zip(sizes, strides)) + 1
    else:
        elements = int(np.prod(sizes, dtype=np.uint64)) if sizes else 1
    return (elements * element + 3) & ~3


def tensor_desc(dtype: Any, shape: Sequence[int],
                strides: Optional[Sequence[int]] = None,
                total: Optional[int] = None, **fields: Any) -> pb.TensorDesc:
    """A TensorDesc of a NumPy dtype (or DataType int) and shape; total size
    defaults to the minimum. Extra keyword fields are set verbatim."""
    data_type = dtype if isinstance(dtype, int) else data_type_of(dtype)
    desc = pb.TensorDesc(data_type=cast("pb.DataType", data_type),
                         sizes=list(shape),
                         strides=list(strides or ()), **fields)
    desc.total_tensor_size_in_bytes = (
        total if total is not None
        else min_tensor_bytes(data_type, list(shape), list(strides or ())))
    return desc


def _effective_strides(desc: pb.TensorDesc) -> List[int]:
    return list(desc.strides) if len(desc.strides) else packed_strides(
        list(desc.sizes))


def pack(desc: pb.TensorDesc, array: Any) -> bytes:
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


def unpack(desc: pb.TensorDesc, payload: bytes) -> np.ndarray:
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
