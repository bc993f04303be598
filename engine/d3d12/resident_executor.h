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
// chains. The call order is the scheduler's: transfers are queued in its
// chain lane (OrderedQueue: Scheduler::SubmitOrdered), FIFO with the
// chains, and the scheduler's dispatch thread runs both when they reach the
// front (EngineRunner::Run: RunTransfer, RunChain), so transfers wait
// behind the runner's frames in flight like chains. The GpuRunner's batches
// never touch resident buffers.
//
// Writes of up to a staging half (a chunk) are copied into upload memory of
// their own on the caller's thread; the dispatch thread records the copy
// and the completion thread answers. Larger ones go through the upload
// halves on the dispatch thread, with its fence waits.
//
// Reads: the dispatch thread only records the copies into the readback
// staging halves and submits them; the runner's completion thread copies
// each half out into the caller's memory (ReadInto) once its fence is
// reached and answers. The dispatch thread waits only when both halves are
// still to be copied out (a read longer than two halves).
//
// Ownership: borrows the runner's device, pool and pipeline cache (the
// runner must outlive it); owns the chain recorder; buffers hold the pool
// buffer until their last user lets go. Thread-safety: Allocate, Write,
// Read, ReadInto and stats are thread-safe; RunChain and
// ResidentTransfer::Run are called by one thread at a time (the dispatch
// thread). Zero-fill and large writes' callbacks run on the dispatch
// thread, other writes', reads' and chain answers on the runner's
// completion thread (or, for errors and empty reads, the dispatch thread), and for queue errors any
// of them on the scheduler's caller. Allocate does not wait for its
// zero-fill (it is queued ahead of the buffer's every use), so it may be
// called from any thread.
#ifndef DMLSERVE_ENGINE_D3D12_RESIDENT_EXECUTOR_H_
#define DMLSERVE_ENGINE_D3D12_RESIDENT_EXECUTOR_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "engine/core/engine.h"
#include "engine/core/mutex.h"
#include "engine/core/resident.h"
#include "engine/d3d12/buffer_pool.h"
#include "engine/d3d12/chain_recorder.h"
#include "engine/d3d12/gpu_runner.h"
#include "engine/sched/job.h"
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
  // Read bytes copied out of the readback halves by the dispatch thread (0:
  // they are copied on the completion thread).
  uint64_t bytes_read_on_dispatch = 0;
  // Written bytes copied into the upload halves by the dispatch thread:
  // writes larger than a half, or that the pool had no memory for (others
  // are copied on the caller's thread).
  uint64_t bytes_written_on_dispatch = 0;
};

// A transfer (a write, a read, a zero-fill) waiting in the scheduler's
// chain lane as a chain job's state; run on the dispatch thread when it
// reaches the front. It answers the job's callback once, there or later on
// another thread (a read: on the completion thread); the ChainResult has no
// outputs.
class ResidentTransfer final : public sched::JobState {
 public:
  using Task = absl::AnyInvocable<void(ChainCallback done)>;
  explicit ResidentTransfer(Task task) : task_(std::move(task)) {}
  void Run(ChainCallback done) { task_(std::move(done)); }

 private:
  Task task_;
};

// Queues a transfer in call order with the chains (Scheduler::SubmitOrdered).
using OrderedQueue =
    std::function<void(std::unique_ptr<sched::JobState>, ChainCallback)>;

class ResidentExecutor {
 public:
  // `engine` is what the buffers report as theirs (the GpuEngine).
  static absl::StatusOr<std::unique_ptr<ResidentExecutor>> Create(
      GpuRunner* runner, Engine* engine, ResidentExecutorOptions options, OrderedQueue queue,
      std::shared_ptr<spdlog::logger> logger);
  ~ResidentExecutor();

