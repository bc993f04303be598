#include "engine/d3d12/pipeline_cache.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "engine/d3d12/hresult.h"

namespace dmls::d3d12 {

absl::StatusOr<std::unique_ptr<PipelineCache>> PipelineCache::Create(
    ID3D12Device* device, DxbcSource source) {
  std::unique_ptr<PipelineCache> cache(
      new PipelineCache(device, std::move(source)));

  D3D12_DESCRIPTOR_RANGE srv = {};
  srv.RangeType = D3D12_DESCRIPTOR_RANGE_TYPE_SRV;
  srv.NumDescriptors = kSrvSlots;
  srv.BaseShaderRegister = 0;
  srv.OffsetInDescriptorsFromTableStart = 0;
  D3D12_DESCRIPTOR_RANGE uav = {};
  uav.RangeType = D3D12_DESCRIPTOR_RANGE_TYPE_UAV;
  uav.NumDescriptors = kUavSlots;
  uav.BaseShaderRegister = 0;
  uav.OffsetInDescriptorsFromTableStart = 0;

  D3D12_ROOT_PARAMETER params[3] = {};
  params[kRootCbv].ParameterType = D3D12_ROOT_PARAMETER_TYPE_CBV;
  params[kRootCbv].Descriptor.ShaderRegister = 0;
  params[kRootCbv].ShaderVisibility = D3D12_SHADER_VISIBILITY_ALL;
  params[kRootSrvTable].ParameterType =
      D3D12_ROOT_PARAMETER_TYPE_DESCRIPTOR_TABLE;
  params[kRootSrvTable].DescriptorTable.NumDescriptorRanges = 1;
  params[kRootSrvTable].DescriptorTable.pDescriptorRanges = &srv;
  params[kRootSrvTable].ShaderVisibility = D3D12_SHADER_VISIBILITY_ALL;
  params[kRootUavTable].ParameterType =
      D3D12_ROOT_PARAMETER_TYPE_DESCRIPTOR_TABLE;
  params[kRootUavTable].DescriptorTable.NumDescriptorRanges = 1;
  params[kRootUavTable].DescriptorTable.pDescriptorRanges = &uav;
  params[kRootUavTable].ShaderVisibility = D3D12_SHADER_VISIBILITY_ALL;

  D3D12_ROOT_SIGNATURE_DESC desc = {};
  desc.NumParameters = 3;
  desc.pParameters = params;
  desc.Flags = D3D12_ROOT_SIGNATURE_FLAG_NONE;

  ComPtr<ID3DBlob> blob;
  ComPtr<ID3DBlob> error;
  const HRESULT hr = SerializeRootSignature(&desc, blob.Put(), error.Put());
  if (FAILED(hr)) {
    std::string detail;
    if (error) {
      detail.assign(static_cast<const char*>(error->GetBufferPointer()),
                    error->GetBufferSize());
    }
    return absl::InternalError(absl::StrCat(
        HrToStatus(hr, "root signature serialisation").message(), " ", detail));
  }
  DMLS_RETURN_IF_FAILED(
      device->CreateRootSignature(
          0, blob->GetBufferPointer(), blob->GetBufferSize(),
          DMLS_IID_PPV(ID3D12RootSignature, cache->root_signature_.Put())),
      "ID3D12Device::CreateRootSignature");
  return cache;
}

absl::StatusOr<ID3D12PipelineState*> PipelineCache::Get(
    const gpu::KernelKey& key) {
  MutexLock lock(&mu_);
  auto it = psos_.find(key);
  if (it != psos_.end()) return it->second.get();

  absl::StatusOr<std::vector<uint8_t>> dxbc = source_(key);
  if (!dxbc.ok()) return dxbc.status();
  D3D12_COMPUTE_PIPELINE_STATE_DESC desc = {};
  desc.pRootSignature = root_signature_.get();
  desc.CS.pShaderBytecode = dxbc->data();
  desc.CS.BytecodeLength = dxbc->size();
  ComPtr<ID3D12PipelineState> pso;
  const HRESULT hr = device_->CreateComputePipelineState(
      &desc, DMLS_IID_PPV(ID3D12PipelineState, pso.Put()));
  if (FAILED(hr)) {
    return absl::InternalError(
        absl::StrCat(HrToStatus(hr, "CreateComputePipelineState").message(),
                     " for kernel ", key.DebugString()));
  }
  ID3D12PipelineState* raw = pso.get();
  psos_.emplace(key, std::move(pso));
  return raw;
}

size_t PipelineCache::size() const {
  MutexLock lock(&mu_);
  return psos_.size();
}

}  // namespace dmls::d3d12
