#include "bench/bench_device.h"

#include <chrono>
#include <cstdint>
#include <cstring>
#include <utility>

#include "engine/d3d12/dxbc_engine.h"
#include "engine/d3d12/hresult.h"

namespace dmls::bench {

absl::Status BenchDevice::Init(const d3d12::DeviceOptions& options) {
  absl::StatusOr<std::unique_ptr<d3d12::Device>> d = d3d12::Device::Create(options);
  if (!d.ok()) return d.status();
  device_ = std::move(*d);
  ID3D12Device* dev = device_->d3d();
  D3D12_COMMAND_QUEUE_DESC qd = {};
  qd.Type = D3D12_COMMAND_LIST_TYPE_DIRECT;
  DMLS_RETURN_IF_FAILED(
      dev->CreateCommandQueue(&qd, DMLS_IID_PPV(ID3D12CommandQueue, queue_.Put())),
      "CreateCommandQueue");
  absl::StatusOr<std::unique_ptr<d3d12::Fence>> fence = d3d12::Fence::Create(dev);
  if (!fence.ok()) return fence.status();
  fence_ = std::move(*fence);
  DMLS_RETURN_IF_FAILED(
      dev->CreateCommandAllocator(D3D12_COMMAND_LIST_TYPE_DIRECT,
                                  DMLS_IID_PPV(ID3D12CommandAllocator, allocator_.Put())),
      "CreateCommandAllocator");
  DMLS_RETURN_IF_FAILED(
      dev->CreateCommandList(0, D3D12_COMMAND_LIST_TYPE_DIRECT, allocator_.get(),
                             nullptr,
                             DMLS_IID_PPV(ID3D12GraphicsCommandList, list_.Put())),
      "CreateCommandList");
  DMLS_RETURN_IF_FAILED(list_->Close(), "Close");
  D3D12_QUERY_HEAP_DESC qh = {};
  qh.Type = D3D12_QUERY_HEAP_TYPE_TIMESTAMP;
  qh.Count = 2;
  DMLS_RETURN_IF_FAILED(
      dev->CreateQueryHeap(&qh, DMLS_IID_PPV(ID3D12QueryHeap, queries_.Put())),
      "CreateQueryHeap");
  DMLS_RETURN_IF_FAILED(queue_->GetTimestampFrequency(&ticks_per_second_),
                        "GetTimestampFrequency");
  pool_ = std::make_unique<d3d12::BufferPool>(dev, d3d12::BufferPoolOptions{});
  absl::StatusOr<d3d12::PoolBuffer*> ts = pool_->Acquire(d3d12::HeapKind::kReadback, 16);
  if (!ts.ok()) return ts.status();
  timestamps_ = *ts;
  absl::StatusOr<std::unique_ptr<d3d12::PipelineCache>> p =
      d3d12::PipelineCache::Create(dev, d3d12::DxbcKernelSource());
  if (!p.ok()) return p.status();
  pipelines_ = std::move(*p);
  d3d12::DispatchBinderOptions bo;
  bo.descriptor_capacity = 1 << 16;
  bo.constant_blocks = 1 << 13;
  absl::StatusOr<std::unique_ptr<d3d12::DispatchBinder>> b =
      d3d12::DispatchBinder::Create(dev, pipelines_.get(), bo);
  if (!b.ok()) return b.status();
  binder_ = std::move(*b);
  return absl::OkStatus();
}

absl::StatusOr<BenchDevice::Timing> BenchDevice::Measure(const Recorder& prologue,
                                                         const Recorder& body) {
  DMLS_RETURN_IF_FAILED(allocator_->Reset(), "allocator Reset");
  DMLS_RETURN_IF_FAILED(list_->Reset(allocator_.get(), nullptr), "list Reset");
  if (prologue) prologue(list_.get());
  list_->EndQuery(queries_.get(), D3D12_QUERY_TYPE_TIMESTAMP, 0);
  body(list_.get());
  list_->EndQuery(queries_.get(), D3D12_QUERY_TYPE_TIMESTAMP, 1);
  list_->ResolveQueryData(queries_.get(), D3D12_QUERY_TYPE_TIMESTAMP, 0, 2,
                          timestamps_->resource.get(), 0);
  DMLS_RETURN_IF_FAILED(list_->Close(), "list Close");
  Timing t;
  for (int run = 0; run < 2; ++run) {
    const auto start = std::chrono::steady_clock::now();
    absl::Status s = ExecuteAndWait();
    if (!s.ok()) return s;
    t.wall_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  uint64_t ts[2];
  std::memcpy(ts, timestamps_->mapped, sizeof(ts));
  t.gpu_seconds = ts[1] > ts[0]
                      ? static_cast<double>(ts[1] - ts[0]) / ticks_per_second_
                      : 0.0;
  return t;
}

absl::Status BenchDevice::ExecuteAndWait() {
  ID3D12CommandList* lists[] = {list_.get()};
  queue_->ExecuteCommandLists(1, lists);
  absl::StatusOr<uint64_t> v = fence_->Signal(queue_.get());
  if (!v.ok()) return v.status();
  return fence_->Wait(*v);
}

absl::Status BenchDevice::RunOnce(const Recorder& body) {
  DMLS_RETURN_IF_FAILED(allocator_->Reset(), "allocator Reset");
  DMLS_RETURN_IF_FAILED(list_->Reset(allocator_.get(), nullptr), "list Reset");
  body(list_.get());
  DMLS_RETURN_IF_FAILED(list_->Close(), "list Close");
  return ExecuteAndWait();
}

}  // namespace dmls::bench
