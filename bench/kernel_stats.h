// dmls_bench --kernel_stats: what the Vulkan driver under vkd3d makes of
// each kernel of a plan. Each distinct kernel is emitted (BuildKernel),
// translated to SPIR-V by libvkd3d-shader (the same library and version
// the engine's vkd3d uses; every descriptor its own binding in set 0, as
// vkd3d maps our root signature: a root CBV and one descriptor per range),
// and created as a Vulkan compute pipeline. Where the driver offers
// VK_KHR_pipeline_executable_properties (NVIDIA's does: registers per
// thread, binary size, spills; Debian 12's lavapipe does not), its
// statistics are printed; elsewhere the line says so, and a kernel the
// driver refuses is an error. Single-threaded; owns its Vulkan objects.
#ifndef DMLSERVE_BENCH_KERNEL_STATS_H_
#define DMLSERVE_BENCH_KERNEL_STATS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/bench_options.h"

namespace dmls::bench {

// One statistic of a compiled kernel, as the driver names and formats it.
struct KernelStatistic {
  std::string name;   // e.g. "Register Count"
  std::string value;  // e.g. "40"
};

// SPIR-V of a DXBC kernel with every descriptor bound in set 0 (binding k
// for the k-th descriptor vkd3d-shader's scan lists), and those bindings'
// Vulkan descriptor types (VkDescriptorType values), in binding order.
struct SpirvKernel {
  std::vector<uint32_t> code;
  std::vector<int> descriptor_types;
};
absl::StatusOr<SpirvKernel> SpirvOf(const std::vector<uint8_t>& dxbc);

// --kernel_stats: for every operator and size of `options`, the plan's
// distinct kernels and their statistics on the first Vulkan device (the
// one VK_DRIVER_FILES names on the GPU machine). Returns 0, or 1 when a
// kernel does not build, translate or create.
int PrintKernelStats(const BenchOptions& options);

}  // namespace dmls::bench

#endif  // DMLSERVE_BENCH_KERNEL_STATS_H_
