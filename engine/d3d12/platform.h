// The one place that decides where the Direct3D 12 API comes from.
//
// Linux: vkd3d's own headers. libvkd3d implements the COM methods with the
// Microsoft x64 calling convention, which vkd3d's headers declare and
// DirectX-Headers' WSL d3d12.h does not, so the two are not interchangeable
// (DESIGN.md §3). WIDL_EXPLICIT_AGGREGATE_RETURNS must be defined before the
// include: without it, methods that return structs (e.g.
// GetCPUDescriptorHandleForHeapStart) get a vtable layout that disagrees with
// libvkd3d and crash.
//
// Windows: the SDK / DirectX-Headers d3d12.h and DXGI. MSVC is the usual
// compiler; MinGW-w64 (GCC) also compiles this code against DirectX-Headers
// (deploy/windows/cross-build.sh, docs/WINDOWS.md), which needs the
// accommodations marked "MinGW" below.
//
// Everything else in engine/d3d12 uses only the D3D12 API through this header;
// the few calls that differ between the two (root signature serialisation)
// are wrapped here.
#ifndef DMLSERVE_ENGINE_D3D12_PLATFORM_H_
#define DMLSERVE_ENGINE_D3D12_PLATFORM_H_

#ifdef _WIN32
#ifndef NOMINMAX
#define NOMINMAX
#endif
// MinGW: its rpcndr.h is version 475 and errors out when a header asks for
// more; DirectX-Headers' MIDL-generated d3d12.h asks for 500 but uses nothing
// newer. Must come before anything includes rpcndr.h (windows.h does unless
// WIN32_LEAN_AND_MEAN). MSVC's SDK rpcndr.h is new enough.
#if defined(__MINGW32__) && !defined(__REQUIRED_RPCNDR_H_VERSION__)
#define __REQUIRED_RPCNDR_H_VERSION__ 475
#endif
#include <windows.h>
#include <d3d12.h>
#include <dxgi1_6.h>
#if defined(__MINGW32__)
// MinGW: GCC ignores __declspec(uuid), so __uuidof(ID3D12Device) needs the
// interface ids DirectX-Headers' dxguids.h declares (__CRT_UUID_DECL);
// without it every __uuidof is an undefined __mingw_uuidof<> at link time.
#include <dxguids/dxguids.h>
#endif
#else
#ifndef WIDL_EXPLICIT_AGGREGATE_RETURNS
#define WIDL_EXPLICIT_AGGREGATE_RETURNS
#endif
#include <vkd3d.h>
#endif

namespace dmls::d3d12 {

// D3D12SerializeRootSignature under both runtimes.
inline HRESULT SerializeRootSignature(const D3D12_ROOT_SIGNATURE_DESC* desc,
                                      ID3DBlob** blob, ID3DBlob** error) {
#ifdef _WIN32
  return D3D12SerializeRootSignature(desc, D3D_ROOT_SIGNATURE_VERSION_1_0,
                                     blob, error);
#else
  return vkd3d_serialize_root_signature(desc, D3D_ROOT_SIGNATURE_VERSION_1_0,
                                        blob, error);
#endif
}

// The first CPU / GPU descriptor handles of `heap`. MinGW: DirectX-Headers
// declares these struct-returning methods with an explicit out-pointer for
// Windows compilers other than MSVC, whose C++ ABI returns small structs from
// member functions differently (MSVC and vkd3d's headers take no argument).
inline D3D12_CPU_DESCRIPTOR_HANDLE CpuHeapStart(ID3D12DescriptorHeap* heap) {
#if defined(_WIN32) && !defined(_MSC_VER)
  D3D12_CPU_DESCRIPTOR_HANDLE handle;
  return *heap->GetCPUDescriptorHandleForHeapStart(&handle);
#else
  return heap->GetCPUDescriptorHandleForHeapStart();
#endif
}

inline D3D12_GPU_DESCRIPTOR_HANDLE GpuHeapStart(ID3D12DescriptorHeap* heap) {
#if defined(_WIN32) && !defined(_MSC_VER)
  D3D12_GPU_DESCRIPTOR_HANDLE handle;
  return *heap->GetGPUDescriptorHandleForHeapStart(&handle);
#else
  return heap->GetGPUDescriptorHandleForHeapStart();
#endif
}

// The IID and out-pointer pair COM creation functions take.
#define DMLS_IID_PPV(type, ptr) __uuidof(type), reinterpret_cast<void**>(ptr)

}  // namespace dmls::d3d12

#endif  // DMLSERVE_ENGINE_D3D12_PLATFORM_H_
