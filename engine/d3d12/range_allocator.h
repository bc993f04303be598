// RangeAllocator: hands out aligned byte ranges of one fixed-size region (a
// persistent GPU arena, see arena.h) and takes them back, at once or once a
// fence value has completed. First fit over an ordered free list with
// neighbours merged on free; bookkeeping only, the memory lives elsewhere.
//
// Thread-safety: thread-safe (callers allocate from request threads and free
// from the completion thread).
#ifndef DMLSERVE_ENGINE_D3D12_RANGE_ALLOCATOR_H_
#define DMLSERVE_ENGINE_D3D12_RANGE_ALLOCATOR_H_

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "engine/core/mutex.h"

namespace dmls::d3d12 {

class RangeAllocator {
 public:
  // Ranges start at multiples of `alignment` (a power of two) and their
  // sizes are rounded up to it.
  RangeAllocator(uint64_t size, uint64_t alignment);

  // The offset of `bytes` (> 0) free bytes, or nullopt when no free block
  // is large enough.
  std::optional<uint64_t> Allocate(uint64_t bytes);
  // Gives [offset, offset + bytes) back once `fence` has completed (0: now).
  // `bytes` is the size passed to Allocate.
  void Free(uint64_t offset, uint64_t bytes, uint64_t fence);
  // Frees every range retired under a fence <= `completed`.
  void Reclaim(uint64_t completed);

  uint64_t size() const { return size_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t used() const;       // allocated or retired bytes
  // As used(), less the ranges retired under fences <= `completed` (what
  // Reclaim(completed) would free). Frees nothing.
  uint64_t used(uint64_t completed) const;
  uint64_t largest_free() const;

 private:
  struct Retired {
    uint64_t offset;
    uint64_t bytes;
    uint64_t fence;
  };
  uint64_t Round(uint64_t bytes) const {
    return (bytes + alignment_ - 1) & ~(alignment_ - 1);
  }
  void FreeLocked(uint64_t offset, uint64_t bytes)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const uint64_t size_;
  const uint64_t alignment_;
  mutable Mutex mu_;
  std::map<uint64_t, uint64_t> free_ ABSL_GUARDED_BY(mu_);  // offset -> bytes
  std::vector<Retired> retired_ ABSL_GUARDED_BY(mu_);
  uint64_t used_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace dmls::d3d12

#endif  // DMLSERVE_ENGINE_D3D12_RANGE_ALLOCATOR_H_
