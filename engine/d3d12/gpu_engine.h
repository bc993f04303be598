// GpuEngine: the Direct3D 12 implementation of dmls::Engine: a GpuRunner
// (gpu_runner.h: arenas, command lists, fences, copies) behind the
// scheduler of engine/sched (admission once, dynamic batching, coalescing
// keys, deadlines and cancellation in the queue).
//
// Execute() admits the request and stages its payload on the caller's
// thread, then queues it; the scheduler's dispatch thread hands batches to
// the runner, which records each into one command list. See
// docs/PERFORMANCE.md ("Serving") for what this buys. ExecuteChain() goes
// through the same scheduler (SubmitChain: admission, deadline, queue,
// in-flight count); at dispatch the resident executor records it into the
// runner's frames, on the runner's queue (engine_runner.h). Resident
// writes, reads and zero-fills queue in the scheduler's chain lane too
// (SubmitOrdered), so resident work runs in call order; AllocateResident
// queues its zero-fill there, ahead of the buffer's every use, and does
// not wait for it.
//
// Ownership: owns the runner (and with it the device), the resident
// executor, the runner in front of both and the scheduler.
// Thread-safety: Execute, stats, device_info and Shutdown may be called from
// any thread, except that a completion callback must not call Shutdown;
// callbacks may call Execute. Callbacks should be short: small results are
// delivered on the completion thread.
#ifndef DMLSERVE_ENGINE_D3D12_GPU_ENGINE_H_
#define DMLSERVE_ENGINE_D3D12_GPU_ENGINE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "engine/core/engine.h"
#include "engine/d3d12/engine_runner.h"
#include "engine/d3d12/gpu_runner.h"
#include "engine/d3d12/resident_executor.h"
#include "engine/sched/scheduler.h"

namespace dmls::d3d12 {

struct GpuEngineOptions : GpuRunnerOptions {
  sched::SchedulerOptions scheduler;
  ResidentExecutorOptions resident;
};

struct GpuEngineStats : GpuRunnerStats {
  sched::SchedulerStats scheduler;
  ResidentExecutorStats resident;
};

class GpuEngine : public Engine {
 public:
  static absl::StatusOr<std::unique_ptr<GpuEngine>> Create(
      GpuEngineOptions options);
  ~GpuEngine() override;

  DeviceInfo device_info() const override { return runner_->device_info(); }
  // False once the device is lost (gpu_runner.h).
  bool Healthy() const override { return !runner_->lost(); }
  void Execute(ExecuteRequest request, ExecuteCallback done) override;
  void Shutdown() override;
  // Resident tensors on this device (resident_executor.h).
  absl::StatusOr<std::shared_ptr<ResidentBuffer>> AllocateResident(
      uint64_t bytes, absl::string_view placement_key) override;
  void WriteResident(std::shared_ptr<ResidentBuffer> buffer, uint64_t offset,
                     std::string bytes, StatusCallback done) override;
  void ReadResidentInto(std::shared_ptr<ResidentBuffer> buffer, uint64_t offset,
                        absl::Span<char> into, StatusCallback done) override;
  void ExecuteChain(ChainRequest request, ChainCallback done) override;

  GpuEngineStats stats() const;
  std::vector<std::pair<std::string, uint64_t>> Counters() const override;
  // Testing: the device is lost from now on (GpuRunner::FailDevice).
  void FailDevice() { runner_->FailDevice(); }
  uint64_t memory_cap_bytes() const { return runner_->memory_cap_bytes(); }
  const sched::SchedulerOptions& scheduler_options() const {
    return scheduler_->options();
  }

 private:
  GpuEngine() = default;

  std::unique_ptr<GpuRunner> runner_;
  std::unique_ptr<ResidentExecutor> resident_;  // uses runner_
  std::unique_ptr<EngineRunner> engine_runner_;  // uses both
  std::unique_ptr<sched::Scheduler> scheduler_;  // uses engine_runner_
};

}  // namespace dmls::d3d12

#endif  // DMLSERVE_ENGINE_D3D12_GPU_ENGINE_H_
