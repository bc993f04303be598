// ChainRecorder: records a resident chain (engine/core/resident.h) into one
// command list in a frame of the GpuRunner's and submits it on the runner's
// queue under its fence (GpuRunner::PlaceList): inline inputs uploaded,
// each step's kernels, barriers between steps, copies into resident outputs
// and readbacks of returned outputs right after the step that makes them,
// so intermediates never leave the device. The runner's completion thread
// answers the chain once its list completes.
//
// Views are copies of whole-buffer views cached per buffer (view_cache.h),
// so a chain over buffers seen before creates none; device temporaries of
// chains are kept for reuse (their views with them) up to an eighth of the
// memory cap (at most 1 GiB).
//
// Ownership: borrows the runner's device, pool and pipeline cache (the
// runner must outlive it, and must be drained before it goes: chains in
// flight call back into it); owns the binder, the view cache and the free
// temporaries. Thread-safety: Run is called by one thread at a time (the
// thread that keeps the resident call order: resident_executor.h); Forget
// and stats from any thread. Chains are answered on the runner's completion
// thread, or with an error on the thread that calls Run.
#ifndef DMLSERVE_ENGINE_D3D12_CHAIN_RECORDER_H_
#define DMLSERVE_ENGINE_D3D12_CHAIN_RECORDER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <tuple>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engine/core/mutex.h"
#include "engine/core/resident.h"
#include "engine/d3d12/buffer_pool.h"
#include "engine/d3d12/chain_temps.h"
#include "engine/d3d12/dispatch_binder.h"
#include "engine/d3d12/gpu_runner.h"
#include "engine/d3d12/view_cache.h"

namespace dmls::d3d12 {

struct ChainRecorderOptions {
  // Ring descriptors (5 per dispatch), no persistent ones, constant blocks.
  DispatchBinderOptions binder{16384, 0, 8192};
  // Whole-buffer views kept for reuse (5 formats at most per buffer).
  uint32_t cached_views = 16384;
};

struct ChainRecorderStats {
  uint64_t chains = 0;
  uint64_t chain_steps = 0;
  // Time chains spent being recorded (planning, binding, recording) and
  // waiting for the device, summed; typed views created for them.
  uint64_t chain_record_us = 0;
  uint64_t chain_wait_us = 0;
  // Recording time by phase (parts of chain_record_us): planning each step
  // and finding its buffers, binding its views and constants, its resource
  // barriers, and its pipeline / root arguments / Dispatch calls.
  uint64_t chain_plan_us = 0;
  uint64_t chain_bind_us = 0;
  uint64_t chain_barrier_us = 0;
  uint64_t chain_dispatch_us = 0;
  uint64_t views_created = 0;
};

// A resident buffer's device memory: its resource and usable bytes.
struct DeviceRange {
  ID3D12Resource* resource = nullptr;
  uint64_t bytes = 0;
};
// A resident buffer's range, or INTERNAL for one that is not of this device
// or may not be used (ResidentExecutor: not cleared). Dispatch thread.
using BufferResolver = std::function<absl::StatusOr<DeviceRange>(const ResidentBuffer&)>;

class ChainRecorder {
 public:
  static absl::StatusOr<std::unique_ptr<ChainRecorder>> Create(GpuRunner* runner,
                                                              ChainRecorderOptions options,
                                                              BufferResolver resolve);
  // Gives the free temporaries back to the pool.
  ~ChainRecorder();
  ChainRecorder(const ChainRecorder&) = delete;
  ChainRecorder& operator=(const ChainRecorder&) = delete;

  // Records and submits `request`, or answers it with an error (cancelled,
  // device lost, planning, memory). Every resident buffer it names must
  // resolve (else the resolver's error).
  void Run(ChainRequest request, ChainCallback done);

  // Forgets the cached views of `buffer`, which is going back to the pool.
  void Forget(ID3D12Resource* buffer) { views_->Forget(buffer); }

  ChainRecorderStats stats() const;

 private:
  struct InFlightChain;

  ChainRecorder(GpuRunner* runner, BufferResolver resolve)
      : runner_(runner), resolve_(std::move(resolve)) {}
  // Records `request` into a frame of the runner's and submits it; on
  // success `done` has moved to the runner's completion thread.
  absl::Status Record(ChainRequest& request, ChainCallback& done);
  // Answers a chain whose list completed (`s`: OK or the device loss).
  void Complete(InFlightChain& c, const absl::Status& s);
  absl::StatusOr<std::vector<BoundDispatch>> BindStep(const gpu::DispatchPlan& plan,
                                                      const SlotBuffers& slots);
  absl::StatusOr<PoolBuffer*> AcquireTemp(uint64_t bytes);
  void KeepTemps(const std::vector<PoolBuffer*>& temps);
  // Gives free temporaries back to the pool until at most `keep_bytes`
  // remain.
  void DropTemps(uint64_t keep_bytes);

  GpuRunner* const runner_;
  const BufferResolver resolve_;
  // Used by the thread that calls Run; fence values are the runner's.
  std::unique_ptr<DispatchBinder> binder_;
  std::unique_ptr<ViewCache> views_;

  Mutex temps_mu_;
  FreeTemps free_temps_ ABSL_GUARDED_BY(temps_mu_);
  uint64_t free_temp_bytes_ ABSL_GUARDED_BY(temps_mu_) = 0;
  uint64_t max_free_temp_bytes_ = uint64_t{1} << 30;

  // A chain submitted and not yet answered: what must live until its
  // fence completes.
  struct InFlightChain {
    absl::Time submitted;
    ChainRequest request;  // holds its resident buffers
    ChainCallback done;
    size_t steps = 0;
    PoolBuffer* readback = nullptr;  // in temps
    std::vector<std::tuple<size_t, uint64_t, uint64_t>> returned;  // step, offset, bytes
    std::vector<PoolBuffer*> temps;         // back to the pool
    std::vector<PoolBuffer*> device_temps;  // back to free_temps_
  };

  mutable Mutex stats_mu_;
  ChainRecorderStats stats_ ABSL_GUARDED_BY(stats_mu_);
};

}  // namespace dmls::d3d12

#endif  // DMLSERVE_ENGINE_D3D12_CHAIN_RECORDER_H_
