// GpuEngine: the Direct3D 12 implementation of dmls::Engine.
//
// Execute() only queues the request. One submission thread drains the queue
// and records many requests into one command list (batching is where small
// requests win: a submit + fence wait costs ~40 us, a dispatch inside a list
// ~4.5 us, DESIGN.md §3). Per batch it records, in phases: upload copies,
// one barrier batch, every request's dispatches, one barrier batch, readback
// copies; then it signals the engine's single fence with the next value.
// A completion thread waits for each batch's fence value, copies outputs out
// of the readback buffers and runs the callbacks. Several command lists may
// be in flight, so recording overlaps GPU execution.
//
// Buffers come from a BufferPool (no D3D12 resource is created in steady
// state) and retire by fence value; constant blocks and descriptors come
// from fence-recycled rings (DispatchBinder); PSOs from a PipelineCache.
// When the memory cap would be exceeded the engine waits for work in flight
// to drain and retries once; if the request still does not fit it fails with
// RESOURCE_EXHAUSTED and the engine carries on.
//
// Ownership: owns the device and everything created on it. Thread-safety:
// Execute, stats, device_info and Shutdown may be called from any thread,
// except that a completion callback must not call Shutdown (callbacks run
// on the completion thread, which Shutdown joins); callbacks may call
// Execute. Callbacks should be short: the next batch's results wait for
// them.
#ifndef DMLSERVE_ENGINE_D3D12_GPU_ENGINE_H_
#define DMLSERVE_ENGINE_D3D12_GPU_ENGINE_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/core/engine.h"
#include "engine/d3d12/buffer_pool.h"
#include "engine/d3d12/device.h"
#include "engine/d3d12/dispatch_binder.h"
#include "engine/d3d12/fence.h"
#include "engine/d3d12/pipeline_cache.h"
#include "engine/dxbc/plan.h"
#include "spdlog/logger.h"

namespace dmls::d3d12 {

// Builds the DispatchPlan of a validated operator (engine/dxbc's
// PlanExecution in production; injectable for tests).
using Planner =
    std::function<absl::StatusOr<gpu::DispatchPlan>(const OperatorDesc&, bool)>;

struct GpuEngineOptions {
  DeviceOptions device;
  // Bytes of pooled buffers (GPU, upload and readback together). 0: half of
  // the adapter's device-local memory, or no cap when that is unknown. A
  // request holds about four times its tensor size while in flight (upload,
  // input, output, readback; three in place), rounded up to size classes.
  uint64_t memory_cap_bytes = 0;
  // Most requests recorded into one command list.
  uint32_t max_batch_requests = 64;
  // Command lists that may be in flight at once.
  uint32_t frames_in_flight = 3;
  DispatchBinderOptions binder;
  // Testing aid: fill each output buffer with 0xFF before the kernels run
  // and check afterwards that the 256 bytes past the output's DWORD-rounded
  // end are still 0xFF (INTERNAL otherwise). Costs an extra upload.
  bool poison_outputs = false;
  // Required: where kernels and plans come from (dxbc_engine.h fills these
  // with engine/dxbc's generator and planner).
  PipelineCache::DxbcSource kernel_source;
  Planner planner;
  // Named logger; null means spdlog's default logger.
  std::shared_ptr<spdlog::logger> logger;
};

struct GpuEngineStats {
  BufferPoolStats pool;
  uint64_t batches = 0;           // command lists submitted
  uint64_t requests = 0;          // requests recorded into command lists
  uint64_t dispatches = 0;
  uint64_t largest_batch = 0;     // most requests in one command list
  // Times a request did not fit (memory cap or rings) and the engine drained
  // the work in flight before retrying it.
  uint64_t drains = 0;
  uint64_t pipelines = 0;         // PSOs in the cache
};

class GpuEngine : public Engine {
 public:
  static absl::StatusOr<std::unique_ptr<GpuEngine>> Create(
      GpuEngineOptions options);
  ~GpuEngine() override;

  DeviceInfo device_info() const override { return device_->device_info(); }
  void Execute(ExecuteRequest request, ExecuteCallback done) override;
  void Shutdown() override;

  // Counters; buffers of completed work show as free.
  GpuEngineStats stats() const;
  uint64_t memory_cap_bytes() const { return pool_->memory_cap_bytes(); }

 private:
  struct Frame;
  struct Pending;
  struct Prepared;
  struct InFlight;

  explicit GpuEngine(GpuEngineOptions options);
  absl::Status Init();

  void SubmissionLoop();
  void CompletionLoop();
  // Plans one request, acquires its buffers and ring space, fills its
  // upload buffer. On failure nothing stays acquired.
  absl::StatusOr<Prepared> Prepare(const ExecuteRequest& request);
  // Records and submits `batch` (emptied on return).
  void Submit(std::vector<Prepared>& batch);
  void RecordBatch(ID3D12GraphicsCommandList* list,
                   const std::vector<Prepared>& batch);
  // Blocks until every submitted batch has been completed.
  void WaitIdle();
  void Reclaim();

  GpuEngineOptions options_;
  std::shared_ptr<spdlog::logger> log_;
  std::unique_ptr<Device> device_;
  ComPtr<ID3D12CommandQueue> queue_;
  std::unique_ptr<Fence> fence_;
  std::unique_ptr<BufferPool> pool_;
  std::unique_ptr<PipelineCache> pipelines_;
  std::unique_ptr<DispatchBinder> binder_;
  std::vector<std::unique_ptr<Frame>> frames_;

  // Request queue (Execute -> submission thread).
  std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::deque<Pending> pending_;
  bool stopping_ = false;

  // Submitted batches (submission thread -> completion thread) and free
  // command lists (completion thread -> submission thread).
  std::mutex flight_mu_;
  std::condition_variable flight_cv_;
  std::deque<InFlight> in_flight_;
  std::vector<Frame*> free_frames_;
  size_t batches_in_flight_ = 0;
  bool completion_stopping_ = false;

  mutable std::mutex stats_mu_;
  GpuEngineStats stats_;

  std::mutex shutdown_mu_;
  std::thread submission_thread_;
  std::thread completion_thread_;
};

}  // namespace dmls::d3d12

#endif  // DMLSERVE_ENGINE_D3D12_GPU_ENGINE_H_
