#include "engine/d3d12/fence_ring.h"

namespace dmls::d3d12 {

bool FenceRing::CanAllocate(uint64_t n) const {
  if (n == 0 || n > capacity_) return false;
  // The slots between head_ and the end are skipped, not split, when the
  // allocation does not fit before the wrap.
  const uint64_t waste = head_ + n > capacity_ ? capacity_ - head_ : 0;
  return used_ + waste + n <= capacity_;
}

std::optional<uint64_t> FenceRing::Allocate(uint64_t n) {
  if (!CanAllocate(n)) return std::nullopt;
  uint64_t start = head_;
  uint64_t waste = 0;
  if (start + n > capacity_) {
    waste = capacity_ - start;
    start = 0;
  }
  used_ += waste + n;
  pending_ += waste + n;
  head_ = start + n;
  return start;
}

void FenceRing::Retire(uint64_t fence) {
  if (pending_ == 0) return;
  segments_.push_back({pending_, fence});
  pending_ = 0;
}

void FenceRing::Reclaim(uint64_t completed) {
  while (!segments_.empty() && segments_.front().fence <= completed) {
    used_ -= segments_.front().slots;
    segments_.pop_front();
  }
  if (used_ == 0) head_ = 0;  // an empty ring has its whole length again
}

}  // namespace dmls::d3d12
