// ReadTensor's reactor: a resident tensor's range in chunks, the engine
// reading chunk k+1 while chunk k is written, each chunk in a pooled
// buffer that becomes the response's data slice (tensor_read_reactor.cc).
// Thread-safe as gRPC's reactors are.
#ifndef DMLSERVE_SERVER_RPC_TENSOR_READ_REACTOR_H_
#define DMLSERVE_SERVER_RPC_TENSOR_READ_REACTOR_H_

#include "grpcpp/grpcpp.h"
#include "server/lifecycle/call_tracker.h"
#include "server/rpc/tensor_service.h"

namespace dmls::server {

// Starts a ReadTensor call of `service` (which must outlive the reactor)
// for `request` and returns its reactor, gRPC's from then on; `ticket`
// tracks the call until OnDone.
grpc::ServerWriteReactor<grpc::ByteBuffer>* NewReadTensorReactor(
    TensorServiceImpl& service, grpc::CallbackServerContext* context,
    const grpc::ByteBuffer& request, CallTracker::Ticket ticket);

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_RPC_TENSOR_READ_REACTOR_H_