  // Zero-filled: the clear is queued in the chain lane ahead of every use of
  // the buffer and runs on the dispatch thread; this does not wait for it.
  // A clear refused at once (queue full, shutting down) is this call's
  // error; one that fails later (device lost) makes every use of the
  // buffer INTERNAL.
  absl::StatusOr<std::shared_ptr<ResidentBuffer>> Allocate(uint64_t bytes);
  void Write(std::shared_ptr<ResidentBuffer> buffer, uint64_t offset, std::string bytes,
             StatusCallback done);
  // Into the caller's memory, which it keeps until `done` (Engine::ReadResidentInto).
  void ReadInto(std::shared_ptr<ResidentBuffer> buffer, uint64_t offset, absl::Span<char> into,
                StatusCallback done);
  // Records and submits a chain the scheduler dispatched (ChainRecorder::Run);
  // cancellation and device loss are checked again here.
  void RunChain(ChainRequest request, ChainCallback done);

  // Waits for the chains in flight (after the scheduler's Shutdown, which
  // runs or fails whatever it holds and refuses the rest). Idempotent.
  void Shutdown();

  ResidentExecutorStats stats() const;

 private:
  class DeviceBuffer;
  class PendingTransfer;

  ResidentExecutor(GpuRunner* runner, Engine* engine, ResidentExecutorOptions options,
                   OrderedQueue queue, std::shared_ptr<spdlog::logger> logger);
  absl::Status Init();
  // Queues `task` (which answers its ChainCallback once); `done` gets its status.
  void Queue(ResidentTransfer::Task task, StatusCallback done);
  // Queues `task`, run and answered on the dispatch thread.
  void QueueInline(absl::AnyInvocable<absl::Status()> task, StatusCallback done);

  // Places one copy on the runner's queue and returns its fence value
  // (does not wait); `to_device`: dst is the device buffer, else src.
  // `done` as GpuRunner::PlaceList's (on the completion thread).
  absl::StatusOr<uint64_t> PlaceCopy(ID3D12Resource* dst, uint64_t dst_offset,
                                     ID3D12Resource* src, uint64_t src_offset,
                                     uint64_t bytes, bool to_device,
                                     absl::AnyInvocable<void(absl::Status)> done = nullptr);
  absl::Status DeviceStatus() const;
  // Copies `bytes` into [offset, +size) of `dst` through the upload halves.
  absl::Status Upload(ID3D12Resource* dst, uint64_t offset, const char* bytes,
                      uint64_t size, bool zero);
  // Places the copies of [offset, +into.size()) of `src` through the
  // readback halves; each half is copied out into `into` on the completion
  // thread, and `read` answers after the last (dispatch thread).
  void Download(ID3D12Resource* src, uint64_t offset, absl::Span<char> into,
                const std::shared_ptr<PendingTransfer>& read);
  // Half `h` is copied out (completion thread).
  void FreeReadbackHalf(int h);
  static ID3D12Resource* ResourceOf(const ResidentBuffer& buffer);
  // The buffer's device range, on the dispatch thread: INTERNAL for one of
  // another engine, or one whose clear has not succeeded (DeviceBuffer).
  static absl::StatusOr<DeviceRange> UsableRange(const ResidentBuffer& buffer);

  GpuRunner* const runner_;
  Engine* const engine_;
  const ResidentExecutorOptions options_;
  const OrderedQueue queue_;
  const std::shared_ptr<spdlog::logger> log_;

  // Run by the dispatch thread. A buffer's views are forgotten before it
  // goes back to the pool.
  std::unique_ptr<ChainRecorder> chains_;
  // Dispatch-thread state (transfers).
  PoolBuffer* upload_ = nullptr;    // two halves of staging_bytes
  PoolBuffer* readback_ = nullptr;  // two halves of staging_bytes
  uint64_t half_fence_[2] = {0, 0};  // last use of each upload half
  uint64_t staging_bytes_ = 0;       // options_.staging_bytes, fitted to the cap
  int next_readback_half_ = 0;

  // A readback half is busy from its copy's placement until the completion
  // thread has copied it out.
  Mutex readback_mu_;
  CondVar readback_cv_;
  bool readback_busy_[2] ABSL_GUARDED_BY(readback_mu_) = {false, false};

  mutable Mutex stats_mu_;
  ResidentExecutorStats stats_ ABSL_GUARDED_BY(stats_mu_);  // less the recorder's
};

}  // namespace dmls::d3d12

#endif  // DMLSERVE_ENGINE_D3D12_RESIDENT_EXECUTOR_H_
