#include "engine/d3d12/range_allocator.h"

#include <algorithm>

namespace dmls::d3d12 {

RangeAllocator::RangeAllocator(uint64_t size, uint64_t alignment)
    : size_(size & ~(alignment - 1)), alignment_(alignment) {
  if (size_ > 0) free_.emplace(0, size_);
}

std::optional<uint64_t> RangeAllocator::Allocate(uint64_t bytes) {
  const uint64_t need = Round(std::max<uint64_t>(bytes, 1));
  MutexLock lock(&mu_);
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < need) continue;
    const uint64_t offset = it->first;
    const uint64_t rest = it->second - need;
    free_.erase(it);
    if (rest > 0) free_.emplace(offset + need, rest);
    used_ += need;
    return offset;
  }
  return std::nullopt;
}

void RangeAllocator::FreeLocked(uint64_t offset, uint64_t bytes) {
  const uint64_t n = Round(std::max<uint64_t>(bytes, 1));
  used_ -= n;
  auto next = free_.lower_bound(offset);
  uint64_t begin = offset;
  uint64_t end = offset + n;
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == begin) {
      begin = prev->first;
      free_.erase(prev);
    }
  }
  if (next != free_.end() && next->first == end) {
    end += next->second;
    free_.erase(next);
  }
  free_.emplace(begin, end - begin);
}

void RangeAllocator::Free(uint64_t offset, uint64_t bytes, uint64_t fence) {
  MutexLock lock(&mu_);
  if (fence == 0) {
    FreeLocked(offset, bytes);
  } else {
    retired_.push_back({offset, bytes, fence});
  }
}

void RangeAllocator::Reclaim(uint64_t completed) {
  MutexLock lock(&mu_);
  auto keep = retired_.begin();
  for (auto it = retired_.begin(); it != retired_.end(); ++it) {
    if (it->fence <= completed) {
      FreeLocked(it->offset, it->bytes);
    } else {
      *keep++ = *it;
    }
  }
  retired_.erase(keep, retired_.end());
}

uint64_t RangeAllocator::used() const {
  MutexLock lock(&mu_);
  return used_;
}

uint64_t RangeAllocator::used(uint64_t completed) const {
  MutexLock lock(&mu_);
  uint64_t n = used_;
  for (const Retired& r : retired_) {
    if (r.fence <= completed) n -= Round(std::max<uint64_t>(r.bytes, 1));
  }
  return n;
}

uint64_t RangeAllocator::largest_free() const {
  MutexLock lock(&mu_);
  uint64_t best = 0;
  for (const auto& [offset, bytes] : free_) best = std::max(best, bytes);
  return best;
}

}  // namespace dmls::d3d12
