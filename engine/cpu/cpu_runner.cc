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

bool CpuRunner::CanAccept() {
  return handed_out_.load() < 2 * pool_.thread_count();
}

void CpuRunner::SetCapacityListener(std::function<void()> listener) {
  MutexLock lock(&listener_mu_);
  listener_ = std::move(listener);
}

void CpuRunner::Finished() {
  handed_out_.fetch_sub(1);
  std::function<void()> listener;
  {
    MutexLock lock(&listener_mu_);
    listener = listener_;
  }
  if (listener) listener();
}

void CpuRunner::Run(sched::Batch batch) {
  for (std::vector<sched::Job>& group : batch.groups) {
    for (sched::Job& job : group) {
      handed_out_.fetch_add(1);
      auto task = std::make_shared<sched::Job>(std::move(job));
      const bool queued = pool_.Schedule([this, task] {
        ExecuteRequest& req = task->request;
        if (task->Cancelled()) {
          task->done(absl::CancelledError("request cancelled before execution"));
        } else if (absl::Now() > req.deadline) {
          task->done(absl::DeadlineExceededError("deadline passed before execution"));
        } else {
          absl::StatusOr<ExecuteResult> result = RunReference(req, options_);
          // Each request runs alone; its output is written in place.
          if (result.ok()) {
            result->timing.execution_requests = 1;
            result->timing.counts_execution = true;
          }
          task->done(std::move(result));
        }
        Finished();
      });
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
