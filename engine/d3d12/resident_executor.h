// ResidentExecutor: resident tensors and operator chains on a GpuRunner's
// device (engine/core/resident.h). Buffers are DEFAULT-heap pool buffers
// (so they count against the engine's memory cap); writes and reads go
// through staging buffers of its own; chains are recorded by its
// ChainRecorder (chain_recorder.h) at their place in the call order.
//
// Every command list -- a chain's, and the copies of writes, reads and
// zero-fills -- is recorded into one of the GpuRunner's frames and
// submitted on its queue under its fence (GpuRunner::PlaceList), so the
// queue's order is the call order; the runner's completion thread answers
// chains. Transfers are issued in call order by a worker thread of the
// executor's (they wait for their copies); a chain takes its place in that
// order when it is submitted (ReserveChain) and is recorded once the
// scheduler dispatches it and the worker has reached the place
// (chain_ticket.h). The GpuRunner's batches never touch resident buffers.
//
// Ownership: borrows the runner's device, pool and pipeline cache (the
// runner must outlive it); owns the chain recorder; buffers hold the pool
// buffer until their last user lets go. Thread-safety: every method is thread-safe; transfer
// callbacks run on the worker thread, chain answers on the runner's
// completion thread (or, for errors, the thread that records the chain).
#ifndef DMLSERVE_ENGINE_D3D12_RESIDENT_EXECUTOR_H_
#define DMLSERVE_ENGINE_D3D12_RESIDENT_EXECUTOR_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "engine/core/engine.h"
#include "engine/core/mutex.h"
#include "engine/core/resident.h"
#include "engine/d3d12/buffer_pool.h"
#include "engine/d3d12/chain_recorder.h"
#include "engine/d3d12/chain_ticket.h"
#include "engine/d3d12/gpu_runner.h"
#include "spdlog/logger.h"

namespace dmls::d3d12 {

// The chain recorder's options (binder, cached views) and the staging.
struct ResidentExecutorOptions : ChainRecorderOptions {
  // Bytes of each of the two upload and two readback staging halves: big
  // transfers alternate between the halves, so that the CPU fills one
  // while the GPU copies the other. At most a 32nd of the memory cap.
  uint64_t staging_bytes = uint64_t{16} << 20;
};

// The chain recorder's counters and the buffers' and transfers'.
struct ResidentExecutorStats : ChainRecorderStats {
  uint64_t buffers = 0;        // resident buffers alive
  uint64_t buffer_bytes = 0;   // their pool bytes
  uint64_t writes = 0;
  uint64_t reads = 0;
  uint64_t bytes_written = 0;
  uint64_t bytes_read = 0;
};

class ResidentExecutor {
 public:
  // `engine` is what the buffers report as theirs (the GpuEngine).
  static absl::StatusOr<std::unique_ptr<ResidentExecutor>> Create(
      GpuRunner* runner, Engine* engine, ResidentExecutorOptions options,
      std::shared_ptr<spdlog::logger> logger);
  ~ResidentExecutor();

  // Zero-filled (the clear runs before this returns).
  absl::StatusOr<std::shared_ptr<ResidentBuffer>> Allocate(uint64_t bytes);
  void Write(std::shared_ptr<ResidentBuffer> buffer, uint64_t offset, std::string bytes,
             StatusCallback done);
  void Read(std::shared_ptr<ResidentBuffer> buffer, uint64_t offset, uint64_t length,
            BytesCallback done);
  // A chain's place in call order: the worker records the chain there when
  // the ticket is Run, and skips the place when the ticket is destroyed
  // unrun. The deadline is the scheduler's to check; cancellation and
  // device loss are checked again when the worker reaches the chain.
  absl::StatusOr<std::unique_ptr<ChainTicket>> ReserveChain();
  // ReserveChain and Run at once (no scheduler in front).
  void RunChain(ChainRequest request, ChainCallback done);

  // Runs what is queued, then stops the worker; later calls fail
  // UNAVAILABLE. Idempotent.
  void Shutdown();

  ResidentExecutorStats stats() const;

 private:
  class DeviceBuffer;

  ResidentExecutor(GpuRunner* runner, Engine* engine, ResidentExecutorOptions options,
                   std::shared_ptr<spdlog::logger> logger);
  absl::Status Init();
  // Queues `task` for the worker; false (task not run) after Shutdown.
  bool Post(absl::AnyInvocable<void()> task);
  void WorkerLoop();

  // Places one copy on the runner's queue and returns its fence value
  // (does not wait); `to_device`: dst is the device buffer, else src.
  absl::StatusOr<uint64_t> PlaceCopy(ID3D12Resource* dst, uint64_t dst_offset,
                                     ID3D12Resource* src, uint64_t src_offset,
                                     uint64_t bytes, bool to_device);
  absl::Status DeviceStatus() const;
  // Copies `bytes` into [offset, +size) of `dst` through the upload halves.
  absl::Status Upload(ID3D12Resource* dst, uint64_t offset, const char* bytes,
                      uint64_t size, bool zero);
  absl::Status Download(ID3D12Resource* src, uint64_t offset, uint64_t length,
                        std::string& out);
  static ID3D12Resource* ResourceOf(const ResidentBuffer& buffer);

  GpuRunner* const runner_;
  Engine* const engine_;
  const ResidentExecutorOptions options_;
  const std::shared_ptr<spdlog::logger> log_;

  // Run by one thread at a time: the worker, or the thread that records a
  // chain while the worker waits at its place (chain_ticket.h). A buffer's
  // views are forgotten before it goes back to the pool.
  std::unique_ptr<ChainRecorder> chains_;
  // Worker-thread state.
  PoolBuffer* upload_ = nullptr;    // two halves of staging_bytes
  PoolBuffer* readback_ = nullptr;  // two halves of staging_bytes
  uint64_t half_fence_[2] = {0, 0};  // last use of each upload half
  uint64_t staging_bytes_ = 0;       // options_.staging_bytes, fitted to the cap

  Mutex mu_;
  CondVar cv_;
  std::deque<absl::AnyInvocable<void()>> tasks_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread worker_;

  mutable Mutex stats_mu_;
  ResidentExecutorStats stats_ ABSL_GUARDED_BY(stats_mu_);  // less the recorder's
};

}  // namespace dmls::d3d12

#endif  // DMLSERVE_ENGINE_D3D12_RESIDENT_EXECUTOR_H_
