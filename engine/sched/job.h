// Job and Batch: an admitted request on its way through the scheduler.
//
// A Job is one unit of work: a plain request (`request`, answered through
// `done`) or a resident chain (`chain`, answered through `chain_done`;
// engine/core/resident.h). It owns the request, its completion callback
// and the runner's per-request state (for the GPU: the dispatch plan and
// the staged upload; for a chain, its place among the resident work).
// Destroying a Job without answering it is a bug; destroying its state
// releases whatever the runner reserved for it. Batches group jobs by batch
// key: jobs of one group may be coalesced into one dispatch by the runner;
// chains are never coalesced and keep their submission order (batcher.h).
// Plain move-only data; thread-compatible.
#ifndef DMLSERVE_ENGINE_SCHED_JOB_H_
#define DMLSERVE_ENGINE_SCHED_JOB_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "engine/core/engine.h"
#include "engine/core/resident.h"
#include "engine/sched/clock.h"
#include "engine/sched/scheduler_observer.h"

namespace dmls::sched {

// A plain request's completion callback with the request's timing carried
// beside it: once the scheduler has handed the job to the runner (Stamp),
// calling it reads the clock once, tells the observer the run time and
// fills the result's ExecuteTiming (input, queued, run) before the caller's
// callback runs. Before Stamp it just forwards. One object, no allocation
// or reference count of its own per request (the wrapping lambda it
// replaces cost both on the dispatch thread).
// The clock and observer are borrowed: the scheduler that stamps owns
// them and outlives every answer (its Shutdown waits for Runner::Drain).
// Move-only; thread-compatible.
class JobCallback {
 public:
  JobCallback() = default;
  JobCallback(ExecuteCallback done) : done_(std::move(done)) {}  // NOLINT: implicit on purpose
  JobCallback(JobCallback&&) = default;
  JobCallback& operator=(JobCallback&&) = default;

  // The job was handed to the runner at `start` after `input` preparing
  // and `queued` in the queue; `observer` may be null.
  void Stamp(const Clock* clock, SchedulerObserver* observer,
             absl::Duration input, absl::Duration queued, absl::Time start) {
    clock_ = clock;
    observer_ = observer;
    input_ = input;
    queued_ = queued;
    start_ = start;
  }

  void operator()(absl::StatusOr<ExecuteResult> result) {
    if (clock_ != nullptr) {
      const absl::Duration run = clock_->Now() - start_;
      if (observer_ != nullptr) observer_->OnExecuted(run);
      if (result.ok()) {
        result->timing.input = input_;
        result->timing.queued = queued_;
        result->timing.run = run;
      }
    }
    done_(std::move(result));
  }
  explicit operator bool() const { return static_cast<bool>(done_); }
  // The caller's callback (for wrapping it before Stamp).
  ExecuteCallback& inner() { return done_; }

 private:
  ExecuteCallback done_;
  const Clock* clock_ = nullptr;  // null: not stamped
  SchedulerObserver* observer_ = nullptr;
  absl::Duration input_;
  absl::Duration queued_;
  absl::Time start_;
};

// What a runner keeps for one job between Prepare and Run (see runner.h).
class JobState {
 public:
  virtual ~JobState() = default;
};

struct Job {
  ExecuteRequest request;
  JobCallback done;
  // A resident chain instead of `request` (then `done` is unused).
  bool is_chain = false;
  ChainRequest chain;
  ChainCallback chain_done;
  // Jobs with equal non-empty keys may run as one coalesced dispatch.
  std::string key;
  // Payload and output bytes (for max_batch_bytes).
  uint64_t bytes = 0;
  absl::Time enqueued;  // Submit's clock reading, before Prepare
  absl::Time staged;    // after Prepare: the job's time in the queue starts
  uint64_t seq = 0;  // admission order, ties broken by it
  std::unique_ptr<JobState> state;

  absl::Time deadline() const { return is_chain ? chain.deadline : request.deadline; }
  bool Cancelled() const {
    const auto& flag = is_chain ? chain.cancelled : request.cancelled;
    return flag && flag->load();
  }
  // Answers the job with `status` (not OK), whichever kind it is.
  void Fail(absl::Status status) {
    if (is_chain) {
      chain_done(std::move(status));
    } else {
      done(std::move(status));
    }
  }
};

struct Batch {
  // Each group holds jobs of one key, earliest deadline first; groups are
  // in the order of their first job's deadline.
  std::vector<std::vector<Job>> groups;

  size_t size() const {
    size_t n = 0;
    for (const auto& g : groups) n += g.size();
    return n;
  }
  bool empty() const { return groups.empty(); }
};

}  // namespace dmls::sched

#endif  // DMLSERVE_ENGINE_SCHED_JOB_H_
