#include "engine/cpu/cpu_runner.h"

#include <memory>
#include <thread>
#include <utility>

#include "engine/cpu/reference.h"
#include "engine/sched/admission.h"

namespace dmls {

CpuRunner::CpuRunner(CpuEngineOptions options)
    : options_(options), pool_(sched::ThreadPoolOptions{options.threads}) {}

CpuRunner::~CpuRunner() { pool_.Shutdown(); }

absl::StatusOr<sched::Prepared> CpuRunner::Prepare(ExecuteRequest& request) {
  sched::Prepared p;
  p.bytes = sched::RequestBytes(request);
  return p;
}

bool CpuRunner::CanAccept() { return handed_out_.load() < limit(); }

void CpuRunner::SetCapacityListener(std::function<void()> listener) {
  MutexLock lock(&listener_mu_);
  listener_ = std::move(listener);
}

void CpuRunner::Finished() {
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

void CpuRunner::RunJob(sched::Job& job) {
  ExecuteRequest& req = job.request;
  if (job.Cancelled()) {
    job.done(absl::CancelledError("request cancelled before execution"));
  } else if (absl::Now() > req.deadline) {
    job.done(absl::DeadlineExceededError("deadline passed before execution"));
  } else {
    absl::StatusOr<ExecuteResult> result = RunReference(req, options_);
    // Each request runs alone; its output is written in place.
    if (result.ok()) {
      result->timing.execution_requests = 1;
      result->timing.counts_execution = true;
    }
    job.done(std::move(result));
  }
  Finished();
}

bool CpuRunner::AcceptInline(const sched::Job& job) {
  if (job.bytes > options_.inline_max_bytes || handed_out_.load() >= limit()) return false;
  handed_out_.fetch_add(1);
  return true;
}

void CpuRunner::RunInline(sched::Job job) { RunJob(job); }

void CpuRunner::Run(sched::Batch batch) {
  for (std::vector<sched::Job>& group : batch.groups) {
    for (sched::Job& job : group) {
      handed_out_.fetch_add(1);
      auto task = std::make_shared<sched::Job>(std::move(job));
      const bool queued = pool_.Schedule([this, task] { RunJob(*task); });
      if (!queued) {
        task->done(absl::UnavailableError("CPU engine is shut down"));
        Finished();
      }
    }
  }
}

void CpuRunner::Drain() {
  while (handed_out_.load() > 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
}

}  // namespace dmls
