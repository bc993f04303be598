#include "engine/cpu/cpu_engine.h"

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "engine/cpu/reference.h"

namespace dmls {

CpuEngine::CpuEngine(CpuEngineOptions options)
    : options_(options),
      runner_(sched::PoolRunnerOptions{options.threads, options.inline_max_bytes,
                                       "CPU engine is shut down"},
              [this](ExecuteRequest& request) { return RunReference(request, options_); }),
      scheduler_(&runner_, options.scheduler) {}

CpuEngine::~CpuEngine() { Shutdown(); }

DeviceInfo CpuEngine::device_info() const {
  DeviceInfo info;
  info.name =
      absl::StrCat("CPU reference (", runner_.thread_count(), " threads)");
  info.kind = "cpu";
  info.backend = "cpu-reference";
  return info;
}

void CpuEngine::Execute(ExecuteRequest request, ExecuteCallback done) {
  scheduler_.Submit(std::move(request), std::move(done));
}

std::vector<std::pair<std::string, uint64_t>> CpuEngine::Counters() const {
  const sched::SchedulerStats s = scheduler_.stats();
  return {{"requests", s.batched_requests},
          {"batches", s.batches},
          {"largest_batch", s.largest_batch},
          {"queue_expired", s.expired}};
}

void CpuEngine::Shutdown() {
  scheduler_.Shutdown();
  runner_.Shutdown();
}

absl::StatusOr<ExecuteResult> CpuEngine::Run(const ExecuteRequest& request,
                                             const CpuEngineOptions& options) {
  return RunReference(request, options);
}

}  // namespace dmls
