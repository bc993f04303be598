// EngineRunner: the sched::Runner behind GpuEngine's scheduler
// (gpu_engine.h). Plain requests go to the GpuRunner (gpu_runner.h),
// resident chains and transfers to the ResidentExecutor
// (resident_executor.h), so that all are queued, expired and batched by the
// one scheduler (chains admitted too), in one call order.
//
//  - Prepare: GpuRunner::Prepare.
//  - PrepareChain: the chain's bytes; no state, and its key is never
//    coalesced (the scheduler's chain lane keeps the call order).
//  - CanAccept: the GpuRunner's (a chain waits behind the runner's frames
//    in flight like a plain request).
//  - Run, on the scheduler's dispatch thread: the chain lane's jobs in
//    submission order -- a resident transfer (ResidentTransfer, queued by
//    Scheduler::SubmitOrdered) is run here and answered here (a read: on the
//    GpuRunner's completion thread once copied out), a chain recorded
//    into the GpuRunner's frames (ResidentExecutor::RunChain,
//    GpuRunner::PlaceList) -- then the plain groups of the batch go to
//    GpuRunner::Run as one batch.
//  - Drain: the GpuRunner's (chain lists are in flight on its queue).
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
