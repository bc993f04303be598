#include "engine/d3d12/chain_temps.h"

#include <algorithm>

namespace dmls::d3d12 {

PoolBuffer* TakeFitting(FreeTemps& free, uint64_t bytes) {
  auto it = free.lower_bound(bytes);
  if (it == free.end() || it->first > 2 * bytes + (64 << 10)) return nullptr;
  PoolBuffer* b = it->second;
  free.erase(it);
  return b;
}

absl::StatusOr<PoolBuffer*> ChainTemps::Get(uint64_t bytes, AcquireFn acquire) {
  bytes = std::max<uint64_t>(bytes, 1);
  PoolBuffer* b = TakeFitting(retired_, bytes);
  if (b == nullptr) {
    absl::StatusOr<PoolBuffer*> got = acquire(bytes);
    if (!got.ok()) return got.status();
    b = *got;
    all_.push_back(b);
  }
  live_.insert(b);
  return b;
}

void ChainTemps::Retire(PoolBuffer* b) {
  if (b == nullptr || live_.erase(b) == 0) return;
  retired_.emplace(b->size, b);
}

}  // namespace dmls::d3d12
