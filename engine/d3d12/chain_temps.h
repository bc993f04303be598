// ChainTemps: the device temporaries of one chain while it is recorded.
// A temporary whose contents no later step needs is retired (Retire) and
// serves a later Get of a fitting size, so a chain of steps that each read
// the last needs two temporaries, not one per step. New ones come from the
// function given to Get (the chain recorder's free list, then the pool).
//
// Ownership: tracks the buffers, does not own them; all() lists every one
// once, for the recorder to take back when the chain's work is done.
// Thread-compatible: the recording thread uses it.
#ifndef DMLSERVE_ENGINE_D3D12_CHAIN_TEMPS_H_
#define DMLSERVE_ENGINE_D3D12_CHAIN_TEMPS_H_

#include <cstdint>
#include <map>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "engine/d3d12/buffer_pool.h"

namespace dmls::d3d12 {

// Free buffers by size.
using FreeTemps = std::multimap<uint64_t, PoolBuffer*>;

// Takes out of `free` the smallest buffer that serves a request of `bytes`
// without wasting more than about half of itself; null when none does.
PoolBuffer* TakeFitting(FreeTemps& free, uint64_t bytes);

class ChainTemps {
 public:
  using AcquireFn = absl::FunctionRef<absl::StatusOr<PoolBuffer*>(uint64_t bytes)>;

  // A buffer of at least `bytes` (at least 1): the smallest retired one
  // that fits (TakeFitting), else a new one from `acquire`.
  absl::StatusOr<PoolBuffer*> Get(uint64_t bytes, AcquireFn acquire);
  // `b`'s contents are needed no more; a no-op for null and for buffers
  // that are not live temporaries of this chain (resident tensors).
  void Retire(PoolBuffer* b);
  // Every buffer Get acquired, each once.
  std::vector<PoolBuffer*>& all() { return all_; }

 private:
  absl::flat_hash_set<PoolBuffer*> live_;
  FreeTemps retired_;
  std::vector<PoolBuffer*> all_;
};

}  // namespace dmls::d3d12

#endif  // DMLSERVE_ENGINE_D3D12_CHAIN_TEMPS_H_
