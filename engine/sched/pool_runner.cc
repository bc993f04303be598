#include "engine/sched/pool_runner.h"

#include <chrono>
#include <memory>
#include <thread>
#include <utility>

#include "engine/sched/admission.h"

namespace dmls::sched {

PoolRunner::PoolRunner(PoolRunnerOptions options, RunFn run)
    : options_(options),
      run_(std::move(run)),
      pool_(ThreadPoolOptions{options.threads, "dmls-cpu"}) {}

PoolRunner::~PoolRunner() { pool_.Shutdown(); }

absl::StatusOr<Prepared> PoolRunner::Prepare(ExecuteRequest& request) {
  Prepared p;
  p.bytes = RequestBytes(request);
  return p;
}

bool PoolRunner::CanAccept() { return handed_out_.load() < limit(); }

void PoolRunner::SetCapacityListener(std::function<void()> listener) {
  MutexLock lock(&listener_mu_);
  listener_ = std::move(listener);
}

void PoolRunner::Finished() {
  // Only the step from the limit to below it frees capacity that
  // CanAccept refused (each step down is one fetch_sub, so none is
  // missed); below it the scheduler is not waiting, and waking its
  // thread for every answer would cost a hop per request.
  if (handed_out_.fetch_sub(1) != limit()) return;
  std::function<void()> listener;
  {
    MutexLock lock(&listener_mu_);
    listener = listener_;
  }
  if (listener) listener();
}

void PoolRunner::RunJob(Job& job) {
  ExecuteRequest& req = job.request;
  if (job.Cancelled()) {
    job.done(absl::CancelledError("request cancelled before execution"));
  } else if (absl::Now() > req.deadline) {
    job.done(absl::DeadlineExceededError("deadline passed before execution"));
  } else {
    absl::StatusOr<ExecuteResult> result = run_(req);
    // Each request runs alone.
    if (result.ok()) {
      result->timing.execution_requests = 1;
      result->timing.counts_execution = true;
    }
    job.done(std::move(result));
  }
  Finished();
}

bool PoolRunner::AcceptInline(const Job& job) {
  if (job.bytes > options_.inline_max_bytes || handed_out_.load() >= limit()) return false;
  handed_out_.fetch_add(1);
  return true;
}

void PoolRunner::RunInline(Job job) { RunJob(job); }

void PoolRunner::Run(Batch batch) {
  for (std::vector<Job>& group : batch.groups) {
    for (Job& job : group) {
      handed_out_.fetch_add(1);
      auto task = std::make_shared<Job>(std::move(job));
      const bool queued = pool_.Schedule([this, task] { RunJob(*task); });
      if (!queued) {
        task->done(absl::UnavailableError(options_.shut_down_message));
        Finished();
      }
    }
  }
}

void PoolRunner::Drain() {
  while (handed_out_.load() > 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
}

}  // namespace dmls::sched
