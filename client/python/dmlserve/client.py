"""DmlClient: the blocking client of the dmlserve.v1 gRPC service.

NumPy arrays in, NumPy arrays out:

    import numpy as np
    import dmlserve

    with dmlserve.DmlClient("127.0.0.1:50051") as client:
        x = np.random.rand(8, 1024).astype(np.float32)
        y = client.execute_mvn1(x, axes=-1)

Resident tensors (TensorService): ``create_tensor``, ``upload`` (WriteTensor
in chunks), ``download`` (ReadTensor in chunks), ``release`` and
``list_tensors`` deal in TensorHandle objects; ``execute`` takes handles for
any tensor and can keep its output on the server; ``chain`` runs a Chain of
operators on the device in one call; ``stream`` sends many calls on one
ExecuteStream; ``execute_chunked`` streams one operator's tensors both ways
in chunks. Transfers take progress=callable or progress=True (a stderr bar).

Errors: a rejected call raises DmlError carrying the gRPC code and the
google.rpc.BadRequest violations (rule id + field path) the server attaches;
mistakes the client can see (unknown names, float64 arrays, bad axes) raise
ValueError or TypeError before anything is sent.

Thread-safe (gRPC channels and stubs are); the asyncio twin is
dmlserve.aio.AsyncDmlClient.
"""

from typing import Any, Callable, Dict, Iterable, List, Optional, TypeVar

import grpc
import numpy as np

from dmlserve.chain import Chain, ChainResult, chain_result
from dmlserve.chunks import (ChunkAssembler, Progress, chunked_requests,
                             write_requests)
from dmlserve.connection import (ClientBase, Pem, array_payload,
                                 chunk_size, chunked_payloads, read_total,
                                 upload_payload)
from dmlserve.errors import DmlError, error_from_rpc
from dmlserve.handle import HandleLike, TensorHandle, TensorList, handle_id
from dmlserve.layout import unpack
from dmlserve.ops import OperatorLike, level, operator_desc
from dmlserve.progress import MessageProgress, progress_callback
from dmlserve.requests import (ExecutePlan, Inputs, Result, StreamCall,
                               prepare, stream_plans, stream_results)
from dmlserve.v1 import dmlserve_pb2 as pb

T = TypeVar("T")


def lookup_error(handle: HandleLike) -> DmlError:
    """The error of a handle list_tensors does not show."""
    return DmlError(grpc.StatusCode.NOT_FOUND,
                    "HANDLE_NOT_FOUND: %s is not listed" % handle_id(handle))


def chunked_output_bytes(out: pb.TensorDesc, payloads: Dict[str, bytes],
                         in_place: bool) -> int:
    """The bytes execute_chunked's output comes back in (in place: the
    larger of the output and the input range)."""
    total = out.total_tensor_size_in_bytes
    if in_place:
        total = max(total, len(payloads.get("input", b"")))
    return total


def header_of(op: pb.OperatorDesc, feature_level: int, in_place: bool,
              response_chunk_bytes: int) -> pb.ChunkedHeader:
    """The ChunkedHeader of execute_chunked."""
    header = pb.ChunkedHeader(feature_level=level(feature_level),
                              in_place=in_place,
                              chunk_bytes=response_chunk_bytes)
    header.operator.CopyFrom(op)
    return header


