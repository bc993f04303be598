// MultiEngine: one Engine over several child engines (one per GPU), each
// with its own scheduler, queue, memory and device. Generic over Engine: it
// knows nothing of Direct3D 12.
//
// Placement: each request goes, at admission, to the live child with the
// least outstanding work: the bytes of the requests routed to it and not
// yet answered (payloads plus output) plus a fixed cost per request
// (MultiEngineOptions::request_cost_bytes). A child that works faster
// answers sooner and so gets more. Ties (e.g. all idle) go round-robin.
// Routing once at admission keeps batching per child: each child still
// forms and coalesces its own batches. No tensor is resident anywhere yet,
// so any child can take any inline request.
//
// Device loss: a child answering with DeviceLostError (engine.h) and no
// longer Healthy() is dead: it gets no more requests. Every request it
// fails that way and hands back whole (ExecuteRequest::on_device_lost;
// GpuRunner restores the payloads from its staged upload copy, whether the
// request was being admitted, queued or running) is run again on another
// live child it has not tried yet, up to max_attempts runs in all; with no
// live child left it is answered with the child's UNAVAILABLE. Other
// errors, RESOURCE_EXHAUSTED from one child's memory cap included, are
// answered as they are: children of one server have the same cap, so
// another would refuse the request too.
//
// Resident tensors live on one child: a buffer goes to the child that the
// placement key (the server passes the owner) hashes to among the live
// ones, so one owner's tensors share a device; reads and writes go to the
// buffer's child, and a chain runs on the child of its resident tensors
// (FAILED_PRECONDITION when they are on different children, which only a
// lost device can bring about), or on the least-loaded one when it has
// none. A lost child's tensors are lost with it (UNAVAILABLE).
//
// Ownership: owns the children. Thread-safety: as Engine; Shutdown shuts
// every child down (a request handed back during it may find the other
// children shut down too and is then answered UNAVAILABLE).
#ifndef DMLSERVE_ENGINE_SCHED_MULTI_ENGINE_H_
#define DMLSERVE_ENGINE_SCHED_MULTI_ENGINE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/engine.h"
#include "spdlog/logger.h"

namespace dmls::sched {

struct MultiEngineOptions {
  // Counter prefixes of the children, in order ("gpu0" gives
  // "gpu0.requests"); missing ones are "engine<i>".
  std::vector<std::string> labels;
  // What one outstanding request costs besides its bytes when comparing
  // loads (per-request overhead: recording, dispatch, completion), so that
  // many tiny requests also count as work.
  uint64_t request_cost_bytes = 64 << 10;
  // Runs of one request at most, on distinct children: 2 = one retry after
  // a device loss.
  int max_attempts = 2;
  // Null: spdlog's default logger.
  std::shared_ptr<spdlog::logger> logger;
};

class MultiEngine : public Engine {
 public:
  // With no children every request is UNAVAILABLE.
  MultiEngine(std::vector<std::unique_ptr<Engine>> children,
              MultiEngineOptions options);
  ~MultiEngine() override;

  // "<n> x <name>" when all children share a name, else the names joined
  // with " + "; kind and backend of the first; memory summed.
  DeviceInfo device_info() const override;
  std::vector<DeviceInfo> devices() const override;
  // While any child is healthy.
  bool Healthy() const override;
  void Execute(ExecuteRequest request, ExecuteCallback done) override;
  void Shutdown() override;
  absl::StatusOr<std::shared_ptr<ResidentBuffer>> AllocateResident(
      uint64_t bytes, absl::string_view placement_key) override;
  void WriteResident(std::shared_ptr<ResidentBuffer> buffer, uint64_t offset,
                     std::string bytes, StatusCallback done) override;
  void ReadResidentInto(std::shared_ptr<ResidentBuffer> buffer, uint64_t offset,
                        absl::Span<char> into, StatusCallback done) override;
  void ExecuteChain(ChainRequest request, ChainCallback done) override;
  // routed (requests), retried (runs again after a loss), retry_unavailable
  // (handed back with no untried live child left), engines_lost, then per
  // child under its label: routed (runs sent to it) and its own counters.
  std::vector<std::pair<std::string, uint64_t>> Counters() const override;

  size_t size() const { return children_.size(); }
  Engine* child(size_t i) const { return children_[i]->engine.get(); }
  // Bytes routed to child `i` and not answered yet (its load).
  uint64_t outstanding_bytes(size_t i) const {
    return children_[i]->outstanding.load();
  }
  uint64_t routed(size_t i) const { return children_[i]->routed.load(); }

 private:
  struct Child {
    std::unique_ptr<Engine> engine;
    std::string label;
    std::atomic<uint64_t> outstanding{0};
    std::atomic<uint64_t> routed{0};
    std::atomic<bool> reported_dead{false};
  };
  struct Call;

  // Sends `request` to the least-loaded live child not tried by `call`, or
  // answers `call` with `failure` when there is none.
  void Route(std::shared_ptr<Call> call, ExecuteRequest request,
             absl::Status failure);
  // The least-loaded live child not `tried`; -1 when none.
  int Pick(const std::vector<bool>& tried);
  void ReportDead(Child& child);

  const MultiEngineOptions options_;
  std::shared_ptr<spdlog::logger> log_;
  std::vector<std::unique_ptr<Child>> children_;
  std::atomic<uint64_t> next_{0};  // round-robin start among ties
  std::atomic<uint64_t> routed_{0};
  std::atomic<uint64_t> retried_{0};
  std::atomic<uint64_t> retry_unavailable_{0};
  std::atomic<uint64_t> engines_lost_{0};
};

}  // namespace dmls::sched

#endif  // DMLSERVE_ENGINE_SCHED_MULTI_ENGINE_H_
