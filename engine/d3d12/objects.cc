#include "engine/d3d12/objects.h"

#include <string>

#include "engine/d3d12/hresult.h"

namespace dmls::d3d12 {
namespace {

std::string Call(std::string_view call, std::string_view owner) {
  std::string name(call);
  if (!owner.empty()) name.append(" (").append(owner).append(")");
  return name;
}

}  // namespace

D3D12_RESOURCE_DESC BufferDesc(uint64_t bytes, D3D12_RESOURCE_FLAGS flags) {
  D3D12_RESOURCE_DESC desc = {};
  desc.Dimension = D3D12_RESOURCE_DIMENSION_BUFFER;
  desc.Width = bytes;
  desc.Height = 1;
  desc.DepthOrArraySize = 1;
  desc.MipLevels = 1;
  desc.Format = DXGI_FORMAT_UNKNOWN;
  desc.SampleDesc.Count = 1;
  desc.Layout = D3D12_TEXTURE_LAYOUT_ROW_MAJOR;
  desc.Flags = flags;
  return desc;
}

absl::Status CreateDirectQueue(ID3D12Device* device, ComPtr<ID3D12CommandQueue>* queue,
                               std::string_view owner) {
  D3D12_COMMAND_QUEUE_DESC qd = {};
  qd.Type = D3D12_COMMAND_LIST_TYPE_DIRECT;
  DMLS_RETURN_IF_FAILED(
      device->CreateCommandQueue(&qd, DMLS_IID_PPV(ID3D12CommandQueue, queue->Put())),
      Call("CreateCommandQueue", owner));
  return absl::OkStatus();
}

absl::Status CreateClosedDirectList(ID3D12Device* device,
                                    ComPtr<ID3D12CommandAllocator>* allocator,
                                    ComPtr<ID3D12GraphicsCommandList>* list,
                                    std::string_view owner) {
  DMLS_RETURN_IF_FAILED(
      device->CreateCommandAllocator(D3D12_COMMAND_LIST_TYPE_DIRECT,
                                     DMLS_IID_PPV(ID3D12CommandAllocator, allocator->Put())),
      Call("CreateCommandAllocator", owner));
  DMLS_RETURN_IF_FAILED(
      device->CreateCommandList(0, D3D12_COMMAND_LIST_TYPE_DIRECT, allocator->get(), nullptr,
                                DMLS_IID_PPV(ID3D12GraphicsCommandList, list->Put())),
      Call("CreateCommandList", owner));
  DMLS_RETURN_IF_FAILED((*list)->Close(), Call("ID3D12GraphicsCommandList::Close", owner));
  return absl::OkStatus();
}

D3D12_RESOURCE_BARRIER TransitionBarrier(ID3D12Resource* resource, D3D12_RESOURCE_STATES from,
                                         D3D12_RESOURCE_STATES to) {
  D3D12_RESOURCE_BARRIER b = {};
  b.Type = D3D12_RESOURCE_BARRIER_TYPE_TRANSITION;
  b.Transition.pResource = resource;
  b.Transition.Subresource = D3D12_RESOURCE_BARRIER_ALL_SUBRESOURCES;
  b.Transition.StateBefore = from;
  b.Transition.StateAfter = to;
  return b;
}

D3D12_RESOURCE_BARRIER UavBarrier(ID3D12Resource* resource) {
  D3D12_RESOURCE_BARRIER b = {};
  b.Type = D3D12_RESOURCE_BARRIER_TYPE_UAV;
  b.UAV.pResource = resource;
  return b;
}

}  // namespace dmls::d3d12
