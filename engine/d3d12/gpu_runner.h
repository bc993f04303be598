// GpuRunner: the Direct3D 12 sched::Runner (engine/sched/runner.h). The
// scheduler in front of it does admission and batching; GpuEngine
// (gpu_engine.h) puts the two together.
//
// Prepare (caller's thread): plans the request, decides its batch key
// (element-wise requests on packed buffers coalesce: planner.h) and stages
// the payload into upload memory, so no tensor copy runs on the submission
// thread.
//
// Run (the scheduler's dispatch thread): places each request's tensors in
// persistent device arenas (arena.h: views made once, kernels get offsets as
// constants), records one command list for the batch -- upload copies,
// kernels level by level with UAV barriers between dependent levels,
// readback copies -- and submits it with the next fence value. A coalesced
// group becomes one dispatch over its requests' concatenated ranges.
// Requests too large for an arena get dedicated pool buffers and views of
// their own (BufferPool), as before arenas.
//
// A completion thread waits for each command list's fence and hands
// outputs back: small ones inline, large ones copied out of readback
// memory on a copy pool, so a 64 MiB result never holds up the 1 KiB
// results behind it.
//
// Device loss: a failed fence wait, a fence completing with UINT64_MAX, a
// failed submission with GetDeviceRemovedReason failing, or FailDevice()
// (testing) mark the runner lost for good. From then on Prepare rejects,
// Run fails whole batches at once, and the completion thread fails batches
// in flight, all with DeviceLostError (UNAVAILABLE, engine.h). A request
// with an on_device_lost hook is handed back first, its payloads copied
// back out of its staged upload memory (kept with the request until its
// result is out), so the caller can run it elsewhere.
//
// When device memory (the cap) or ring space runs out, Run waits for the
// work in flight to finish and retries once; a request that still does not
// fit fails with RESOURCE_EXHAUSTED and the runner carries on.
//
// Ownership: owns the device and everything created on it. Thread-safety:
// as sched::Runner; stats() and device_info() from any thread.
#ifndef DMLSERVE_ENGINE_D3D12_GPU_RUNNER_H_
#define DMLSERVE_ENGINE_D3D12_GPU_RUNNER_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "engine/core/mutex.h"
#include "engine/d3d12/arena.h"
#include "engine/d3d12/buffer_pool.h"
#include "engine/d3d12/device.h"
#include "engine/d3d12/dispatch_binder.h"
#include "engine/d3d12/fence.h"
#include "engine/d3d12/pipeline_cache.h"
#include "engine/plan/plan.h"
#include "engine/sched/runner.h"
#include "engine/sched/thread_pool.h"
#include "spdlog/logger.h"

