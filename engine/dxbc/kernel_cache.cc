#include "engine/dxbc/kernel_cache.h"

namespace dmls::gpu {

absl::StatusOr<std::shared_ptr<const KernelInfo>> KernelCache::Get(const KernelKey& key) {
  {
    absl::MutexLock lock(&mu_);
    auto it = map_.find(key);
    if (it != map_.end()) return it->second;
  }
  absl::StatusOr<KernelInfo> built = BuildKernel(key);
  if (!built.ok()) return built.status();
  auto info = std::make_shared<const KernelInfo>(*std::move(built));
  absl::MutexLock lock(&mu_);
  auto [it, inserted] = map_.emplace(key, std::move(info));
  return it->second;
}

size_t KernelCache::size() const {
  absl::MutexLock lock(&mu_);
  return map_.size();
}

}  // namespace dmls::gpu
