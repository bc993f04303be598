// Job and Batch: an admitted request on its way through the scheduler.
//
// A Job is one unit of work: a plain request (`request`, answered through
// `done`) or a resident chain (`chain`, with its own callback;
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
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "engine/core/engine.h"
#include "engine/core/resident.h"
#include "engine/sched/clock.h"
#include "engine/sched/scheduler_observer.h"

namespace dmls::sched {

// A job's completion callback with the job's timing carried beside it:
// once the scheduler has handed the job to the runner (Stamp), calling it
// reads the clock once and tells the observer the run time; for a plain
// request (Result = ExecuteResult) it also fills the result's
// ExecuteTiming (input, queued, run) before the caller's callback runs.
// Before Stamp it just forwards. One object, no allocation or reference
// count of its own per request (a wrapping lambda per request cost both on
// the dispatch thread).
// The clock and observer are borrowed: the scheduler that stamps owns
// them and outlives every answer (its Shutdown waits for Runner::Drain).
// Move-only; thread-compatible.
template <typename Result>
class StampedCallback {
 public:
  using Callback = absl::AnyInvocable<void(absl::StatusOr<Result>)>;

  StampedCallback() = default;
  StampedCallback(Callback done) : done_(std::move(done)) {}  // NOLINT: implicit on purpose
  StampedCallback(StampedCallback&&) = default;
  StampedCallback& operator=(StampedCallback&&) = default;

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

  void operator()(absl::StatusOr<Result> result) {
    if (clock_ != nullptr) {
      const absl::Duration run = clock_->Now() - start_;
      if (observer_ != nullptr) observer_->OnExecuted(run);
      if constexpr (std::is_same_v<Result, ExecuteResult>) {
        if (result.ok()) {
          result->timing.input = input_;
          result->timing.queued = queued_;
          result->timing.run = run;
        }
      }
    }
    done_(std::move(result));
  }
  explicit operator bool() const { return static_cast<bool>(done_); }
  // The caller's callback (for wrapping it before Stamp).
  Callback& inner() { return done_; }

 private:
  Callback done_;
  const Clock* clock_ = nullptr;  // null: not stamped
  SchedulerObserver* observer_ = nullptr;
  absl::Duration input_;
  absl::Duration queued_;
  absl::Time start_;
};

using JobCallback = StampedCallback<ExecuteResult>;

// A resident chain and its callback: held by pointer in a Job, so that the
// plain requests, which are most jobs, do not carry (and move) its fields.
struct ChainJob {
  ChainRequest request;
  StampedCallback<ChainResult> done;
};

// What a runner keeps for one job between Prepare and Run (see runner.h).
class JobState {
 public:
  virtual ~JobState() = default;
};

struct Job {
  ExecuteRequest request;
  JobCallback done;
  // A resident chain instead of `request` (then `request` and `done` are
  // unused); null for a plain request.
  std::unique_ptr<ChainJob> chain;
  // Jobs with equal non-empty keys may run as one coalesced dispatch.
  std::string key;
  // Payload and output bytes (for max_batch_bytes).
  uint64_t bytes = 0;
  absl::Time enqueued;  // Submit's clock reading, before Prepare
  absl::Time staged;    // after Prepare: the job's time in the queue starts
  uint64_t seq = 0;  // admission order, ties broken by it
  std::unique_ptr<JobState> state;

  bool is_chain() const { return chain != nullptr; }
  absl::Time deadline() const { return chain ? chain->request.deadline : request.deadline; }
  bool Cancelled() const {
    const auto& flag = chain ? chain->request.cancelled : request.cancelled;
    return flag && flag->load();
  }
  // Answers the job with `status` (not OK), whichever kind it is.
  void Fail(absl::Status status) {
    if (chain) {
      chain->done(std::move(status));
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
