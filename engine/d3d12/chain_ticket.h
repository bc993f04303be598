// ChainTicket: a resident chain's place in the resident executor's call
// order (resident_executor.h), taken when the chain is submitted and
// filled when the scheduler dispatches it.
//
// The resident executor's worker runs writes, reads and chains of resident
// buffers in the order they were called. A chain now waits in the
// scheduler's queue (engine/sched/scheduler.h) between its call and its
// dispatch, so it takes its place first: ResidentExecutor::ReserveChain
// queues a Place for the worker and hands back the ticket, which rides
// with the scheduler's job as its runner state. The worker waits at the
// place until the ticket is Run (the chain was dispatched: it records it
// there) or destroyed unrun (refused, expired or cancelled in the queue:
// it moves on), so a write called after a chain never overtakes it.
//
// Ownership: the ticket and its place share the state; whoever ends last
// frees it. Thread-safety: Run and the destructor may run on any thread
// (the scheduler's), Place::Wait on the worker.
#ifndef DMLSERVE_ENGINE_D3D12_CHAIN_TICKET_H_
#define DMLSERVE_ENGINE_D3D12_CHAIN_TICKET_H_

#include <memory>
#include <optional>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "engine/core/mutex.h"
#include "engine/core/resident.h"
#include "engine/sched/job.h"

namespace dmls::d3d12 {

class ChainTicket final : public sched::JobState {
 public:
  // The chain to record, handed over by Run.
  struct Chain {
    ChainRequest request;
    ChainCallback done;
  };

  // The worker's side.
  class Place {
   public:
    // Blocks until the ticket is Run (the chain) or dropped (nullopt).
    std::optional<Chain> Wait();

   private:
    friend class ChainTicket;
    enum class State { kWaiting, kRun, kDropped };
    Mutex mu_;
    CondVar cv_;
    State state_ ABSL_GUARDED_BY(mu_) = State::kWaiting;
    std::optional<Chain> chain_ ABSL_GUARDED_BY(mu_);
  };

  ChainTicket() : place_(std::make_shared<Place>()) {}
  // Unrun: the place is dropped.
  ~ChainTicket() override;
  ChainTicket(const ChainTicket&) = delete;
  ChainTicket& operator=(const ChainTicket&) = delete;

  // What the worker waits at.
  std::shared_ptr<Place> place() const { return place_; }
  // The chain was dispatched: the worker records it at its place. Once.
  void Run(ChainRequest request, ChainCallback done);

 private:
  const std::shared_ptr<Place> place_;
};

}  // namespace dmls::d3d12

#endif  // DMLSERVE_ENGINE_D3D12_CHAIN_TICKET_H_