class DmlClient(ClientBase):
    """Blocking client of dmlserve.v1.DmlService and TensorService.
    Thread-safe; use as a context manager to close the channel.

    target: "host:port". timeout: seconds per call (each method takes its
    own too). tenant, when given, is sent as the `tenant` metadata of every
    call: the principal that owns resident tensors (without it the server
    uses the connection, so only this client sees them). TLS: tls=True
    (system roots), or root_certificates (PEM bytes or a file path) for a
    private CA; certificate_chain and private_key for mutual TLS;
    server_name overrides the name checked against the server's
    certificate. token is sent as `authorization: Bearer TOKEN`. cast: a
    dtype (np.float32) that float64 arrays are converted to; without it
    they raise ValueError (the service has no float64 operators)."""

    def __init__(self, target: str = "127.0.0.1:50051",
                 timeout: Optional[float] = 60.0,
                 max_message_bytes: int = 256 << 20,
                 tenant: Optional[str] = None, tls: bool = False,
                 root_certificates: Pem = None,
                 certificate_chain: Pem = None, private_key: Pem = None,
                 server_name: Optional[str] = None,
                 token: Optional[str] = None, cast: Any = None) -> None:
        super().__init__(grpc, target, timeout, max_message_bytes, tenant,
                         tls, root_certificates, certificate_chain,
                         private_key, server_name, token, cast)

    def close(self) -> None:
        """Closes the channel."""
        self.channel.close()

    def __enter__(self) -> "DmlClient":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _timeout(self, timeout: Optional[float]) -> Optional[float]:
        return self.timeout if timeout is None else timeout

    def _call(self, method: Callable[..., T], request: Any,
              timeout: Optional[float]) -> T:
        """Calls a unary method with `request`, or a client-streaming one with
        an iterator of requests; DmlError on failure."""
        try:
            return method(request, timeout=self._timeout(timeout),
                          metadata=self._metadata)
        except grpc.RpcError as e:
            raise error_from_rpc(e) from None

    def _read_stream(self, method: Callable[..., Any], request: Any,
                     assembler: ChunkAssembler, timeout: Optional[float],
                     unwrap: Callable[[Any], Any] = lambda r: r,
                     done: Callable[[Any], bool] = lambda r: False
                     ) -> bytes:
        """Feeds a server stream of chunks to `assembler`; unwrap picks a
        response's chunk (or None), done ends the stream."""
        try:
            for response in method(request, timeout=self._timeout(timeout),
                                   metadata=self._metadata):
                chunk = unwrap(response)
                if chunk is not None:
                    assembler.add(chunk)
                if done(response):
                    break
            return assembler.result()
        except grpc.RpcError as e:
            raise error_from_rpc(e) from None

    def capabilities(self, timeout: Optional[float] = None
                     ) -> pb.GetCapabilitiesResponse:
        """GetCapabilities: server version, device, operators, limits."""
        return self._call(self.stub.GetCapabilities,
                          pb.GetCapabilitiesRequest(), timeout)

    def limits(self) -> pb.Limits:
        """The server's Limits (cached after the first call)."""
        if self._limits is None:
            self._limits = self.capabilities().limits
        return self._limits

    def validate(self, op: OperatorLike, feature_level: int = 0,
                 in_place: bool = False, timeout: Optional[float] = None,
                 fill_defaults: bool = True) -> pb.ValidateResponse:
        """ValidateResponse (valid, violations) for `op` as execute would
        send it (ops.DEFAULTS filled in); fill_defaults=False checks it as
        it is."""
        request = pb.ValidateRequest(feature_level=level(feature_level),
                                     in_place=in_place)
        request.operator.CopyFrom(operator_desc(op, None, fill_defaults))
        return self._call(self.stub.Validate, request, timeout)

    def execute_request(self, request: pb.ExecuteRequest,
                        timeout: Optional[float] = None
                        ) -> pb.ExecuteResponse:
        """Sends a raw ExecuteRequest; returns the raw ExecuteResponse."""
        return self._call(self.stub.Execute, request, timeout)

    def execute(self, op: OperatorLike, inputs: Inputs,
                feature_level: int = 0, in_place: bool = False,
                timeout: Optional[float] = None, keep_output: bool = False,
                output_handle: Optional[HandleLike] = None,
                keep_output_ttl: int = 0, cast: Any = None,
                progress: Any = None) -> Result:
        """Runs `op` (OperatorDesc or JSON dict; ops.DEFAULTS fill what it
        leaves out) on `inputs` (an array or handle, or a dict of "input",
        "scale", "bias") and returns the logical output array, or a
        TensorHandle when the output stays on the server (keep_output,
        output_handle, or in_place on an input handle).

        progress (a callable progress(bytes so far, total), or True: stderr
        bars): a call whose tensors are all arrays, whose output comes back
        and whose payload is more than one chunk (the server's default) then
        runs through ExecuteChunked, reported chunk by chunk as the tensors
        go up ("upload") and the output comes down ("download"), with the
        same result; any other call stays one Execute message each way, of
        which nothing can be seen in flight: progress(0, None) as it is
        sent, progress(n, n) when the response is in (n: both messages'
        bytes)."""
        plan = ExecutePlan.of(
            op, inputs, output_handle=output_handle,
            feature_level=feature_level, in_place=in_place,
            keep_output=keep_output, keep_output_ttl=keep_output_ttl,
            cast=cast if cast is not None else self.cast)
        report = progress_callback(progress, "execute")
        if report is None:
            return plan.decode(self.execute_request(plan.request, timeout))
        payloads = plan.chunked_payloads()
        if payloads is not None and plan.output is not None and \
                sum(map(len, payloads.values())) > chunk_size(self.limits()):
            return self._chunked(
                plan.request.operator, payloads, plan.output, None,
                progress_callback(progress, "upload"), feature_level,
                in_place, 0, progress_callback(progress, "download"), timeout)
        message = MessageProgress(report, plan.request)
        message.sent()
        response = self.execute_request(plan.request, timeout)
        message.received(response)
        return plan.decode(response)

    def stream(self, calls: Iterable[StreamCall],
               timeout: Optional[float] = None,
               raise_errors: bool = True) -> List[Any]:
        """Sends many calls on one ExecuteStream and returns what execute
        would return for each, in call order. A call is (op, inputs), a dict
        with "op", "inputs" and execute's keywords, or build_request's
        (request, desc) pair. A failed call raises its DmlError, or with
        raise_errors=False stands in its place. Bare ExecuteRequests (the
        old form) return the raw responses in arrival order."""
        plans = stream_plans(calls, self.cast)
        try:
            responses = list(self.stub.ExecuteStream(
                iter([p.request for p in plans]),
                timeout=self._timeout(timeout), metadata=self._metadata))
        except grpc.RpcError as e:
            raise error_from_rpc(e) from None
        return stream_results(plans, responses, raise_errors)

    # Resident tensors, chains and chunked transfers.

    def create_tensor(self, source: Any, ttl: int = 0,
                      chunk_bytes: Optional[int] = None,
                      progress: Any = None, timeout: Optional[float] = None
                      ) -> TensorHandle:
        """A resident tensor from a TensorDesc (zero-filled) or an array
        (its packed desc; larger than one chunk: uploaded in chunks).
        ttl: seconds to live (0: the server's default)."""
        if isinstance(source, pb.TensorDesc):
            return TensorHandle.from_info(self._call(
                self.tensors.CreateTensor,
                pb.CreateTensorRequest(desc=source, ttl_seconds=ttl), timeout))
        desc, payload = array_payload(source, self.cast)
        if len(payload) > (chunk_bytes or chunk_size(self.limits())):
            return self.upload(source, desc=desc, ttl=ttl,
                               chunk_bytes=chunk_bytes, progress=progress,
                               timeout=timeout)
        return TensorHandle.from_info(self._call(
            self.tensors.CreateTensor,
            pb.CreateTensorRequest(desc=desc, data=payload, ttl_seconds=ttl),
            timeout))

    def upload(self, data: Any, desc: Optional[pb.TensorDesc] = None,
               handle: Optional[HandleLike] = None, offset: int = 0,
               chunk_bytes: Optional[int] = None, progress: Any = None,
               ttl: int = 0, timeout: Optional[float] = None
               ) -> TensorHandle:
        """Writes `data` (an array, packed through `desc`, the handle's desc
        or its own packed desc; or raw bytes) with WriteTensor in chunks of
        chunk_bytes, calling progress(bytes sent, total) (True: a stderr
        bar). With `handle` it overwrites that tensor from byte `offset`;
        otherwise it creates one (desc required for bytes; ttl as
        create_tensor) that exists only once every chunk arrived."""
        payload, create = upload_payload(data, desc, handle, ttl, self.cast)
        chunk = chunk_bytes or chunk_size(self.limits())
        requests = write_requests(payload, chunk, handle=handle, create=create,
                                  start_offset=offset,
                                  progress=progress_callback(progress,
                                                             "upload"))
        return TensorHandle.from_info(
            self._call(self.tensors.WriteTensor, requests, timeout))

    def download(self, handle: HandleLike, offset: int = 0, length: int = 0,
                 chunk_bytes: int = 0, progress: Any = None,
                 timeout: Optional[float] = None) -> Any:
        """Reads a resident tensor with ReadTensor (server chunks of
        chunk_bytes; 0: its default), calling progress(bytes so far, total)
        (True: a stderr bar). The whole tensor comes back as its logical
        array (the desc from a TensorHandle, else looked up with
        list_tensors); a partial range (offset/length) as bytes."""
        desc = handle.desc if isinstance(handle, TensorHandle) else None
        partial = offset != 0 or length != 0
        if desc is None and not partial:
            desc = self._lookup(handle).desc
        request = pb.ReadTensorRequest(handle=handle_id(handle), offset=offset,
                                       length=length, chunk_bytes=chunk_bytes)
        assembler = ChunkAssembler(offset, read_total(desc, offset, length),
                                   progress_callback(progress, "download"))
        data = self._read_stream(self.tensors.ReadTensor, request, assembler,
                                 timeout)
        if partial or desc is None:
            return data
        return unpack(desc, data)

    def _lookup(self, handle: HandleLike) -> TensorHandle:
        for t in self.list_tensors().tensors:
            if t.handle == handle_id(handle):
                return t
        raise lookup_error(handle)

    def release(self, handle: HandleLike,
                timeout: Optional[float] = None) -> None:
        """Releases a resident tensor (ReleaseTensor)."""
        self._call(self.tensors.ReleaseTensor,
                   pb.ReleaseTensorRequest(handle=handle_id(handle)), timeout)

    def list_tensors(self, timeout: Optional[float] = None) -> TensorList:
        """TensorList(tensors=[TensorHandle], principal_bytes,
        principal_quota_bytes) of the caller's resident tensors."""
        r = self._call(self.tensors.ListTensors, pb.ListTensorsRequest(),
                       timeout)
        return TensorList([TensorHandle.from_info(t) for t in r.tensors],
                          r.principal_bytes, r.principal_quota_bytes)

    def chain(self, steps: Any, feature_level: int = 0,
              timeout: Optional[float] = None) -> ChainResult:
        """Runs a Chain (or a list of step dicts, see Chain.from_steps) with
        ExecuteChain. Returns ChainResult: arrays {step: logical array} of
        the steps that return their output, handles {step: TensorHandle} of
        those that keep it or write it to output_handle."""
        chain = steps if isinstance(steps, Chain) else \
            Chain.from_steps(steps, self.cast)
        request, outputs = chain.request(feature_level)
        return chain_result(
            self._call(self.stub.ExecuteChain, request, timeout), outputs)

    def execute_chunked(self, op: OperatorLike, inputs: Inputs,
                        chunk_bytes: Optional[int] = None,
                        progress: Any = None, feature_level: int = 0,
                        in_place: bool = False,
                        response_chunk_bytes: int = 0,
                        download_progress: Any = None,
                        timeout: Optional[float] = None,
                        cast: Any = None) -> np.ndarray:
        """Runs `op` on arrays through ExecuteChunked: the tensors go up in
        chunks of chunk_bytes (progress(bytes sent, total); True: a stderr
        bar) and the output comes back in chunks (response_chunk_bytes; 0:
        the server's default; download_progress likewise), so no message
        holds a whole tensor. Returns the logical output array."""
        desc, bound, out = prepare(op, inputs,
                                   cast if cast is not None else self.cast)
        return self._chunked(desc, chunked_payloads(bound), out, chunk_bytes,
                             progress_callback(progress, "upload"),
                             feature_level, in_place, response_chunk_bytes,
                             progress_callback(download_progress, "download"),
                             timeout)

    def _chunked(self, op: pb.OperatorDesc, payloads: Dict[str, bytes],
                 out: pb.TensorDesc, chunk_bytes: Optional[int],
                 progress: Optional[Progress], feature_level: int,
                 in_place: bool, response_chunk_bytes: int,
                 download_progress: Optional[Progress],
                 timeout: Optional[float]) -> np.ndarray:
        """execute_chunked of a bound operator and its tensors' bytes."""
        requests = chunked_requests(
            header_of(op, feature_level, in_place, response_chunk_bytes),
            payloads, (chunk_bytes or chunk_size(self.limits())), progress)
        assembler = ChunkAssembler(
            0, chunked_output_bytes(out, payloads, in_place),
            download_progress)
        data = self._read_stream(
            self.stub.ExecuteChunked, requests, assembler, timeout,
            unwrap=lambda r: r.chunk if r.HasField("chunk") else None,
            done=lambda r: r.done)
        return unpack(out, data)
