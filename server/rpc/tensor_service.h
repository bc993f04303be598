// TensorServiceImpl: dmlserve.v1.TensorService (resident tensors) on gRPC's
// callback API, over a TensorStore (owners, quotas, expiry) and the engine
// (where the bytes live).
//
// CreateTensor and WriteTensor that creates a tensor admit it once through
// the server's Admission (engine/sched/admission.h: the operator
// validator's tensor rules, paths under "create.desc" / "desc"; the tensor
// byte limit; the deadline; CreateTensor's bytes from the byte budget until
// they are on the engine). WriteTensor
// takes its chunks one at a time: each is handed to the engine and the next
// is read once the engine has taken it, so a fast client meets gRPC flow
// control rather than growing the server's memory. ReadTensor keeps one
// chunk being read from the engine (into a reused buffer that gRPC then
// sends as it is: chunk_buffers.h) while the previous one is written.
//
// Every call is tracked in the DmlService's CallTracker and refused with
// UNAVAILABLE once it is closed (call_tracker.h). WriteTensor and ReadTensor
// carry one tensor each, so at shutdown they are waited for within the
// grace like unary calls, not asked to stop.
//
// Ownership: borrows the store, the engine, the admission and the call
// tracker, which must outlive the service's reactors (shut the grpc::Server
// down first).
// Thread-safe.
#ifndef DMLSERVE_SERVER_RPC_TENSOR_SERVICE_H_
#define DMLSERVE_SERVER_RPC_TENSOR_SERVICE_H_

#include <cstdint>
#include <memory>

#include "dmlserve/v1/dmlserve.grpc.pb.h"
#include "engine/core/engine.h"
#include "engine/sched/admission.h"
#include "server/lifecycle/call_tracker.h"
#include "server/rpc/chunk_buffers.h"
#include "server/security/principal.h"
#include "engine/store/tensor_store.h"
#include "spdlog/logger.h"

namespace dmls::server {

struct TensorServiceOptions {
  // ReadTensor's chunks (a stream holds two or three at a time).
  ChunkOptions chunks;
  // Each call's principal comes from its own token or tenant through it.
  PrincipalSource principals;
};

using TensorServiceBase =
    dmlserve::v1::TensorService::WithRawCallbackMethod_CreateTensor<
        dmlserve::v1::TensorService::WithRawCallbackMethod_WriteTensor<
            dmlserve::v1::TensorService::WithRawCallbackMethod_ReadTensor<
                dmlserve::v1::TensorService::WithRawCallbackMethod_ReleaseTensor<
                    dmlserve::v1::TensorService::WithRawCallbackMethod_ListTensors<
                        dmlserve::v1::TensorService::Service>>>>>;

class TensorServiceImpl final : public TensorServiceBase {
 public:
  TensorServiceImpl(store::TensorStore* store, Engine* engine, sched::Admission* admission,
                    CallTracker* calls, TensorServiceOptions options,
                    std::shared_ptr<spdlog::logger> logger);

  grpc::ServerUnaryReactor* CreateTensor(grpc::CallbackServerContext* context,
                                         const grpc::ByteBuffer* request,
                                         grpc::ByteBuffer* response) override;
  grpc::ServerReadReactor<grpc::ByteBuffer>* WriteTensor(
      grpc::CallbackServerContext* context, grpc::ByteBuffer* response) override;
  grpc::ServerWriteReactor<grpc::ByteBuffer>* ReadTensor(
      grpc::CallbackServerContext* context, const grpc::ByteBuffer* request) override;
  grpc::ServerUnaryReactor* ReleaseTensor(grpc::CallbackServerContext* context,
                                          const grpc::ByteBuffer* request,
                                          grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* ListTensors(grpc::CallbackServerContext* context,
                                        const grpc::ByteBuffer* request,
                                        grpc::ByteBuffer* response) override;

  const TensorServiceOptions& options() const { return options_; }
  store::TensorStore& store() { return *store_; }
  Engine& engine() { return *engine_; }
  sched::Admission& admission() { return *admission_; }
  spdlog::logger& logger() { return *logger_; }
  ChunkBuffers& chunk_buffers() { return *chunk_buffers_; }

 private:
  // A unary call answered inline by answer(principal, parsed Request); a
  // request that does not parse, or a call without a principal, gets that
  // error instead.
  template <typename Request, typename Answer>
  grpc::ServerUnaryReactor* AnswerTensorCall(grpc::CallbackServerContext* context,
                                             const grpc::ByteBuffer* request, Answer answer);

  store::TensorStore* const store_;
  Engine* const engine_;
  sched::Admission* const admission_;
  CallTracker* const calls_;
  const TensorServiceOptions options_;
  const std::shared_ptr<spdlog::logger> logger_;
  const std::shared_ptr<ChunkBuffers> chunk_buffers_;
};

// The wire description of a tensor.
dmlserve::v1::ResidentTensorInfo InfoOf(const store::ResidentTensor& tensor);

// The admission work of a resident tensor `desc` (fields under `path`)
// sent with `data_bytes` bytes.
sched::Work TensorWork(const TensorDesc& desc, const std::string& path, uint64_t data_bytes,
                       absl::Time deadline);

// The client's error as its code (not made INTERNAL): for store and
// checks' statuses, which carry client errors with rule ids.
grpc::Status ClientStatus(const absl::Status& s, spdlog::logger& log);

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_RPC_TENSOR_SERVICE_H_