namespace dmls::d3d12 {

// Builds the DispatchPlan of a validated operator (engine/dxbc's
// PlanExecution in production; injectable for tests).
using Planner =
    std::function<absl::StatusOr<gpu::DispatchPlan>(const OperatorDesc&, bool)>;

// How element-wise requests on packed buffers coalesce into one dispatch
// (engine/plan/coalesce.h in production: DxbcCoalescer; injected, so the
// runtime does not depend on the planner). Both set, or requests never
// coalesce.
struct Coalescer {
  // The batch key of a plan (equal keys: the same function of each 32-bit
  // word); empty when the plan cannot coalesce.
  std::function<std::string(const gpu::DispatchPlan&, bool in_place)> key;
  // The plan of a coalescable plan's kernel over `texels` 16-byte texels
  // from texel 0 of kInput/kOutput.
  std::function<absl::StatusOr<gpu::DispatchPlan>(const gpu::DispatchPlan& like,
                                                  uint64_t texels)>
      span;
};

struct GpuRunnerOptions {
  DeviceOptions device;
  // Bytes of pooled buffers and arenas (GPU, upload and readback together).
  // Unset: half of the adapter's device-local memory, or no cap when that
  // is unknown. 0: no cap.
  std::optional<uint64_t> memory_cap_bytes;
  // Size of one arena (device, upload or readback). At most 512 MiB (one
  // R32 view); clamped to an eighth of the cap so small caps still work.
  uint64_t arena_bytes = uint64_t{256} << 20;
  // Command lists that may be in flight at once.
  uint32_t frames_in_flight = 3;
  // Threads that copy large outputs out of readback memory.
  int copy_threads = 4;
  // Outputs of at least this many bytes are copied out on the copy pool.
  uint64_t parallel_copy_bytes = 256 << 10;
  // Copies (staging and copy-out) of at least this many bytes are split
  // into chunks copied by several threads at once.
  uint64_t split_copy_bytes = 8 << 20;
  // Small completions of one command list are delivered in chunks of this
  // many, spread over the copy pool, so callbacks run in parallel.
  uint32_t completion_chunk = 32;
  DispatchBinderOptions binder;
  // Testing aid: fill each output buffer with 0xFF before the kernels run
  // and check afterwards that the 256 bytes past the output's DWORD-rounded
  // end are still 0xFF (INTERNAL otherwise). Costs an extra upload and
  // turns coalescing off.
  bool poison_outputs = false;
  // Testing aid: never coalesce.
  bool coalesce = true;
  // Required: where kernels and plans come from.
  PipelineCache::DxbcSource kernel_source;
  Planner planner;
  // Optional: coalescing (unset: none).
  Coalescer coalescer;
  std::shared_ptr<spdlog::logger> logger;
};

struct GpuRunnerStats {
  BufferPoolStats pool;
  ArenaSetStats device_arenas;
  ArenaSetStats upload_arenas;
  ArenaSetStats readback_arenas;
  uint64_t batches = 0;             // command lists submitted
  uint64_t requests = 0;            // requests recorded into command lists
  uint64_t dispatches = 0;
  uint64_t largest_batch = 0;       // most requests in one command list
  uint64_t coalesced_groups = 0;    // groups run as one dispatch span
  uint64_t coalesced_requests = 0;  // requests in those groups
  uint64_t dedicated_requests = 0;  // too large for an arena
  // Command lists of resident work (PlaceList: chains, writes, reads,
  // zero-fills), submitted on this runner's queue under its fence.
  uint64_t placed_lists = 0;
  uint64_t views_created = 0;       // typed views created so far
  // Times a request did not fit and the runner drained the work in flight
  // before retrying it.
  uint64_t drains = 0;
  // Requests handed back (on_device_lost) after the device was lost.
  uint64_t handed_back = 0;
  bool device_lost = false;
  uint64_t pipelines = 0;           // PSOs in the cache
  // Fence waits that ended by re-reading the fence, the completion event
  // never having fired (fence.h).
  uint64_t fence_lost_events = 0;
  uint64_t fence_kicks = 0;  // extra signals after a stall (fence.h)
  // Time spent, summed over requests or command lists: staging payloads
  // into upload memory, from submit to the completion thread seeing the
  // fence, and copying outputs out of readback memory.
  uint64_t stage_us = 0;
  uint64_t gpu_us = 0;
  uint64_t copy_out_us = 0;
};

class GpuRunner : public sched::Runner {
 public:
  static absl::StatusOr<std::unique_ptr<GpuRunner>> Create(
      GpuRunnerOptions options);
  ~GpuRunner() override;

  absl::StatusOr<sched::Prepared> Prepare(ExecuteRequest& request) override;
  bool CanAccept() override;
  void Run(sched::Batch batch) override;
  void SetCapacityListener(std::function<void()> listener) override;
  void Drain() override;
  // Drains, then stops the completion thread. Idempotent.
  void Shutdown();

  // The device, with the effective memory cap.
  DeviceInfo device_info() const {
    DeviceInfo info = device_->device_info();
    info.memory_cap_bytes = memory_cap_bytes();
    return info;
  }
  // A snapshot; changes nothing. Buffers and arena ranges retired under a
  // fence value that has completed count as free (they are reclaimed at
  // the start of the next Run).
  GpuRunnerStats stats() const;
  uint64_t memory_cap_bytes() const { return pool_->memory_cap_bytes(); }

  // For the resident-tensor executor (resident_executor.h), which shares
  // the device, the pool (and with it the memory cap) and the kernels.
  ID3D12Device* d3d() const { return device_->d3d(); }
  BufferPool* pool() const { return pool_.get(); }
  PipelineCache* pipelines() const { return pipelines_.get(); }
  const Planner& planner() const { return options_.planner; }
  // Marks the device lost (first cause wins) and wakes the scheduler.
  void MarkLost(const absl::Status& cause);

  // Resident work (resident_executor.h: a chain, or a transfer's copy) on
  // this runner's queue, with its frames, fence and completion thread
  // (gpu_runner_chain.cc): `record` records it into the open command list
  // of a free frame; the list is submitted with the next fence value and
  // is in flight like a batch (Drain and Shutdown wait for it). `done`
  // (when set) runs on the completion thread once that value completes:
  // OK, or the DeviceLostError. Returns the fence value, or why nothing
  // was submitted (`record` failed, the list could not be submitted, or
  // the device is lost; `done` is then dropped uncalled). Thread-safe; may
  // block for a free frame.
  absl::StatusOr<uint64_t> PlaceList(
      absl::FunctionRef<absl::Status(ID3D12GraphicsCommandList*)> record,
      absl::AnyInvocable<void(absl::Status)> done);
  // Blocks until this runner's fence reaches `value` (work placed with
  // PlaceList); a failed wait marks the device lost. Thread-safe.
  absl::Status WaitFence(uint64_t value);
  // The highest fence value completed. Thread-safe.
  uint64_t completed_fence() const { return fence_->completed(); }

