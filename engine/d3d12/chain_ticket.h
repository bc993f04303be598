// ChainTicket: a resident chain's place in the resident executor's call
// order (resident_executor.h), taken when the chain is submitted and
// filled when the scheduler dispatches it.
//
// The resident executor's worker places writes, reads and zero-fills of
// resident buffers on the GpuRunner's queue (GpuRunner::PlaceList) in the
// order they were called; chains go on the same queue. A chain waits in the
// scheduler's queue (engine/sched/scheduler.h) between its call and its
// dispatch, so it takes its place first: ResidentExecutor::ReserveChain
// queues a Place for the worker and hands back the ticket, which rides with
// the scheduler's job as its runner state. The chain is recorded once both
// have happened -- the worker reached the place (every transfer called
// before it is done) and the ticket was Run (the chain was dispatched) --
// on the thread that came second: the dispatch thread when the worker was
// there first, else the worker. The worker moves on past the place only
// when the chain was submitted or the ticket was destroyed unrun (refused,
// expired or cancelled in the queue), so a write called after a chain is
// queued after it and never overtakes it, and the dispatch thread never
// waits for the worker.
//
// Ownership: the ticket and its place share the state; whoever ends last
// frees it. Thread-safety: Run and the destructor may run on any thread
// (the scheduler's), Place::Reach on the worker.
#ifndef DMLSERVE_ENGINE_D3D12_CHAIN_TICKET_H_
#define DMLSERVE_ENGINE_D3D12_CHAIN_TICKET_H_

#include <memory>
#include <optional>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "engine/core/mutex.h"
#include "engine/core/resident.h"
#include "engine/sched/job.h"

namespace dmls::d3d12 {

class ChainTicket final : public sched::JobState {
 public:
  // Records and submits a chain, or answers it with an error.
  using Recorder = absl::AnyInvocable<void(ChainRequest, ChainCallback)>;

  // The worker's side.
  class Place {
   public:
    explicit Place(Recorder record) : record_(std::move(record)) {}
    // Called by the worker when everything queued before the place is
    // done. Records the chain here if the ticket was Run already, else
    // waits until it is Run (and recorded on that thread) or dropped.
    void Reach();

   private:
    friend class ChainTicket;
    struct Chain {
      ChainRequest request;
      ChainCallback done;
    };
    enum class State { kWaiting, kReached, kDone };
    Recorder record_;  // called once, by whichever side comes second
    Mutex mu_;
    CondVar cv_;
    State state_ ABSL_GUARDED_BY(mu_) = State::kWaiting;
    std::optional<Chain> chain_ ABSL_GUARDED_BY(mu_);  // Run before Reach
  };

  explicit ChainTicket(Recorder record)
      : place_(std::make_shared<Place>(std::move(record))) {}
  // Unrun: the place is dropped.
  ~ChainTicket() override;
  ChainTicket(const ChainTicket&) = delete;
  ChainTicket& operator=(const ChainTicket&) = delete;

  // What the worker reaches.
  std::shared_ptr<Place> place() const { return place_; }
  // The chain was dispatched: it is recorded now when the worker is at the
  // place, else by the worker when it gets there. Once.
  void Run(ChainRequest request, ChainCallback done);

 private:
  const std::shared_ptr<Place> place_;
  bool run_ = false;
};

}  // namespace dmls::d3d12

#endif  // DMLSERVE_ENGINE_D3D12_CHAIN_TICKET_H_
