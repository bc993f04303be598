#include "bench/load/unary_driver.h"

#include <chrono>
#include <utility>

#include "grpcpp/client_context.h"

namespace dmls::load {
namespace {

// One call in flight; deleted by its own callback.
struct UnaryCall {
  grpc::ClientContext context;
  dmlserve::v1::ExecuteResponse response;
  int64_t due_ns = 0;
};

}  // namespace

UnaryDriver::UnaryDriver(
    const std::vector<std::shared_ptr<grpc::Channel>>& channels,
    const Payload& payload, absl::Duration timeout, CompletionSink sink)
    : payload_(payload), timeout_(timeout), sink_(std::move(sink)) {
  for (const auto& channel : channels) {
    stubs_.push_back(dmlserve::v1::DmlService::NewStub(channel));
  }
}

void UnaryDriver::Send(int64_t due_ns) {
  auto* call = new UnaryCall;
  call->due_ns = due_ns;
  call->context.set_deadline(std::chrono::system_clock::now() +
                             absl::ToChronoMilliseconds(timeout_));
  auto& stub = stubs_[next_stub_.fetch_add(1) % stubs_.size()];
  stub->async()->Execute(
      &call->context, &payload_.request, &call->response,
      [this, call](grpc::Status status) {
        Completion c;
        c.due_ns = call->due_ns;
        c.done_ns = NowNs();
        c.code = static_cast<int>(status.error_code());
        c.bytes_in = payload_.request_bytes;
        if (status.ok()) {
          c.bytes_out = call->response.output().size();
        } else {
          c.message = status.error_message();
        }
        // The call (its ClientContext) goes before the sink hears of it:
        // once the sink has counted the last call the runner may destroy
        // the channels and the process may exit, and a context deleted
        // after that tripped gRPC's "prior > 0" assertion at exit (CI,
        // stop 26). Nothing of `this` is used after the sink either.
        dmlserve::v1::ExecuteResponse response = std::move(call->response);
        delete call;
        sink_(c, status.ok() ? &response : nullptr);
      });
}

}  // namespace dmls::load