  // Whether the device is lost (see above); never turns false again.
  bool lost() const { return lost_.load(); }
  // Testing: behave from now on as if the device had been removed (work in
  // flight included). Thread-safe.
  void FailDevice();

 private:
  struct Frame;
  struct Job;
  struct Recording;
  struct Completion;
  struct InFlight;

  explicit GpuRunner(GpuRunnerOptions options);
  absl::Status Init();

  // Records one coalesced group; false when it could not be placed (the
  // caller then records its jobs one by one).
  bool RecordGroup(std::vector<sched::Job>& group, Recording& rec);
  // Records one job, or fails it.
  void RecordJob(sched::Job& job, Recording& rec, Frame*& frame);
  absl::Status PlaceJob(sched::Job& job, Recording& rec);
  absl::Status PlaceDedicated(sched::Job& job, Recording& rec);
  // Records `rec` into `frame` and submits it. Consumes `rec`.
  void Submit(Frame* frame, Recording& rec);
  void FailRecording(Frame* frame, Recording& rec, const absl::Status& status);
  Frame* AcquireFrame();
  void ReleaseFrame(Frame* frame);
  void WaitIdle();
  bool AnyInFlight();
  void Reclaim();
  void CompletionLoop();
  void Complete(Completion& c);
  // memcpy of `pieces`, in order, to `dst` (a payload's received slices:
  // payload.h), split over the chunk pool when their total is large.
  void Copy(void* dst, absl::Span<const std::string_view> pieces);
  void Copy(void* dst, const void* src, uint64_t bytes) {
    Copy(dst, {std::string_view(static_cast<const char*>(src), bytes)});
  }
  absl::Status lost_status() const;
  // Fails one request of a lost device: restores its payloads from `state`
  // and hands it back when it has an on_device_lost hook, then calls `done`.
  void FailLost(ExecuteRequest& request, std::unique_ptr<sched::JobState>& state,
                sched::JobCallback& done);

  GpuRunnerOptions options_;
  std::shared_ptr<spdlog::logger> log_;
  std::unique_ptr<Device> device_;
  ComPtr<ID3D12CommandQueue> queue_;
  std::unique_ptr<Fence> fence_;
  std::unique_ptr<BufferPool> pool_;
  std::unique_ptr<PipelineCache> pipelines_;
  std::unique_ptr<DispatchBinder> binder_;
  std::unique_ptr<ArenaSet> device_arenas_;
  std::unique_ptr<ArenaSet> upload_arenas_;
  std::unique_ptr<ArenaSet> readback_arenas_;
  std::vector<std::unique_ptr<Frame>> frames_;
  std::unique_ptr<sched::ThreadPool> copy_pool_;
  // Leaf tasks only (chunks of one memcpy): never waits, so callers on any
  // thread, copy_pool_'s included, may wait for it.
  std::unique_ptr<sched::ThreadPool> chunk_pool_;
  std::atomic<uint64_t> stage_us_{0};
  std::atomic<uint64_t> gpu_us_{0};
  std::atomic<uint64_t> copy_out_us_{0};
  uint64_t arena_bytes_ = 0;

  // Submitted command lists (dispatch thread -> completion thread) and free
  // frames (completion thread -> dispatch thread).
  Mutex flight_mu_;
  CondVar flight_cv_;
  std::deque<InFlight> in_flight_ ABSL_GUARDED_BY(flight_mu_);
  std::vector<Frame*> free_frames_ ABSL_GUARDED_BY(flight_mu_);
  size_t batches_in_flight_ ABSL_GUARDED_BY(flight_mu_) = 0;
  bool completion_stopping_ ABSL_GUARDED_BY(flight_mu_) = false;
  std::atomic<size_t> free_frame_count_{0};

  Mutex listener_mu_;
  std::function<void()> listener_ ABSL_GUARDED_BY(listener_mu_);

  mutable Mutex stats_mu_;
  GpuRunnerStats stats_ ABSL_GUARDED_BY(stats_mu_);

  std::atomic<bool> lost_{false};
  mutable Mutex lost_mu_;
  absl::Status lost_status_ ABSL_GUARDED_BY(lost_mu_);

  Mutex shutdown_mu_;
  bool shut_down_ ABSL_GUARDED_BY(shutdown_mu_) = false;
  std::thread completion_thread_;
};

}  // namespace dmls::d3d12

#endif  // DMLSERVE_ENGINE_D3D12_GPU_RUNNER_H_
