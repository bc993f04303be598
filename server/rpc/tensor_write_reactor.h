// WriteTensor's reactor: chunks in order into one resident tensor, a few
// with the engine at once while the next is read, all or nothing
// (tensor_write_reactor.cc says how). Thread-safe as gRPC's reactors are.
#ifndef DMLSERVE_SERVER_RPC_TENSOR_WRITE_REACTOR_H_
#define DMLSERVE_SERVER_RPC_TENSOR_WRITE_REACTOR_H_

#include "grpcpp/grpcpp.h"
#include "server/lifecycle/call_tracker.h"
#include "server/rpc/tensor_service.h"

namespace dmls::server {

// Starts a WriteTensor call of `service` (which must outlive the reactor)
// and returns its reactor, gRPC's from then on; `ticket` tracks the call
// until OnDone.
grpc::ServerReadReactor<grpc::ByteBuffer>* NewWriteTensorReactor(
    TensorServiceImpl& service, grpc::CallbackServerContext* context,
    grpc::ByteBuffer* response, CallTracker::Ticket ticket);

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_RPC_TENSOR_WRITE_REACTOR_H_
