"""AsyncDmlClient: the asyncio client (grpc.aio) of the dmlserve.v1
service, with the methods, arguments and results of DmlClient, as
coroutines:

    async with AsyncDmlClient("127.0.0.1:50051") as client:
        y = await client.execute_mvn1(x, axes=-1)

Requests are built and responses decoded by the same code as DmlClient's
(dmlserve.requests, dmlserve.chain, dmlserve.connection). Use one client
from one event loop.
"""

from typing import Any, Callable, Dict, Iterable, List, Optional

import grpc
import grpc.aio
import numpy as np

from dmlserve.chain import Chain, ChainResult, chain_result
from dmlserve.chunks import (ChunkAssembler, Progress, chunked_requests,
                             write_requests)
from dmlserve.client import chunked_output_bytes, header_of, lookup_error
from dmlserve.connection import (ClientBase, Pem, array_payload, chunk_size,
                                 chunked_payloads, read_total, upload_payload)
from dmlserve.errors import error_from_rpc
from dmlserve.handle import HandleLike, TensorHandle, TensorList, handle_id
from dmlserve.layout import unpack
from dmlserve.ops import OperatorLike, level, operator_desc
from dmlserve.progress import MessageProgress, progress_callback
from dmlserve.requests import (ExecutePlan, Inputs, Result, StreamCall,
                               prepare, stream_plans, stream_results)
from dmlserve.v1 import dmlserve_pb2 as pb


