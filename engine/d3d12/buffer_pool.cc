#include "engine/d3d12/buffer_pool.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "engine/d3d12/hresult.h"
#include "engine/d3d12/objects.h"

namespace dmls::d3d12 {

BufferPool::BufferPool(ID3D12Device* device, BufferPoolOptions options)
    : device_(device), options_(options) {}

BufferPool::~BufferPool() = default;

uint64_t BufferPool::SizeClass(uint64_t bytes) {
  if (bytes <= kMinSize) return kMinSize;
  uint64_t p = kMinSize;
  while (p * 2 <= bytes) p *= 2;
  if (p == bytes) return p;
  const uint64_t step = p / 4;
  return (bytes + step - 1) / step * step;
}

absl::StatusOr<std::unique_ptr<PoolBuffer>> BufferPool::CreateBuffer(
    HeapKind kind, uint64_t size) {
  D3D12_HEAP_PROPERTIES heap = {};
  D3D12_RESOURCE_STATES state = D3D12_RESOURCE_STATE_COMMON;
  D3D12_RESOURCE_FLAGS flags = D3D12_RESOURCE_FLAG_NONE;
  switch (kind) {
    case HeapKind::kDefault:
      heap.Type = D3D12_HEAP_TYPE_DEFAULT;
      flags = D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS;
      break;
    case HeapKind::kUpload:
      heap.Type = D3D12_HEAP_TYPE_UPLOAD;
      state = D3D12_RESOURCE_STATE_GENERIC_READ;
      break;
    case HeapKind::kReadback:
      heap.Type = D3D12_HEAP_TYPE_READBACK;
      state = D3D12_RESOURCE_STATE_COPY_DEST;
      break;
  }
  const D3D12_RESOURCE_DESC desc = BufferDesc(size, flags);

  auto buffer = std::make_unique<PoolBuffer>();
  buffer->kind = kind;
  buffer->size = size;
  DMLS_RETURN_IF_FAILED(
      device_->CreateCommittedResource(
          &heap, D3D12_HEAP_FLAG_NONE, &desc, state, nullptr,
          DMLS_IID_PPV(ID3D12Resource, buffer->resource.Put())),
      absl::StrCat("CreateCommittedResource(", size, " bytes)"));
  buffer->gpu_va = buffer->resource->GetGPUVirtualAddress();
  if (kind != HeapKind::kDefault) {
    // Persistently mapped: legal for UPLOAD/READBACK and saves a Map per use.
    void* p = nullptr;
    D3D12_RANGE read_none = {0, 0};
    DMLS_RETURN_IF_FAILED(
        buffer->resource->Map(0, kind == HeapKind::kUpload ? &read_none : nullptr,
                              &p),
        "ID3D12Resource::Map");
    buffer->mapped = static_cast<uint8_t*>(p);
  }
  return buffer;
}

bool BufferPool::TrimToFit(uint64_t needed) {
  const uint64_t cap = options_.memory_cap_bytes;
  if (cap == 0) return true;
  if (needed > cap) return false;
  // Destroy idle buffers, largest classes first (they free the most memory
  // per lost reuse), until the new buffer fits.
  for (auto it = free_.rbegin();
       it != free_.rend() && stats_.bytes_live + needed > cap; ++it) {
    std::vector<PoolBuffer*>& list = it->second;
    while (!list.empty() && stats_.bytes_live + needed > cap) {
      PoolBuffer* b = list.back();
      list.pop_back();
      stats_.bytes_live -= b->size;
      ++stats_.resources_destroyed;
      all_.erase(b);
    }
  }
  return stats_.bytes_live + needed <= cap;
}

void BufferPool::ReclaimLocked(uint64_t completed_fence) {
  last_completed_ = std::max(last_completed_, completed_fence);
  const uint64_t done = last_completed_;
  auto keep = std::partition(retired_.begin(), retired_.end(),
                             [done](PoolBuffer* b) {
                               return b->retire_fence > done;
                             });
  for (auto it = keep; it != retired_.end(); ++it) {
    PoolBuffer* b = *it;
    stats_.bytes_in_use -= b->size;
    free_[{b->kind, b->size}].push_back(b);
  }
  retired_.erase(keep, retired_.end());
}

absl::StatusOr<PoolBuffer*> BufferPool::Acquire(HeapKind kind,
                                                uint64_t bytes) {
  const uint64_t size = SizeClass(std::max<uint64_t>(bytes, 1));
  MutexLock lock(&mu_);
  ++stats_.acquires;
  std::vector<PoolBuffer*>& list = free_[{kind, size}];
  if (!list.empty()) {
    PoolBuffer* b = list.back();
    list.pop_back();
    ++stats_.reuses;
    stats_.bytes_in_use += b->size;
    return b;
  }
  if (!TrimToFit(size)) {
    ++stats_.cap_rejections;
    return absl::ResourceExhaustedError(absl::StrCat(
        "GPU memory cap reached: a ", size, "-byte buffer does not fit (",
        stats_.bytes_in_use, " of ", options_.memory_cap_bytes,
        " bytes in use)"));
  }
  // Creation under the lock keeps the cap exact; it is rare by design.
  absl::StatusOr<std::unique_ptr<PoolBuffer>> created = CreateBuffer(kind, size);
  if (!created.ok()) {
    if (absl::IsResourceExhausted(created.status())) ++stats_.cap_rejections;
    return created.status();
  }
  PoolBuffer* b = created->get();
  all_.emplace(b, std::move(*created));
  ++stats_.resources_created;
  stats_.bytes_live += size;
  stats_.bytes_in_use += size;
  return b;
}

void BufferPool::Release(PoolBuffer* buffer, uint64_t fence_value) {
  MutexLock lock(&mu_);
  buffer->retire_fence = fence_value;
  retired_.push_back(buffer);
  ReclaimLocked(last_completed_);
}

void BufferPool::Reclaim(uint64_t completed_fence) {
  MutexLock lock(&mu_);
  ReclaimLocked(completed_fence);
}

BufferPoolStats BufferPool::stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

BufferPoolStats BufferPool::stats(uint64_t completed_fence) const {
  MutexLock lock(&mu_);
  BufferPoolStats s = stats_;
  for (const PoolBuffer* b : retired_) {
    if (b->retire_fence <= completed_fence) s.bytes_in_use -= b->size;
  }
  return s;
}

}  // namespace dmls::d3d12
