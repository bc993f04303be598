"""TensorHandle: a resident tensor of the TensorService, by name.

Plain value class; thread-safe to share once built.
"""

from typing import Any, List, NamedTuple, Optional, Union

from dmlserve.v1 import dmlserve_pb2 as pb


class TensorHandle:
    """A resident tensor: its opaque handle string, TensorDesc, size in bytes,
    expiry (Unix ms; 0 never, None unknown) and device. str() is the handle;
    a TensorHandle or the bare string may be passed wherever a handle goes
    (only a TensorHandle carries the descriptor an operator needs)."""

    def __init__(self, handle: str, desc: Optional[pb.TensorDesc] = None,
                 size: Optional[int] = None, expiry: Optional[int] = None,
                 device: str = "") -> None:
        self.handle = handle
        self.desc = desc
        self.size = size if size is not None else (
            desc.total_tensor_size_in_bytes if desc is not None else None)
        self.expiry = expiry
        self.device = device

    @classmethod
    def from_info(cls, info: pb.ResidentTensorInfo) -> "TensorHandle":
        """From a ResidentTensorInfo."""
        desc = pb.TensorDesc()
        desc.CopyFrom(info.desc)
        return cls(info.handle, desc, info.size_bytes, info.expires_unix_ms,
                   info.device)

    def __str__(self) -> str:
        return self.handle

    def __repr__(self) -> str:
        return "TensorHandle(%s, %s bytes)" % (self.handle, self.size)

    def __eq__(self, other: object) -> bool:
        if not is_handle(other):
            return NotImplemented
        return handle_id(other) == self.handle  # type: ignore[arg-type]

    def __hash__(self) -> int:
        return hash(self.handle)


#: A handle: a TensorHandle or its bare string.
HandleLike = Union[TensorHandle, str]


def handle_id(handle: HandleLike) -> str:
    """The handle string of a TensorHandle or a str."""
    return handle.handle if isinstance(handle, TensorHandle) else str(handle)


def is_handle(source: Any) -> bool:
    """Whether `source` names a resident tensor (TensorHandle or str)."""
    return isinstance(source, (TensorHandle, str))


class TensorList(NamedTuple):
    """ListTensors: the caller's tensors and its bytes against its quota."""
    tensors: List[TensorHandle]
    principal_bytes: int
    principal_quota_bytes: int
