// EchoService: dmlserve.v1.DmlService with no engine behind it, the anchor
// of the serving benchmark (bench/serving.sh): what the same gRPC stack,
// server settings and messages cost when the "operator" is free.
//
// Execute answers {request_id, output = the request's input bytes} (the
// input is moved, not copied, as dmlserve moves payloads into its engine).
// ExecuteStream answers every request the same way, in order, keeping up to
// `stream_window` requests read but unanswered like dmlserve's stream (one
// read and one write outstanding at a time). GetCapabilities and Validate
// return empty responses.
//
// Thread-safe; reactors delete themselves in OnDone.
#ifndef DMLSERVE_BENCH_ECHO_ECHO_SERVICE_H_
#define DMLSERVE_BENCH_ECHO_ECHO_SERVICE_H_

#include <cstdint>

#include "dmlserve/v1/dmlserve.grpc.pb.h"

namespace dmls::echo {

class EchoService final : public dmlserve::v1::DmlService::CallbackService {
 public:
  explicit EchoService(uint32_t stream_window = 64)
      : stream_window_(stream_window == 0 ? 1 : stream_window) {}

  grpc::ServerUnaryReactor* GetCapabilities(
      grpc::CallbackServerContext* context,
      const dmlserve::v1::GetCapabilitiesRequest* request,
      dmlserve::v1::GetCapabilitiesResponse* response) override;
  grpc::ServerUnaryReactor* Validate(
      grpc::CallbackServerContext* context,
      const dmlserve::v1::ValidateRequest* request,
      dmlserve::v1::ValidateResponse* response) override;
  grpc::ServerUnaryReactor* Execute(
      grpc::CallbackServerContext* context,
      const dmlserve::v1::ExecuteRequest* request,
      dmlserve::v1::ExecuteResponse* response) override;
  grpc::ServerBidiReactor<dmlserve::v1::ExecuteRequest,
                          dmlserve::v1::ExecuteResponse>*
  ExecuteStream(grpc::CallbackServerContext* context) override;

 private:
  const uint32_t stream_window_;
};

}  // namespace dmls::echo

#endif  // DMLSERVE_BENCH_ECHO_ECHO_SERVICE_H_
