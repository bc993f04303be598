// UnaryDriver: each Send is one DmlService.Execute call on gRPC's callback
// API, round-robin over the channels. All calls share the one const
// request of the Payload (gRPC serialises it per call and only reads it),
// so no payload is copied per call.
//
// Ownership: owns one stub per channel and each call's state until its
// callback; borrows the Payload, which must outlive the driver. The driver
// must outlive its calls: the runner waits for every sink call before
// destroying it. Thread-safe.
#ifndef DMLSERVE_BENCH_LOAD_UNARY_DRIVER_H_
#define DMLSERVE_BENCH_LOAD_UNARY_DRIVER_H_

#include <atomic>
#include <memory>
#include <vector>

#include "bench/load/completion.h"
#include "bench/load/driver.h"
#include "bench/load/payload.h"
#include "dmlserve/v1/dmlserve.grpc.pb.h"
#include "grpcpp/channel.h"

namespace dmls::load {

class UnaryDriver final : public Driver {
 public:
  // `timeout`: the deadline of each call.
  UnaryDriver(const std::vector<std::shared_ptr<grpc::Channel>>& channels,
              const Payload& payload, absl::Duration timeout,
              CompletionSink sink);

  void Send(int64_t due_ns) override;
  // Unary calls end by themselves (at their deadline at the latest).
  void Close(absl::Duration timeout) override {}

 private:
  const Payload& payload_;
  const absl::Duration timeout_;
  const CompletionSink sink_;
  std::vector<std::unique_ptr<dmlserve::v1::DmlService::Stub>> stubs_;
  std::atomic<uint64_t> next_stub_{0};
};

}  // namespace dmls::load

#endif  // DMLSERVE_BENCH_LOAD_UNARY_DRIVER_H_
