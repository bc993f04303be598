"""What the blocking and asyncio clients share about a connection: call
metadata (tenant, token), channel options and TLS credentials, and the
pure parts of the tensor transfers (payloads, totals).

Pure functions and a value class; thread-safe.
"""

from typing import Any, List, Optional, Tuple, Union

import grpc

from dmlserve.handle import HandleLike, TensorHandle
from dmlserve.helpers import OperatorHelpers
from dmlserve.layout import pack, tensor_desc
from dmlserve.ops import as_array
from dmlserve.v1 import dmlserve_pb2 as pb
from dmlserve.v1 import dmlserve_pb2_grpc as pb_grpc

Pem = Union[None, bytes, str]


def _pem(value: Pem) -> Optional[bytes]:
    """PEM bytes from bytes, or from the file a str path names; None stays."""
    if value is None or isinstance(value, bytes):
        return value
    with open(value, "rb") as f:
        return f.read()


class Connection:
    """Call metadata, channel options and credentials of a client (see
    DmlClient for the arguments)."""

    def __init__(self, max_message_bytes: int = 256 << 20,
                 tenant: Optional[str] = None, tls: bool = False,
                 root_certificates: Pem = None,
                 certificate_chain: Pem = None, private_key: Pem = None,
                 server_name: Optional[str] = None,
                 token: Optional[str] = None) -> None:
        metadata = []
        if tenant is not None:
            metadata.append(("tenant", tenant))
        if token is not None:
            metadata.append(("authorization", "Bearer " + token))
        self.metadata: Tuple[Tuple[str, str], ...] = tuple(metadata)
        self.options: List[Tuple[str, Any]] = [
            ("grpc.max_send_message_length", max_message_bytes),
            ("grpc.max_receive_message_length", max_message_bytes),
            # A connection of its own (gRPC would otherwise share one among
            # channels to the same target), so that without a tenant this
            # client's resident tensors are its own.
            ("grpc.use_local_subchannel_pool", 1),
        ]
        if server_name is not None:
            self.options.append(("grpc.ssl_target_name_override",
                                 server_name))
        self.credentials: Optional[grpc.ChannelCredentials] = None
        if tls or root_certificates or certificate_chain or private_key:
            self.credentials = grpc.ssl_channel_credentials(
                root_certificates=_pem(root_certificates),
                private_key=_pem(private_key),
                certificate_chain=_pem(certificate_chain))

    def channel(self, module: Any, target: str) -> Any:
        """A channel to `target` from `module` (grpc or grpc.aio)."""
        if self.credentials is not None:
            return module.secure_channel(target, self.credentials,
                                         options=self.options)
        return module.insecure_channel(target, options=self.options)


class ClientBase(OperatorHelpers):
    """What DmlClient and AsyncDmlClient hold: options, call metadata, the
    channel (from `module`: grpc or grpc.aio) and the two service stubs."""

    def __init__(self, module: Any, target: str, timeout: Optional[float],
                 max_message_bytes: int, tenant: Optional[str], tls: bool,
                 root_certificates: Pem, certificate_chain: Pem,
                 private_key: Pem, server_name: Optional[str],
                 token: Optional[str], cast: Any) -> None:
        self.timeout = timeout
        self.tenant = tenant
        self.cast = cast
        connection = Connection(max_message_bytes, tenant, tls,
                                root_certificates, certificate_chain,
                                private_key, server_name, token)
        self._metadata = connection.metadata
        self._limits: Optional[pb.Limits] = None
        self.channel = connection.channel(module, target)
        self.stub = pb_grpc.DmlServiceStub(self.channel)
        self.tensors = pb_grpc.TensorServiceStub(self.channel)


def chunk_size(limits: pb.Limits) -> int:
    """The server's default chunk within its maximum (for calls that give
    no chunk_bytes: `chunk_bytes or chunk_size(limits)`, so that a call
    that gives one needs no GetCapabilities)."""
    size = limits.default_chunk_bytes or (1 << 20)
    return min(size, limits.max_chunk_bytes or size)


def array_payload(source: Any, cast: Any,
                  desc: Optional[pb.TensorDesc] = None
                  ) -> Tuple[pb.TensorDesc, bytes]:
    """(desc, payload) of an array: packed through `desc` when given (the
    array converted to its type), else through its own packed desc."""
    array = as_array(source, cast, "data", declared=desc is not None)
    if desc is None:
        desc = tensor_desc(array.dtype, array.shape or (1,))
    return desc, pack(desc, array)


def upload_payload(data: Any, desc: Optional[pb.TensorDesc],
                   handle: Optional[HandleLike], ttl: int, cast: Any
                   ) -> Tuple[bytes, Optional[pb.CreateTensorRequest]]:
    """(payload, CreateTensorRequest or None when overwriting `handle`) of
    an upload; see DmlClient.upload."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        payload = data
        if handle is None and desc is None:
            raise ValueError("raw bytes need a desc to create a tensor")
    else:
        if desc is None and isinstance(handle, TensorHandle):
            desc = handle.desc
        desc, payload = array_payload(data, cast, desc)
    create = None if handle is not None else pb.CreateTensorRequest(
        desc=desc, ttl_seconds=ttl)
    return payload, create


def read_total(desc: Optional[pb.TensorDesc], offset: int, length: int
               ) -> Optional[int]:
    """The bytes a ReadTensor of [offset, offset + length) returns (length
    0: to the end), when the desc tells."""
    partial = offset != 0 or length != 0
    if desc is not None and not partial:
        return desc.total_tensor_size_in_bytes
    if desc is not None and length == 0 and \
            offset <= desc.total_tensor_size_in_bytes:
        return desc.total_tensor_size_in_bytes - offset
    return length or None


def chunked_payloads(bound: dict) -> dict:
    """{name: bytes} of prepare()'s bound tensors; handles are refused."""
    payloads = {}
    for name, (kind, value) in bound.items():
        if kind != "data":
            raise ValueError("execute_chunked takes arrays, not handles")
        payloads[name] = value
    return payloads
