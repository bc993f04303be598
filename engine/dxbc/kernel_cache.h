// KernelCache: builds each kernel once per KernelKey and shares the result.
// Thread-safe (one mutex around the map; a kernel is built outside the lock
// and the first insertion wins). Owns the cached KernelInfos; callers hold
// shared_ptrs that stay valid after eviction-free lifetime of the cache.
#ifndef DMLSERVE_ENGINE_DXBC_KERNEL_CACHE_H_
#define DMLSERVE_ENGINE_DXBC_KERNEL_CACHE_H_

#include <memory>
#include <unordered_map>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "engine/dxbc/kernel_key.h"
#include "engine/dxbc/kernels.h"

namespace dmls::gpu {

class KernelCache {
 public:
  absl::StatusOr<std::shared_ptr<const KernelInfo>> Get(const KernelKey& key);
  size_t size() const;

 private:
  mutable absl::Mutex mu_;
  std::unordered_map<KernelKey, std::shared_ptr<const KernelInfo>, KernelKeyHash> map_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace dmls::gpu

#endif  // DMLSERVE_ENGINE_DXBC_KERNEL_CACHE_H_
