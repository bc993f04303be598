// Small constructors of the D3D12 objects and descriptions that the
// runtime's recorders and pools all need, in the manner of d3dx12.h (which
// vkd3d's headers do not come with): a buffer's resource description, a
// direct command queue, a closed direct command list with its allocator.
// Stateless functions; thread-safe (ID3D12Device is free-threaded).
#ifndef DMLSERVE_ENGINE_D3D12_OBJECTS_H_
#define DMLSERVE_ENGINE_D3D12_OBJECTS_H_

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "engine/d3d12/com_ptr.h"
#include "engine/d3d12/platform.h"

namespace dmls::d3d12 {

// A buffer of `bytes` (d3dx12's CD3DX12_RESOURCE_DESC::Buffer).
D3D12_RESOURCE_DESC BufferDesc(uint64_t bytes,
                               D3D12_RESOURCE_FLAGS flags = D3D12_RESOURCE_FLAG_NONE);

// A direct command queue in `*queue`. `owner`, when not empty, is named in
// the error ("CreateCommandQueue (owner)").
absl::Status CreateDirectQueue(ID3D12Device* device, ComPtr<ID3D12CommandQueue>* queue,
                               std::string_view owner = {});

// A direct command allocator and a command list on it, closed: ready for
// the Reset that starts each recording. `owner` as for CreateDirectQueue.
absl::Status CreateClosedDirectList(ID3D12Device* device,
                                    ComPtr<ID3D12CommandAllocator>* allocator,
                                    ComPtr<ID3D12GraphicsCommandList>* list,
                                    std::string_view owner = {});

// A transition barrier of all of `resource`'s subresources, and a UAV
// barrier (d3dx12's CD3DX12_RESOURCE_BARRIER::Transition / ::UAV).
D3D12_RESOURCE_BARRIER TransitionBarrier(ID3D12Resource* resource, D3D12_RESOURCE_STATES from,
                                         D3D12_RESOURCE_STATES to);
D3D12_RESOURCE_BARRIER UavBarrier(ID3D12Resource* resource);

}  // namespace dmls::d3d12

#endif  // DMLSERVE_ENGINE_D3D12_OBJECTS_H_
