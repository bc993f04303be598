#include "engine/d3d12/view_cache.h"

#include "absl/strings/str_cat.h"
#include "engine/d3d12/hresult.h"
#include "engine/kernels/kernel_abi.h"

namespace dmls::d3d12 {

absl::StatusOr<std::unique_ptr<ViewCache>> ViewCache::Create(ID3D12Device* device,
                                                             uint32_t capacity) {
  std::unique_ptr<ViewCache> c(new ViewCache(device, capacity));
  D3D12_DESCRIPTOR_HEAP_DESC hd = {};
  hd.Type = D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV;
  hd.NumDescriptors = capacity;
  hd.Flags = D3D12_DESCRIPTOR_HEAP_FLAG_NONE;  // CPU-only: a copy source
  DMLS_RETURN_IF_FAILED(
      device->CreateDescriptorHeap(&hd, DMLS_IID_PPV(ID3D12DescriptorHeap, c->heap_.Put())),
      "CreateDescriptorHeap(view cache)");
  c->increment_ = device->GetDescriptorHandleIncrementSize(hd.Type);
  c->start_ = CpuHeapStart(c->heap_.get());
  return c;
}

absl::StatusOr<D3D12_CPU_DESCRIPTOR_HANDLE> ViewCache::Get(ID3D12Resource* buffer,
                                                           uint64_t bytes,
                                                           gpu::ViewFormat format, bool uav) {
  const uint64_t texels = bytes / TexelBytes(format);
  if (texels > gpu::kMaxViewTexels) {
    return absl::InvalidArgumentError(
        absl::StrCat("a buffer of ", bytes, " bytes exceeds one view"));
  }
  return Find(Key{buffer, format, uav}, texels);
}

absl::StatusOr<D3D12_CPU_DESCRIPTOR_HANDLE> ViewCache::GetNull(gpu::ViewFormat format,
                                                               bool uav) {
  return Find(Key{nullptr, format, uav}, 0);
}

absl::StatusOr<D3D12_CPU_DESCRIPTOR_HANDLE> ViewCache::Find(const Key& key,
                                                            uint64_t texels) {
  MutexLock lock(&mu_);
  uint32_t slot;
  if (auto it = slots_.find(key); it != slots_.end()) {
    slot = it->second;
  } else {
    if (!free_.empty()) {
      slot = free_.back();
      free_.pop_back();
    } else if (used_ < capacity_) {
      slot = used_++;
    } else {
      return absl::ResourceExhaustedError("the view cache is full");
    }
    const D3D12_CPU_DESCRIPTOR_HANDLE h{start_.ptr + uint64_t{slot} * increment_};
    const auto [buffer, format, uav] = key;
    if (uav) {
      D3D12_UNORDERED_ACCESS_VIEW_DESC ud = {};
      ud.ViewDimension = D3D12_UAV_DIMENSION_BUFFER;
      ud.Format = static_cast<DXGI_FORMAT>(format);
      ud.Buffer.NumElements = static_cast<UINT>(texels);
      device_->CreateUnorderedAccessView(buffer, nullptr, &ud, h);
    } else {
      D3D12_SHADER_RESOURCE_VIEW_DESC sd = {};
      sd.ViewDimension = D3D12_SRV_DIMENSION_BUFFER;
      sd.Shader4ComponentMapping = D3D12_DEFAULT_SHADER_4_COMPONENT_MAPPING;
      sd.Format = static_cast<DXGI_FORMAT>(format);
      sd.Buffer.NumElements = static_cast<UINT>(texels);
      device_->CreateShaderResourceView(buffer, &sd, h);
    }
    views_created_.fetch_add(1, std::memory_order_relaxed);
    slots_[key] = slot;
  }
  return D3D12_CPU_DESCRIPTOR_HANDLE{start_.ptr + uint64_t{slot} * increment_};
}

void ViewCache::Forget(ID3D12Resource* buffer) {
  MutexLock lock(&mu_);
  for (auto it = slots_.lower_bound(Key{buffer, gpu::ViewFormat::kUnknown, false});
       it != slots_.end() && std::get<0>(it->first) == buffer;) {
    free_.push_back(it->second);
    it = slots_.erase(it);
  }
}

size_t ViewCache::size() const {
  MutexLock lock(&mu_);
  return slots_.size();
}

}  // namespace dmls::d3d12
