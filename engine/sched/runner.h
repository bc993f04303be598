// Runner: what executes batches for the scheduler (scheduler.h). The GPU
// engine records a batch into one command list; the CPU engine spreads it
// over its thread pool.
//
// Contract:
//  - Prepare() runs on the caller's thread at admission, after validation:
//    it plans the request and may stage its input (the GPU runner copies the
//    payload into upload memory here, so large copies never run on the
//    submission thread). It returns the batch key, the bytes and the state
//    to carry. An error rejects the request; nothing stays reserved.
//  - PrepareChain() is Prepare for a resident chain (engine/core/resident.h),
//    also on the caller's thread: it may take the chain's place among the
//    runner's resident work (call order), which the returned state keeps
//    until the chain runs or the state is destroyed unrun. Runners that
//    keep no resident buffers leave it UNIMPLEMENTED (their engines run
//    chains step by step through Execute).
//  - CanAccept() says whether Run() would start a batch now without
//    blocking (a free command list, an idle worker). The scheduler calls it
//    with its own lock held: it must be cheap and must not call back.
//  - Run() owns the batch from the call on and answers every job (`done`,
//    or the chain's own callback) exactly once, possibly on other threads, possibly before returning.
//    It is only ever called from the scheduler's one dispatch thread.
//  - Whenever capacity frees up, the runner calls the function given to
//    SetCapacityListener (from any thread, with none of its locks held).
//  - AcceptInline() (optional; the default says no) offers a plain job that
//    the queue would hand over at once as a batch of one (the queue is
//    empty and the policy does not wait for company) to run on Submit's
//    caller thread instead: no hop to the dispatch thread and on to a
//    worker. Called with the scheduler's lock held, like CanAccept, and as
//    cheap; true means the runner counts the job as handed out (Drain waits
//    for it) and RunInline() follows at once, on the caller's thread,
//    without the lock: it answers the job before returning.
// Implementations are thread-safe in the sense above.
#ifndef DMLSERVE_ENGINE_SCHED_RUNNER_H_
#define DMLSERVE_ENGINE_SCHED_RUNNER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "engine/core/engine.h"
#include "engine/core/resident.h"
#include "engine/sched/job.h"

namespace dmls::sched {

struct Prepared {
  std::string key;  // empty: never coalesced with others
  uint64_t bytes = 0;
  std::unique_ptr<JobState> state;
};

class Runner {
 public:
  virtual ~Runner() = default;

  virtual absl::StatusOr<Prepared> Prepare(ExecuteRequest& request) = 0;
  virtual absl::StatusOr<Prepared> PrepareChain(ChainRequest& /*chain*/) {
    return absl::UnimplementedError("this runner runs no resident chains");
  }
  virtual bool CanAccept() = 0;
  virtual void Run(Batch batch) = 0;
  virtual bool AcceptInline(const Job& /*job*/) { return false; }
  virtual void RunInline(Job /*job*/) {}
  virtual void SetCapacityListener(std::function<void()> listener) = 0;
  // Waits until every batch handed to Run has completed.
  virtual void Drain() = 0;
};

}  // namespace dmls::sched

#endif  // DMLSERVE_ENGINE_SCHED_RUNNER_H_
