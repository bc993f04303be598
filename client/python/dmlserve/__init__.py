"""dmlserve: the Python client of the dmlserve gRPC service (DirectML
operators served remotely).

    import numpy as np
    import dmlserve

    with dmlserve.DmlClient("127.0.0.1:50051") as client:
        x = np.random.default_rng(0).standard_normal((8, 1024), np.float32)
        y = client.execute_mvn1(x, axes=-1)       # MVN over the last axis
        z = client.execute_celu(y, alpha=1.0)

DmlClient (blocking) and dmlserve.aio.AsyncDmlClient (asyncio) share one
request model: operators as OperatorDesc messages or JSON dicts with
DEFAULTS filled in, NumPy arrays or TensorHandles as tensors. The generated
messages and stubs are dmlserve.v1.dmlserve_pb2 and dmlserve_pb2_grpc.
"""

from dmlserve._version import __version__
from dmlserve.chain import Chain, ChainResult
from dmlserve.chunks import (assemble_chunks, chunk_ranges, chunked_requests,
                             write_requests)
from dmlserve.client import DmlClient
from dmlserve.errors import (DmlError, Violation, error_from_rpc,
                             violations_from_rpc_error)
from dmlserve.handle import TensorHandle, TensorList
from dmlserve.helpers import ACTIVATIONS
from dmlserve.layout import (data_type_of, min_tensor_bytes, numpy_dtype,
                             pack, packed_strides, tensor_desc, unpack)
from dmlserve.ops import (DEFAULTS, FUSABLE, OPERATORS, fused_activation,
                          normalize_axes, operator_desc)
from dmlserve.progress import ProgressBar
from dmlserve.requests import build_request, prepare

__all__ = [
    "ACTIVATIONS", "Chain", "ChainResult", "DEFAULTS", "DmlClient",
    "DmlError", "FUSABLE", "OPERATORS", "ProgressBar", "TensorHandle",
    "TensorList", "Violation", "__version__", "assemble_chunks",
    "build_request", "chunk_ranges", "chunked_requests", "data_type_of",
    "error_from_rpc", "fused_activation", "min_tensor_bytes",
    "normalize_axes", "numpy_dtype", "operator_desc", "pack",
    "packed_strides", "prepare", "tensor_desc", "unpack",
    "violations_from_rpc_error", "write_requests",
]