class AsyncDmlClient(ClientBase):
    """asyncio client of dmlserve.v1.DmlService and TensorService; the
    constructor's arguments are DmlClient's. Make it inside the event loop
    that uses it (in a coroutine: grpc.aio binds the channel to the running
    loop) and use it as an async context manager (or await close()). The
    execute_* helpers return awaitables."""

    def __init__(self, target: str = "127.0.0.1:50051",
                 timeout: Optional[float] = 60.0,
                 max_message_bytes: int = 256 << 20,
                 tenant: Optional[str] = None, tls: bool = False,
                 root_certificates: Pem = None,
                 certificate_chain: Pem = None, private_key: Pem = None,
                 server_name: Optional[str] = None,
                 token: Optional[str] = None, cast: Any = None) -> None:
        super().__init__(grpc.aio, target, timeout, max_message_bytes, tenant,
                         tls, root_certificates, certificate_chain,
                         private_key, server_name, token, cast)

    async def close(self) -> None:
        """Closes the channel."""
        await self.channel.close()

    async def __aenter__(self) -> "AsyncDmlClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    def _kw(self, timeout: Optional[float]) -> dict:
        return {"timeout": self.timeout if timeout is None else timeout,
                "metadata": self._metadata}

    async def _call(self, method: Callable[..., Any], request: Any,
                    timeout: Optional[float]) -> Any:
        try:
            return await method(request, **self._kw(timeout))
        except grpc.RpcError as e:
            raise error_from_rpc(e) from None

    async def _read_stream(self, method: Callable[..., Any], request: Any,
                           assembler: ChunkAssembler,
                           timeout: Optional[float],
                           unwrap: Callable[[Any], Any] = lambda r: r,
                           done: Callable[[Any], bool] = lambda r: False
                           ) -> bytes:
        call = method(request, **self._kw(timeout))
        try:
            async for response in call:
                chunk = unwrap(response)
                if chunk is not None:
                    assembler.add(chunk)
                if done(response):
                    break
            return assembler.result()
        except grpc.RpcError as e:
            raise error_from_rpc(e) from None
        finally:
            call.cancel()  # no-op once the stream ended

    async def capabilities(self, timeout: Optional[float] = None
                           ) -> pb.GetCapabilitiesResponse:
        """GetCapabilities: server version, device, operators, limits."""
        return await self._call(self.stub.GetCapabilities,
                                pb.GetCapabilitiesRequest(), timeout)

    async def limits(self) -> pb.Limits:
        """The server's Limits (cached after the first call)."""
        if self._limits is None:
            self._limits = (await self.capabilities()).limits
        return self._limits

    async def validate(self, op: OperatorLike, feature_level: int = 0,
                       in_place: bool = False,
                       timeout: Optional[float] = None,
                       fill_defaults: bool = True) -> pb.ValidateResponse:
        """As DmlClient.validate."""
        request = pb.ValidateRequest(feature_level=level(feature_level),
                                     in_place=in_place)
        request.operator.CopyFrom(operator_desc(op, None, fill_defaults))
        return await self._call(self.stub.Validate, request, timeout)

    async def execute_request(self, request: pb.ExecuteRequest,
                              timeout: Optional[float] = None
                              ) -> pb.ExecuteResponse:
        """Sends a raw ExecuteRequest; returns the raw ExecuteResponse."""
        return await self._call(self.stub.Execute, request, timeout)

    async def execute(self, op: OperatorLike, inputs: Inputs,
                      feature_level: int = 0, in_place: bool = False,
                      timeout: Optional[float] = None,
                      keep_output: bool = False,
                      output_handle: Optional[HandleLike] = None,
                      keep_output_ttl: int = 0, cast: Any = None,
                      progress: Any = None) -> Result:
        """As DmlClient.execute."""
        plan = ExecutePlan.of(
            op, inputs, output_handle=output_handle,
            feature_level=feature_level, in_place=in_place,
            keep_output=keep_output, keep_output_ttl=keep_output_ttl,
            cast=cast if cast is not None else self.cast)
        report = progress_callback(progress, "execute")
        if report is None:
            return plan.decode(
                await self.execute_request(plan.request, timeout))
        payloads = plan.chunked_payloads()
        if payloads is not None and plan.output is not None and \
                sum(map(len, payloads.values())) > \
                chunk_size(await self.limits()):
            return await self._chunked(
                plan.request.operator, payloads, plan.output, None,
                progress_callback(progress, "upload"), feature_level,
                in_place, 0, progress_callback(progress, "download"), timeout)
        message = MessageProgress(report, plan.request)
        message.sent()
        response = await self.execute_request(plan.request, timeout)
        message.received(response)
        return plan.decode(response)

    async def stream(self, calls: Iterable[StreamCall],
                     timeout: Optional[float] = None,
                     raise_errors: bool = True) -> List[Any]:
        """As DmlClient.stream."""
        plans = stream_plans(calls, self.cast)
        try:
            call = self.stub.ExecuteStream(iter([p.request for p in plans]),
                                           **self._kw(timeout))
            responses = [r async for r in call]
        except grpc.RpcError as e:
            raise error_from_rpc(e) from None
        return stream_results(plans, responses, raise_errors)

    async def create_tensor(self, source: Any, ttl: int = 0,
                            chunk_bytes: Optional[int] = None,
                            progress: Any = None,
                            timeout: Optional[float] = None) -> TensorHandle:
        """As DmlClient.create_tensor."""
        if isinstance(source, pb.TensorDesc):
            return TensorHandle.from_info(await self._call(
                self.tensors.CreateTensor,
                pb.CreateTensorRequest(desc=source, ttl_seconds=ttl), timeout))
        desc, payload = array_payload(source, self.cast)
        if len(payload) > (chunk_bytes or chunk_size(await self.limits())):
            return await self.upload(source, desc=desc, ttl=ttl,
                                     chunk_bytes=chunk_bytes,
                                     progress=progress, timeout=timeout)
        return TensorHandle.from_info(await self._call(
            self.tensors.CreateTensor,
            pb.CreateTensorRequest(desc=desc, data=payload, ttl_seconds=ttl),
            timeout))

    async def upload(self, data: Any, desc: Optional[pb.TensorDesc] = None,
                     handle: Optional[HandleLike] = None, offset: int = 0,
                     chunk_bytes: Optional[int] = None, progress: Any = None,
                     ttl: int = 0, timeout: Optional[float] = None
                     ) -> TensorHandle:
        """As DmlClient.upload."""
        payload, create = upload_payload(data, desc, handle, ttl, self.cast)
        chunk = chunk_bytes or chunk_size(await self.limits())
        requests = write_requests(payload, chunk, handle=handle, create=create,
                                  start_offset=offset,
                                  progress=progress_callback(progress,
                                                             "upload"))
        return TensorHandle.from_info(
            await self._call(self.tensors.WriteTensor, requests, timeout))

    async def download(self, handle: HandleLike, offset: int = 0,
                       length: int = 0, chunk_bytes: int = 0,
                       progress: Any = None,
                       timeout: Optional[float] = None) -> Any:
        """As DmlClient.download."""
        desc = handle.desc if isinstance(handle, TensorHandle) else None
        partial = offset != 0 or length != 0
        if desc is None and not partial:
            desc = (await self._lookup(handle)).desc
        request = pb.ReadTensorRequest(handle=handle_id(handle), offset=offset,
                                       length=length, chunk_bytes=chunk_bytes)
        assembler = ChunkAssembler(offset, read_total(desc, offset, length),
                                   progress_callback(progress, "download"))
        data = await self._read_stream(self.tensors.ReadTensor, request,
                                       assembler, timeout)
        if partial or desc is None:
            return data
        return unpack(desc, data)

    async def _lookup(self, handle: HandleLike) -> TensorHandle:
        for t in (await self.list_tensors()).tensors:
            if t.handle == handle_id(handle):
                return t
        raise lookup_error(handle)

    async def release(self, handle: HandleLike,
                      timeout: Optional[float] = None) -> None:
        """Releases a resident tensor (ReleaseTensor)."""
        await self._call(self.tensors.ReleaseTensor,
                         pb.ReleaseTensorRequest(handle=handle_id(handle)),
                         timeout)

    async def list_tensors(self, timeout: Optional[float] = None
                           ) -> TensorList:
        """As DmlClient.list_tensors."""
        r = await self._call(self.tensors.ListTensors,
                             pb.ListTensorsRequest(), timeout)
        return TensorList([TensorHandle.from_info(t) for t in r.tensors],
                          r.principal_bytes, r.principal_quota_bytes)

    async def chain(self, steps: Any, feature_level: int = 0,
                    timeout: Optional[float] = None) -> ChainResult:
        """As DmlClient.chain."""
        chain = steps if isinstance(steps, Chain) else \
            Chain.from_steps(steps, self.cast)
        request, outputs = chain.request(feature_level)
        return chain_result(
            await self._call(self.stub.ExecuteChain, request, timeout),
            outputs)

    async def execute_chunked(self, op: OperatorLike, inputs: Inputs,
                              chunk_bytes: Optional[int] = None,
                              progress: Any = None, feature_level: int = 0,
                              in_place: bool = False,
                              response_chunk_bytes: int = 0,
                              download_progress: Any = None,
                              timeout: Optional[float] = None,
                              cast: Any = None) -> np.ndarray:
        """As DmlClient.execute_chunked."""
        desc, bound, out = prepare(op, inputs,
                                   cast if cast is not None else self.cast)
        return await self._chunked(
            desc, chunked_payloads(bound), out, chunk_bytes,
            progress_callback(progress, "upload"), feature_level, in_place,
            response_chunk_bytes,
            progress_callback(download_progress, "download"), timeout)

    async def _chunked(self, op: pb.OperatorDesc, payloads: Dict[str, bytes],
                       out: pb.TensorDesc, chunk_bytes: Optional[int],
                       progress: Optional[Progress], feature_level: int,
                       in_place: bool, response_chunk_bytes: int,
                       download_progress: Optional[Progress],
                       timeout: Optional[float]) -> np.ndarray:
        """As DmlClient._chunked."""
        requests = chunked_requests(
            header_of(op, feature_level, in_place, response_chunk_bytes),
            payloads, (chunk_bytes or chunk_size(await self.limits())),
            progress)
        assembler = ChunkAssembler(
            0, chunked_output_bytes(out, payloads, in_place),
            download_progress)
        data = await self._read_stream(
            self.stub.ExecuteChunked, requests, assembler, timeout,
            unwrap=lambda r: r.chunk if r.HasField("chunk") else None,
            done=lambda r: r.done)
        return unpack(out, data)
