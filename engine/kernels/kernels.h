// Kernel generation entry points: BuildKernel turns a KernelKey into a DXBC
// blob; AllKernelKeys lists every key the planner can emit (the test suite
// compiles them all, because vkd3d-shader aborts the process on a malformed
// shader). Pure functions; thread-safe.
#ifndef DMLSERVE_ENGINE_KERNELS_KERNELS_H_
#define DMLSERVE_ENGINE_KERNELS_KERNELS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/core/types.h"
#include "engine/kernels/kernel_info.h"
#include "engine/kernels/kernel_key.h"

namespace dmls::gpu {

// InvalidArgument for keys outside AllKernelKeys().
absl::StatusOr<KernelInfo> BuildKernel(const KernelKey& key);

// Every key the planner can produce.
std::vector<KernelKey> AllKernelKeys();

// The element types an element-wise operator supports at the highest FL
// (OPERATORS.md §3) that this engine implements; empty when unsupported.
std::vector<DataType> ElementwiseTypes(OperatorType op);
// THRESHOLD and CLIP take ScaleBias.
bool TakesScaleBias(OperatorType op);

}  // namespace dmls::gpu

#endif  // DMLSERVE_ENGINE_KERNELS_KERNELS_H_
