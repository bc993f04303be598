#include "engine/d3d12/gpu_engine.h"

#include <utility>

namespace dmls::d3d12 {

absl::StatusOr<std::unique_ptr<GpuEngine>> GpuEngine::Create(
    GpuEngineOptions options) {
  sched::SchedulerOptions scheduler = options.scheduler;
  absl::StatusOr<std::unique_ptr<GpuRunner>> runner =
      GpuRunner::Create(static_cast<GpuRunnerOptions>(std::move(options)));
  if (!runner.ok()) return runner.status();
  std::unique_ptr<GpuEngine> engine(new GpuEngine());
  engine->runner_ = std::move(*runner);
  engine->scheduler_ =
      std::make_unique<sched::Scheduler>(engine->runner_.get(), scheduler);
  return engine;
}

GpuEngine::~GpuEngine() { Shutdown(); }

void GpuEngine::Execute(ExecuteRequest request, ExecuteCallback done) {
  scheduler_->Submit(std::move(request), std::move(done));
}

void GpuEngine::Shutdown() {
  scheduler_->Shutdown();
  runner_->Shutdown();
}

std::vector<std::pair<std::string, uint64_t>> GpuEngine::Counters() const {
  const GpuEngineStats s = stats();
  return {{"requests", s.requests},
          {"batches", s.batches},
          {"dispatches", s.dispatches},
          {"largest_batch", s.largest_batch},
          {"coalesced_groups", s.coalesced_groups},
          {"coalesced_requests", s.coalesced_requests},
          {"dedicated_requests", s.dedicated_requests},
          {"drains", s.drains},
          {"resources_created", s.pool.resources_created},
          {"views_created", s.views_created},
          {"arena_bytes", s.device_arenas.bytes + s.upload_arenas.bytes +
                              s.readback_arenas.bytes},
          {"queue_expired", s.scheduler.expired},
          {"pipelines", s.pipelines},
          {"fence_lost_events", s.fence_lost_events},
          {"fence_kicks", s.fence_kicks},
          {"stage_us", s.stage_us},
          {"gpu_us", s.gpu_us},
          {"copy_out_us", s.copy_out_us},
          {"device_lost", s.device_lost ? 1u : 0u},
          {"handed_back", s.handed_back}};
}

GpuEngineStats GpuEngine::stats() const {
  GpuEngineStats s;
  static_cast<GpuRunnerStats&>(s) = runner_->stats();
  s.scheduler = scheduler_->stats();
  return s;
}

}  // namespace dmls::d3d12
