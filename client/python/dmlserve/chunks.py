"""Chunked transfers: the request streams of WriteTensor and
ExecuteChunked, and the assembly of a stream of TensorChunks.

Pure functions and generators; thread-safe.
"""

from typing import (Callable, Dict, Iterable, Iterator, List, Optional,
                    Tuple, Union)

from dmlserve.handle import HandleLike, handle_id
from dmlserve.v1 import dmlserve_pb2 as pb

#: progress(bytes so far, total bytes or None when unknown).
Progress = Callable[[int, Optional[int]], None]
Bytes = Union[bytes, bytearray, memoryview]


def chunk_ranges(total: int, chunk_bytes: int, start: int = 0
                 ) -> List[Tuple[int, int]]:
    """[(offset, length)] covering [start, start + total) in chunks of at most
    chunk_bytes (none when total is 0)."""
    if chunk_bytes <= 0:
        raise ValueError("chunk_bytes must be positive")
    return [(start + o, min(chunk_bytes, total - o))
            for o in range(0, total, chunk_bytes)]


def _progress_chunks(payload: Bytes, chunk_bytes: int, start: int,
                     progress: Optional[Progress]
                     ) -> Iterator[Tuple[int, bytes]]:
    """(absolute offset, chunk bytes) of `payload` written from `start`;
    calls progress(bytes so far, total) as each is handed over."""
    view = memoryview(payload)
    total = len(payload)
    for offset, length in chunk_ranges(total, chunk_bytes, start):
        yield offset, bytes(view[offset - start:offset - start + length])
        if progress is not None:
            progress(offset - start + length, total)


def write_requests(payload: Bytes, chunk_bytes: int,
                   handle: Optional[HandleLike] = None,
                   create: Optional[pb.CreateTensorRequest] = None,
                   start_offset: int = 0,
                   progress: Optional[Progress] = None
                   ) -> Iterator[pb.WriteTensorRequest]:
    """The WriteTensorRequest stream of an upload: the first message names
    the tensor (handle, or create: a CreateTensorRequest) with start_offset,
    total_bytes and the first chunk; the rest carry one chunk each."""
    first = pb.WriteTensorRequest(start_offset=start_offset,
                                  total_bytes=len(payload))
    if handle is not None:
        first.handle = handle_id(handle)
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


def chunked_requests(header: pb.ChunkedHeader, payloads: Dict[str, bytes],
                     chunk_bytes: int, progress: Optional[Progress] = None
                     ) -> Iterator[pb.ChunkedRequest]:
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


class ChunkAssembler:
    """Joins TensorChunks that must arrive in order from `start`, checking
    gaps, overlaps and overruns (ValueError). Used by the blocking and the
    asyncio clients alike; one per transfer, not thread-safe."""

    def __init__(self, start: int, total: Optional[int] = None,
                 progress: Optional[Progress] = None) -> None:
        self.start, self.total, self.progress = start, total, progress
        self.buf = bytearray()

    def add(self, chunk: pb.TensorChunk) -> None:
        """Appends one chunk."""
        if chunk.offset != self.start + len(self.buf):
            raise ValueError("chunk at offset %d, expected %d"
                             % (chunk.offset, self.start + len(self.buf)))
        self.buf += chunk.data
        if self.total is not None and len(self.buf) > self.total:
            raise ValueError("%d bytes received, expected %d"
                             % (len(self.buf), self.total))
        if self.progress is not None:
            self.progress(len(self.buf), self.total)

    def result(self) -> bytes:
        """The bytes, once every chunk arrived."""
        if self.total is not None and len(self.buf) != self.total:
            raise ValueError("%d bytes received, expected %d"
                             % (len(self.buf), self.total))
        return bytes(self.buf)


def assemble_chunks(chunks: Iterable[pb.TensorChunk], start: int,
                    total: Optional[int] = None,
                    progress: Optional[Progress] = None) -> bytes:
    """Joins TensorChunks that must arrive in order from `start`; raises
    ValueError on a gap, overlap or overrun. Returns bytes."""
    assembler = ChunkAssembler(start, total, progress)
    for chunk in chunks:
        assembler.add(chunk)
    return assembler.result()
