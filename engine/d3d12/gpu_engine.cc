#include "engine/d3d12/gpu_engine.h"

#include <utility>

#include "spdlog/spdlog.h"

namespace dmls::d3d12 {

absl::StatusOr<std::unique_ptr<GpuEngine>> GpuEngine::Create(
    GpuEngineOptions options) {
  sched::SchedulerOptions scheduler = options.scheduler;
  const ResidentExecutorOptions resident = options.resident;
  std::shared_ptr<spdlog::logger> logger = options.logger;
  absl::StatusOr<std::unique_ptr<GpuRunner>> runner =
      GpuRunner::Create(static_cast<GpuRunnerOptions>(std::move(options)));
  if (!runner.ok()) return runner.status();
  std::unique_ptr<GpuEngine> engine(new GpuEngine());
  engine->runner_ = std::move(*runner);
  // Transfers take their place in the scheduler's chain lane (made below,
  // before any transfer can be called).
  GpuEngine* e = engine.get();
  absl::StatusOr<std::unique_ptr<ResidentExecutor>> executor = ResidentExecutor::Create(
      engine->runner_.get(), e, resident,
      [e](std::unique_ptr<sched::JobState> transfer, ChainCallback done) {
        e->scheduler_->SubmitOrdered(std::move(transfer), std::move(done));
      },
      logger ? logger : spdlog::default_logger());
  if (!executor.ok()) return executor.status();
  engine->resident_ = std::move(*executor);
  engine->engine_runner_ =
      std::make_unique<EngineRunner>(engine->runner_.get(), engine->resident_.get());
  engine->scheduler_ =
      std::make_unique<sched::Scheduler>(engine->engine_runner_.get(), scheduler);
  return engine;
}

GpuEngine::~GpuEngine() { Shutdown(); }

void GpuEngine::Execute(ExecuteRequest request, ExecuteCallback done) {
  scheduler_->Submit(std::move(request), std::move(done));
}

absl::StatusOr<std::shared_ptr<ResidentBuffer>> GpuEngine::AllocateResident(
    uint64_t bytes, absl::string_view /*placement_key*/) {
  return resident_->Allocate(bytes);
}

void GpuEngine::WriteResident(std::shared_ptr<ResidentBuffer> buffer, uint64_t offset,
                              std::string bytes, StatusCallback done) {
  resident_->Write(std::move(buffer), offset, std::move(bytes), std::move(done));
}

void GpuEngine::ReadResidentInto(std::shared_ptr<ResidentBuffer> buffer, uint64_t offset,
                                 absl::Span<char> into, StatusCallback done) {
  resident_->ReadInto(std::move(buffer), offset, into, std::move(done));
}

void GpuEngine::ExecuteChain(ChainRequest request, ChainCallback done) {
  scheduler_->SubmitChain(std::move(request), std::move(done));
}

void GpuEngine::Shutdown() {
  // The scheduler first: it runs or drops every queued chain and transfer
  // and refuses new ones; then the lists on the runner's queue are waited
  // for.
  if (scheduler_) scheduler_->Shutdown();
  if (resident_) resident_->Shutdown();
  if (runner_) runner_->Shutdown();
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
          {"placed_lists", s.placed_lists},
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
          {"handed_back", s.handed_back},
          {"resident_buffers", s.resident.buffers},
          {"resident_bytes", s.resident.buffer_bytes},
          {"chains", s.resident.chains},
          {"chain_steps", s.resident.chain_steps},
          {"resident_writes", s.resident.writes},
          {"resident_reads", s.resident.reads},
          {"resident_bytes_written", s.resident.bytes_written},
          {"resident_bytes_read", s.resident.bytes_read},
          {"chain_record_us", s.resident.chain_record_us},
          {"chain_wait_us", s.resident.chain_wait_us},
          {"chain_plan_us", s.resident.chain_plan_us},
          {"chain_bind_us", s.resident.chain_bind_us},
          {"chain_barrier_us", s.resident.chain_barrier_us},
          {"chain_dispatch_us", s.resident.chain_dispatch_us},
          {"chain_views_created", s.resident.views_created}};
}

GpuEngineStats GpuEngine::stats() const {
  GpuEngineStats s;
  static_cast<GpuRunnerStats&>(s) = runner_->stats();
  s.scheduler = scheduler_->stats();
  if (resident_) s.resident = resident_->stats();
  return s;
}

}  // namespace dmls::d3d12
