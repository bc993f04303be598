// EngineRunner: the sched::Runner behind GpuEngine's scheduler
// (gpu_engine.h). Plain requests go to the GpuRunner (gpu_runner.h),
// resident chains to the ResidentExecutor (resident_executor.h), so that
// both are queued, admitted, expired and batched by the one scheduler.
//
//  - Prepare: GpuRunner::Prepare.
//  - PrepareChain: the chain's place in the resident call order
//    (ResidentExecutor::ReserveChain, chain_ticket.h), carried as the
//    job's state; its key is never coalesced (the scheduler's chain lane).
//  - CanAccept: the GpuRunner's (a chain waits behind the runner's frames
//    in flight like a plain request).
//  - Run, on the scheduler's dispatch thread: the plain groups of the batch
//    go to GpuRunner::Run as one batch; each chain's ticket is Run, which
//    records it into the GpuRunner's frames (GpuRunner::PlaceList) on this
//    thread when the executor's worker is at its place, else hands it to
//    the worker to record there (chain_ticket.h).
//  - Drain: the GpuRunner's (chain lists are in flight on its queue);
//    chains left with the worker are recorded before the executor shuts
//    down (GpuEngine::Shutdown, after the scheduler's).
//
// Ownership: borrows both (they must outlive it). Thread-safety: as
// sched::Runner.
#ifndef DMLSERVE_ENGINE_D3D12_ENGINE_RUNNER_H_
#define DMLSERVE_ENGINE_D3D12_ENGINE_RUNNER_H_

#include <functional>

#include "absl/status/statusor.h"
#include "engine/d3d12/gpu_runner.h"
#include "engine/d3d12/resident_executor.h"
#include "engine/sched/runner.h"

namespace dmls::d3d12 {

class EngineRunner final : public sched::Runner {
 public:
  EngineRunner(GpuRunner* gpu, ResidentExecutor* resident)
      : gpu_(gpu), resident_(resident) {}

  absl::StatusOr<sched::Prepared> Prepare(ExecuteRequest& request) override {
    return gpu_->Prepare(request);
  }
  absl::StatusOr<sched::Prepared> PrepareChain(ChainRequest& chain) override;
  bool CanAccept() override { return gpu_->CanAccept(); }
  void Run(sched::Batch batch) override;
  void SetCapacityListener(std::function<void()> listener) override {
    gpu_->SetCapacityListener(std::move(listener));
  }
  void Drain() override { gpu_->Drain(); }

 private:
  GpuRunner* const gpu_;
  ResidentExecutor* const resident_;
};

}  // namespace dmls::d3d12

#endif  // DMLSERVE_ENGINE_D3D12_ENGINE_RUNNER_H_
