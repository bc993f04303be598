#include "engine/d3d12/chain_temps.h"

#include <algorithm>

namespace dmls::d3d12 {

absl::StatusOr<PoolBuffer*> ChainTemps::Get(uint64_t bytes, AcquireFn acquire) {
  bytes = std::max<uint64_t>(bytes, 1);
  PoolBuffer* b = nullptr;
  if (auto it = retired_.lower_bound(bytes);
      it != retired_.end() && it->first <= TempFitLimit(bytes)) {
    b = it->second;
    retired_.erase(it);
  } else {
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
