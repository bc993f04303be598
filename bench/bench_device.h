// BenchDevice: the D3D12 objects one dmls_bench measurement needs (a queue
// with its fence, one command list, a timestamp query pair, a buffer pool,
// the kernels' pipelines and a dispatch binder), and the timing of a
// recorded command list on them. Owns all of it; one thread at a time.
#ifndef DMLSERVE_BENCH_BENCH_DEVICE_H_
#define DMLSERVE_BENCH_BENCH_DEVICE_H_

#include <functional>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/d3d12/buffer_pool.h"
#include "engine/d3d12/com_ptr.h"
#include "engine/d3d12/device.h"
#include "engine/d3d12/dispatch_binder.h"
#include "engine/d3d12/fence.h"
#include "engine/d3d12/objects.h"
#include "engine/d3d12/pipeline_cache.h"
#include "engine/d3d12/platform.h"

namespace dmls::bench {

class BenchDevice {
 public:
  // Records into the one command list.
  using Recorder = std::function<void(ID3D12GraphicsCommandList*)>;

  absl::Status Init(const d3d12::DeviceOptions& options);

  struct Timing {
    double gpu_seconds = 0;   // between the two timestamps
    double wall_seconds = 0;  // ExecuteCommandLists + fence wait
  };

  // Records `prologue` (may be empty) and then `body` between two
  // timestamps; runs the list once to warm up and once timed.
  absl::StatusOr<Timing> Measure(const Recorder& prologue, const Recorder& body);

  // Submits the recorded list and waits for its fence value.
  absl::Status ExecuteAndWait();

  // Records and runs `body` once, untimed.
  absl::Status RunOnce(const Recorder& body);

  const d3d12::Device& device() const { return *device_; }
  d3d12::BufferPool& pool() { return *pool_; }
  d3d12::DispatchBinder& binder() { return *binder_; }
  d3d12::Fence& fence() { return *fence_; }

 private:
  std::unique_ptr<d3d12::Device> device_;
  d3d12::ComPtr<ID3D12CommandQueue> queue_;
  std::unique_ptr<d3d12::Fence> fence_;
  d3d12::ComPtr<ID3D12CommandAllocator> allocator_;
  d3d12::ComPtr<ID3D12GraphicsCommandList> list_;
  d3d12::ComPtr<ID3D12QueryHeap> queries_;
  UINT64 ticks_per_second_ = 1;
  std::unique_ptr<d3d12::BufferPool> pool_;
  d3d12::PoolBuffer* timestamps_ = nullptr;
  std::unique_ptr<d3d12::PipelineCache> pipelines_;
  std::unique_ptr<d3d12::DispatchBinder> binder_;
};

}  // namespace dmls::bench

#endif  // DMLSERVE_BENCH_BENCH_DEVICE_H_
