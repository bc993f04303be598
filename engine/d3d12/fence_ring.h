// FenceRing: a circular allocator of slots (descriptors, 256-byte constant
// blocks) whose space is recycled by fence value. Allocations are
// contiguous; a batch's allocations are closed with Retire(fence) and come
// back with Reclaim(completed). Bookkeeping only: the memory lives elsewhere
// (a descriptor heap, an upload buffer).
//
// Thread-compatible: used by the submission thread only.
#ifndef DMLSERVE_ENGINE_D3D12_FENCE_RING_H_
#define DMLSERVE_ENGINE_D3D12_FENCE_RING_H_

#include <cstdint>
#include <deque>
#include <optional>

namespace dmls::d3d12 {

class FenceRing {
 public:
  explicit FenceRing(uint64_t capacity) : capacity_(capacity) {}

  // The first of `n` contiguous free slots, or nullopt when the ring is too
  // full (the caller submits and waits, then Reclaims). Skips the slots at
  // the end when `n` does not fit before the wrap.
  std::optional<uint64_t> Allocate(uint64_t n);
  // Closes everything allocated since the last Retire under `fence`.
  void Retire(uint64_t fence);
  // Frees every closed segment whose fence is <= `completed`.
  void Reclaim(uint64_t completed);
  // Whether Allocate(n) would succeed now.
  bool CanAllocate(uint64_t n) const;

  uint64_t capacity() const { return capacity_; }
  uint64_t used() const { return used_; }

 private:
  struct Segment {
    uint64_t slots;
    uint64_t fence;
  };
  const uint64_t capacity_;
  uint64_t head_ = 0;     // next slot to hand out
  uint64_t used_ = 0;     // slots from the oldest live segment to head_
  uint64_t pending_ = 0;  // slots allocated since the last Retire
  std::deque<Segment> segments_;
};

}  // namespace dmls::d3d12

#endif  // DMLSERVE_ENGINE_D3D12_FENCE_RING_H_
