// BufferPool: persistent D3D12 buffers in size classes, reused across
// requests so that steady-state traffic creates no D3D12 resources.
//
// Three pools share one memory cap: DEFAULT (GPU memory, UAV-capable),
// UPLOAD (CPU-written, persistently mapped) and READBACK (CPU-read,
// persistently mapped). A buffer handed back with Release() is "retired"
// until the fence value it was last used under completes; Reclaim() then
// makes it free again. When a new buffer would exceed the cap the pool
// first destroys idle (free) buffers of any class; if that is not enough the
// caller gets RESOURCE_EXHAUSTED and nothing else changes.
//
// Size classes: 64 KiB minimum, then four classes per power of two
// (p, 1.25p, 1.5p, 1.75p), so a buffer wastes at most 25% of its size while
// requests of similar sizes still share buffers.
//
// Ownership: the pool owns every buffer; PoolBuffer pointers stay valid until
// the pool is destroyed or the buffer is trimmed while free (never while
// acquired or retired). Thread-safety: all methods are thread-safe.
#ifndef DMLSERVE_ENGINE_D3D12_BUFFER_POOL_H_
#define DMLSERVE_ENGINE_D3D12_BUFFER_POOL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/core/mutex.h"
#include "engine/d3d12/com_ptr.h"
#include "engine/d3d12/platform.h"

namespace dmls::d3d12 {

enum class HeapKind : uint8_t { kDefault = 0, kUpload = 1, kReadback = 2 };

struct PoolBuffer {
  ComPtr<ID3D12Resource> resource;
  HeapKind kind = HeapKind::kDefault;
  uint64_t size = 0;              // the size class, >= the bytes asked for
  uint8_t* mapped = nullptr;      // UPLOAD/READBACK: persistent CPU mapping
  D3D12_GPU_VIRTUAL_ADDRESS gpu_va = 0;
  uint64_t retire_fence = 0;      // valid while retired
};

struct BufferPoolOptions {
  // Total bytes of all pooled buffers (all three heaps, free ones included).
  // 0 means no cap.
  uint64_t memory_cap_bytes = 0;
};

struct BufferPoolStats {
  uint64_t resources_created = 0;    // CreateCommittedResource calls that succeeded
  uint64_t resources_destroyed = 0;  // idle buffers trimmed to fit the cap
  uint64_t acquires = 0;
  uint64_t reuses = 0;               // acquires served from a free list
  uint64_t cap_rejections = 0;       // RESOURCE_EXHAUSTED answers
  uint64_t bytes_live = 0;           // all pooled buffers
  uint64_t bytes_in_use = 0;         // acquired or retired
};

class BufferPool {
 public:
  // `device` must outlive the pool.
  BufferPool(ID3D12Device* device, BufferPoolOptions options);
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // A buffer of at least `bytes` (> 0). DEFAULT buffers are created in the
  // COMMON state, UPLOAD in GENERIC_READ, READBACK in COPY_DEST.
  absl::StatusOr<PoolBuffer*> Acquire(HeapKind kind, uint64_t bytes);
  // Hands `buffer` back; it is reused only after `fence_value` completed
  // (0: at once, e.g. when it was never submitted).
  void Release(PoolBuffer* buffer, uint64_t fence_value);
  // Frees every retired buffer whose fence value is <= `completed_fence`.
  void Reclaim(uint64_t completed_fence);

  BufferPoolStats stats() const;
  // As stats(), with the buffers retired under fence values <=
  // `completed_fence` counted as free, as Reclaim(completed_fence) would
  // make them. Reclaims nothing.
  BufferPoolStats stats(uint64_t completed_fence) const;
  uint64_t memory_cap_bytes() const { return options_.memory_cap_bytes; }

  // The size class that serves `bytes`.
  static uint64_t SizeClass(uint64_t bytes);
  static constexpr uint64_t kMinSize = 64 * 1024;

 private:
  using ClassKey = std::pair<HeapKind, uint64_t>;

  absl::StatusOr<std::unique_ptr<PoolBuffer>> CreateBuffer(HeapKind kind,
                                                           uint64_t size);
  // Destroys free buffers until `needed` more bytes fit under the cap.
  bool TrimToFit(uint64_t needed) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ReclaimLocked(uint64_t completed_fence) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  ID3D12Device* const device_;
  const BufferPoolOptions options_;

  mutable Mutex mu_;
  std::map<PoolBuffer*, std::unique_ptr<PoolBuffer>> all_ ABSL_GUARDED_BY(mu_);
  std::map<ClassKey, std::vector<PoolBuffer*>> free_ ABSL_GUARDED_BY(mu_);
  std::vector<PoolBuffer*> retired_ ABSL_GUARDED_BY(mu_);
  uint64_t last_completed_ ABSL_GUARDED_BY(mu_) = 0;
  BufferPoolStats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace dmls::d3d12

#endif  // DMLSERVE_ENGINE_D3D12_BUFFER_POOL_H_
