// PipelineCache: the one root signature every kernel shares
// (engine/kernels/kernel_abi.h) and one compute pipeline state per KernelKey,
// created on first use and kept for the life of the engine.
//
// Root signature: parameter 0 root CBV b0; parameter 1 descriptor table
// SRV t0..t2; parameter 2 descriptor table UAV u0..u1.
//
// The DXBC comes from an injected source (normally engine/dxbc's
// BuildKernel), so the cache neither knows nor cares how kernels are made.
// A kernel that fails to build or to compile is not cached: the error is
// returned to every request that needs it.
//
// Ownership: owns the root signature and PSOs; returned raw pointers stay
// valid for the cache's lifetime. Thread-safety: thread-safe; a PSO is
// created under the lock (rare, and vkd3d compiles shaders synchronously
// anyway).
#ifndef DMLSERVE_ENGINE_D3D12_PIPELINE_CACHE_H_
#define DMLSERVE_ENGINE_D3D12_PIPELINE_CACHE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/core/mutex.h"
#include "engine/d3d12/com_ptr.h"
#include "engine/d3d12/platform.h"
#include "engine/kernels/kernel_key.h"

namespace dmls::d3d12 {

// Root parameter indices (kernel_abi.h).
inline constexpr UINT kRootCbv = 0;
inline constexpr UINT kRootSrvTable = 1;
inline constexpr UINT kRootUavTable = 2;
inline constexpr UINT kSrvSlots = 3;
inline constexpr UINT kUavSlots = 2;

class PipelineCache {
 public:
  using DxbcSource =
      std::function<absl::StatusOr<std::vector<uint8_t>>(const gpu::KernelKey&)>;

  // `device` must outlive the cache.
  static absl::StatusOr<std::unique_ptr<PipelineCache>> Create(
      ID3D12Device* device, DxbcSource source);

  ID3D12RootSignature* root_signature() const { return root_signature_.get(); }
  // The PSO for `key`, built on first use.
  absl::StatusOr<ID3D12PipelineState*> Get(const gpu::KernelKey& key);
  size_t size() const;

 private:
  PipelineCache(ID3D12Device* device, DxbcSource source)
      : device_(device), source_(std::move(source)) {}

  ID3D12Device* const device_;
  const DxbcSource source_;
  ComPtr<ID3D12RootSignature> root_signature_;
  mutable Mutex mu_;
  std::unordered_map<gpu::KernelKey, ComPtr<ID3D12PipelineState>,
                     gpu::KernelKeyHash>
      psos_ ABSL_GUARDED_BY(mu_);
};

}  // namespace dmls::d3d12

#endif  // DMLSERVE_ENGINE_D3D12_PIPELINE_CACHE_H_
