// ViewCache: typed views over whole buffers, kept in a CPU-only descriptor
// heap, one per (buffer, format, SRV or UAV), made the first time they are
// asked for. DispatchBinder::BindCopied copies them into its shader-visible
// ring for each dispatch (CopyDescriptorsSimple), which costs far less than
// creating a view: on vkd3d every typed buffer view is a VkBufferView, and
// creating them was most of the host time of a chain step (and contended
// between devices). Offsets into the buffer reach the kernels as view_base
// constants (kernel_abi.h).
//
// A buffer's views must be forgotten (Forget) before the buffer goes away;
// a copy already made into the ring stays valid.
//
// Ownership: owns the heap; borrows the device. Thread-safe.
#ifndef DMLSERVE_ENGINE_D3D12_VIEW_CACHE_H_
#define DMLSERVE_ENGINE_D3D12_VIEW_CACHE_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "engine/core/mutex.h"
#include "engine/d3d12/com_ptr.h"
#include "engine/d3d12/platform.h"
#include "engine/plan/plan.h"

namespace dmls::d3d12 {

class ViewCache {
 public:
  // Room for `capacity` views.
  static absl::StatusOr<std::unique_ptr<ViewCache>> Create(ID3D12Device* device,
                                                           uint32_t capacity);

  // The CPU handle of a view of `format` over the first `bytes` of
  // `buffer` (at most kMaxViewTexels texels: INVALID_ARGUMENT beyond);
  // RESOURCE_EXHAUSTED when the heap is full.
  absl::StatusOr<D3D12_CPU_DESCRIPTOR_HANDLE> Get(ID3D12Resource* buffer, uint64_t bytes,
                                                  gpu::ViewFormat format, bool uav);
  // The CPU handle of a null view of `format` (reads give zeros, writes
  // go nowhere), made once. On vkd3d a null buffer view is a VkBufferView
  // too: creating one per unused slot of every dispatch cost as much as
  // creating the real views did.
  absl::StatusOr<D3D12_CPU_DESCRIPTOR_HANDLE> GetNull(gpu::ViewFormat format, bool uav);
  // Drops `buffer`'s views (their slots are reused).
  void Forget(ID3D12Resource* buffer);

  uint64_t views_created() const { return views_created_.load(); }
  size_t size() const;

 private:
  ViewCache(ID3D12Device* device, uint32_t capacity) : device_(device), capacity_(capacity) {}
  // Null views have a null buffer.
  using Key = std::tuple<ID3D12Resource*, gpu::ViewFormat, bool>;

  // The handle of `key`'s view (of `texels` texels), made the first time.
  absl::StatusOr<D3D12_CPU_DESCRIPTOR_HANDLE> Find(const Key& key, uint64_t texels);

  ID3D12Device* const device_;
  const uint32_t capacity_;
  ComPtr<ID3D12DescriptorHeap> heap_;
  D3D12_CPU_DESCRIPTOR_HANDLE start_ = {};
  UINT increment_ = 0;
  std::atomic<uint64_t> views_created_{0};

  mutable Mutex mu_;
  std::map<Key, uint32_t> slots_ ABSL_GUARDED_BY(mu_);
  std::vector<uint32_t> free_ ABSL_GUARDED_BY(mu_);
  uint32_t used_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace dmls::d3d12

#endif  // DMLSERVE_ENGINE_D3D12_VIEW_CACHE_H_
