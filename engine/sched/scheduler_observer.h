// SchedulerObserver: what a Scheduler reports as it works, for metrics.
// Called on the scheduler's threads (Submit's caller, the dispatch thread,
// the runner's completion threads): implementations must be thread-safe and
// cheap (they run on the request path).
#ifndef DMLSERVE_ENGINE_SCHED_SCHEDULER_OBSERVER_H_
#define DMLSERVE_ENGINE_SCHED_SCHEDULER_OBSERVER_H_

#include <cstddef>
#include <cstdint>

#include "absl/time/time.h"

namespace dmls::sched {

class SchedulerObserver {
 public:
  virtual ~SchedulerObserver() = default;
  // A request entered the queue.
  virtual void OnQueued() = 0;
  // `count` requests left the queue without running (cancelled, expired,
  // dropped at shutdown).
  virtual void OnDropped(size_t count) = 0;
  // A batch of `requests` requests and `bytes` payload bytes was handed to
  // the runner; each of its requests calls OnWaited with its queue time.
  virtual void OnBatch(size_t requests, uint64_t bytes) = 0;
  virtual void OnWaited(absl::Duration queued) = 0;
  // A request of a batch finished: `run` from its hand-over to the runner
  // until its result.
  virtual void OnExecuted(absl::Duration run) = 0;
};

}  // namespace dmls::sched

#endif  // DMLSERVE_ENGINE_SCHED_SCHEDULER_OBSERVER_H_
