// The contract between the DXBC kernel generators (engine/dxbc, owner of this
// file) and the Direct3D 12 runtime (engine/d3d12): how a kernel is keyed,
// how its resources are bound and what its constant block holds. Plain data;
// thread-compatible.
//
// Binding model (one root signature shared by every kernel):
//   root parameter 0: root CBV b0  -> KernelArgs (256-byte aligned block)
//   root parameter 1: descriptor table, SRV t0..t2 (input, scale, bias);
//                     unused slots get null descriptors of the same format
//   root parameter 2: descriptor table, UAV u0..u1 (output, scratch)
// Views are typed buffer views whose DXGI formats come from KernelInfo; each
// view holds at most 2^27 texels (vkd3d 1.2 limit, DESIGN.md §3), and no
// dispatch dimension exceeds 65535 groups: the runtime splits large work into
// several dispatches, moving each view's FirstElement and KernelArgs.base.
#ifndef DMLSERVE_ENGINE_DXBC_KERNEL_ABI_H_
#define DMLSERVE_ENGINE_DXBC_KERNEL_ABI_H_

#include <cstdint>

namespace dmls::gpu {

inline constexpr uint32_t kMaxViewTexels = 1u << 27;
inline constexpr uint32_t kMaxDispatchGroups = 65535;
inline constexpr uint32_t kMaxRank = 8;

// How a kernel addresses its tensors.
enum class LayoutClass : uint8_t {
  kContiguous = 0,  // packed input and output, same shape: vectorised path
  kStrided = 1,     // general: strides, zero-stride broadcast, padding
};

// DXGI_FORMAT values used for views (numerically equal to dxgiformat.h).
enum class ViewFormat : uint32_t {
  kUnknown = 0,
  kR32G32B32A32Float = 2,
  kR32G32B32A32Uint = 3,
  kR32Float = 41,
  kR32Uint = 42,
  kR32Sint = 43,
};

}  // namespace dmls::gpu

#endif  // DMLSERVE_ENGINE_DXBC_KERNEL_ABI_H_
