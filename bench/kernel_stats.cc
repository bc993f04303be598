#include "bench/kernel_stats.h"

#include <vkd3d_shader.h>
#include <vulkan/vulkan.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "bench/plan_report.h"
#include "engine/kernels/kernels.h"

namespace dmls::bench {
namespace {

// The descriptors a DXBC kernel declares, as vkd3d-shader's scan lists them.
class DescriptorScan {
 public:
  ~DescriptorScan() {
    if (scanned_) vkd3d_shader_free_scan_descriptor_info(&info_);
  }
  absl::Status Run(vkd3d_shader_compile_info compile) {
    info_.type = VKD3D_SHADER_STRUCTURE_TYPE_SCAN_DESCRIPTOR_INFO;
    compile.next = &info_;
    char* messages = nullptr;
    const int rc = vkd3d_shader_scan(&compile, &messages);
    const std::string text = messages ? messages : "";
    vkd3d_shader_free_messages(messages);
    if (rc < 0) return absl::InternalError(absl::StrCat("vkd3d_shader_scan: ", rc, " ", text));
    scanned_ = true;
    return absl::OkStatus();
  }
  const vkd3d_shader_scan_descriptor_info& info() const { return info_; }

 private:
  vkd3d_shader_scan_descriptor_info info_ = {};
  bool scanned_ = false;
};

// Our kernels use buffers only: a CBV is a uniform buffer, an SRV a
// uniform texel buffer, a UAV a storage texel buffer (vkd3d 1.2 maps raw
// and typed buffer views alike to texel buffers).
absl::StatusOr<VkDescriptorType> VulkanTypeOf(const vkd3d_shader_descriptor_info& d) {
  switch (d.type) {
    case VKD3D_SHADER_DESCRIPTOR_TYPE_CBV:
      return VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
    case VKD3D_SHADER_DESCRIPTOR_TYPE_SRV:
      return VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER;
    case VKD3D_SHADER_DESCRIPTOR_TYPE_UAV:
      return VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER;
    default:
      return absl::UnimplementedError(absl::StrCat("descriptor type ", d.type, " of register ",
                                                   d.register_index));
  }
}

std::string VkError(const char* call, VkResult r) { return absl::StrCat(call, ": VkResult ", r); }

// A Vulkan device that creates compute pipelines, with statistics where
// the driver offers them. Owns the instance and the device.
class StatsDevice {
 public:
  ~StatsDevice() {
    if (device_) vkDestroyDevice(device_, nullptr);
    if (instance_) vkDestroyInstance(instance_, nullptr);
  }

  absl::Status Init() {
    VkApplicationInfo app{};
    app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
    app.pApplicationName = "dmls_bench";
    app.apiVersion = VK_API_VERSION_1_1;
    VkInstanceCreateInfo ici{};
    ici.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    ici.pApplicationInfo = &app;
    if (VkResult r = vkCreateInstance(&ici, nullptr, &instance_); r != VK_SUCCESS) {
      return absl::UnavailableError(VkError("vkCreateInstance", r));
    }
    uint32_t count = 1;
    VkPhysicalDevice physical = VK_NULL_HANDLE;
    VkResult r = vkEnumeratePhysicalDevices(instance_, &count, &physical);
    if ((r != VK_SUCCESS && r != VK_INCOMPLETE) || count == 0) {
      return absl::UnavailableError("no Vulkan device");
    }
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(physical, &props);
    name_ = props.deviceName;
    uint32_t n = 0;
    vkEnumerateDeviceExtensionProperties(physical, nullptr, &n, nullptr);
    std::vector<VkExtensionProperties> exts(n);
    vkEnumerateDeviceExtensionProperties(physical, nullptr, &n, exts.data());
    for (const VkExtensionProperties& e : exts) {
      if (std::strcmp(e.extensionName, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME) == 0) {
        statistics_ = true;
      }
    }
    // Every feature the device has (the SPIR-V may need some), plus the
    // statistics where offered.
    VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR exec{};
    exec.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR;
    VkPhysicalDeviceFeatures2 features{};
    features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
    if (statistics_) features.pNext = &exec;
    vkGetPhysicalDeviceFeatures2(physical, &features);
    statistics_ = statistics_ && exec.pipelineExecutableInfo;
    const float priority = 1.0f;
    VkDeviceQueueCreateInfo queue{};
    queue.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
    queue.queueFamilyIndex = 0;
    queue.queueCount = 1;
    queue.pQueuePriorities = &priority;
    const char* ext = VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME;
    VkDeviceCreateInfo dci{};
    dci.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    dci.pNext = &features;
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &queue;
    dci.enabledExtensionCount = statistics_ ? 1 : 0;
    dci.ppEnabledExtensionNames = &ext;
    if (VkResult c = vkCreateDevice(physical, &dci, nullptr, &device_); c != VK_SUCCESS) {
      return absl::UnavailableError(VkError("vkCreateDevice", c));
    }
    if (statistics_) {
      properties_fn_ = reinterpret_cast<PFN_vkGetPipelineExecutablePropertiesKHR>(
          vkGetDeviceProcAddr(device_, "vkGetPipelineExecutablePropertiesKHR"));
      statistics_fn_ = reinterpret_cast<PFN_vkGetPipelineExecutableStatisticsKHR>(
          vkGetDeviceProcAddr(device_, "vkGetPipelineExecutableStatisticsKHR"));
      statistics_ = properties_fn_ && statistics_fn_;
    }
    return absl::OkStatus();
  }

  const std::string& name() const { return name_; }
  bool offers_statistics() const { return statistics_; }

  // Creates the compute pipeline of `kernel`; its statistics, empty where
  // the driver offers none.
  absl::StatusOr<std::vector<KernelStatistic>> Compile(const SpirvKernel& kernel) {
    Objects o(device_);
    std::vector<VkDescriptorSetLayoutBinding> bindings;
    for (size_t i = 0; i < kernel.descriptor_types.size(); ++i) {
      VkDescriptorSetLayoutBinding b = {};
      b.binding = static_cast<uint32_t>(i);
      b.descriptorType = static_cast<VkDescriptorType>(kernel.descriptor_types[i]);
      b.descriptorCount = 1;
      b.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
      bindings.push_back(b);
    }
    VkDescriptorSetLayoutCreateInfo dsl{};
    dsl.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
    dsl.bindingCount = static_cast<uint32_t>(bindings.size());
    dsl.pBindings = bindings.data();
    if (VkResult r = vkCreateDescriptorSetLayout(device_, &dsl, nullptr, &o.set_layout);
        r != VK_SUCCESS) {
      return absl::InternalError(VkError("vkCreateDescriptorSetLayout", r));
    }
    VkPipelineLayoutCreateInfo pl{};
    pl.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
    pl.setLayoutCount = 1;
    pl.pSetLayouts = &o.set_layout;
    if (VkResult r = vkCreatePipelineLayout(device_, &pl, nullptr, &o.layout); r != VK_SUCCESS) {
      return absl::InternalError(VkError("vkCreatePipelineLayout", r));
    }
    VkShaderModuleCreateInfo sm{};
    sm.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
    sm.codeSize = kernel.code.size() * sizeof(uint32_t);
    sm.pCode = kernel.code.data();
    if (VkResult r = vkCreateShaderModule(device_, &sm, nullptr, &o.module); r != VK_SUCCESS) {
      return absl::InternalError(VkError("vkCreateShaderModule", r));
    }
    VkComputePipelineCreateInfo cp{};
    cp.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
    cp.flags = statistics_ ? VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR : 0;
    cp.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    cp.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    cp.stage.module = o.module;
    cp.stage.pName = "main";
    cp.layout = o.layout;
    if (VkResult r = vkCreateComputePipelines(device_, VK_NULL_HANDLE, 1, &cp, nullptr,
                                              &o.pipeline);
        r != VK_SUCCESS) {
      return absl::InternalError(VkError("vkCreateComputePipelines", r));
    }
    std::vector<KernelStatistic> out;
    if (!statistics_) return out;
    VkPipelineInfoKHR info{};
    info.sType = VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR;
    info.pipeline = o.pipeline;
    uint32_t executables = 0;
    properties_fn_(device_, &info, &executables, nullptr);
    for (uint32_t e = 0; e < executables; ++e) {
      VkPipelineExecutableInfoKHR ei{};
      ei.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR;
      ei.pipeline = o.pipeline;
      ei.executableIndex = e;
      uint32_t n = 0;
      statistics_fn_(device_, &ei, &n, nullptr);
      std::vector<VkPipelineExecutableStatisticKHR> stats(n);
      for (VkPipelineExecutableStatisticKHR& st : stats) {
        st.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR;
      }
      statistics_fn_(device_, &ei, &n, stats.data());
      for (uint32_t i = 0; i < n; ++i) out.push_back({stats[i].name, ValueText(stats[i])});
    }
    return out;
  }

 private:
  // The objects of one Compile, destroyed with it.
  struct Objects {
    explicit Objects(VkDevice d) : device(d) {}
    ~Objects() {
      if (pipeline) vkDestroyPipeline(device, pipeline, nullptr);
      if (module) vkDestroyShaderModule(device, module, nullptr);
      if (layout) vkDestroyPipelineLayout(device, layout, nullptr);
      if (set_layout) vkDestroyDescriptorSetLayout(device, set_layout, nullptr);
    }
    VkDevice device;
    VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
    VkPipelineLayout layout = VK_NULL_HANDLE;
    VkShaderModule module = VK_NULL_HANDLE;
    VkPipeline pipeline = VK_NULL_HANDLE;
  };

  static std::string ValueText(const VkPipelineExecutableStatisticKHR& s) {
    switch (s.format) {
      case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR:
        return s.value.b32 ? "true" : "false";
      case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR:
        return absl::StrCat(s.value.i64);
      case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR:
        return absl::StrCat(s.value.u64);
      default:
        return absl::StrCat(s.value.f64);
    }
  }

  VkInstance instance_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  std::string name_;
  bool statistics_ = false;
  PFN_vkGetPipelineExecutablePropertiesKHR properties_fn_ = nullptr;
  PFN_vkGetPipelineExecutableStatisticsKHR statistics_fn_ = nullptr;
};

}  // namespace

absl::StatusOr<SpirvKernel> SpirvOf(const std::vector<uint8_t>& dxbc) {
  vkd3d_shader_compile_info compile = {};
  compile.type = VKD3D_SHADER_STRUCTURE_TYPE_COMPILE_INFO;
  compile.source.code = dxbc.data();
  compile.source.size = dxbc.size();
  compile.source_type = VKD3D_SHADER_SOURCE_DXBC_TPF;
  compile.target_type = VKD3D_SHADER_TARGET_SPIRV_BINARY;
  compile.log_level = VKD3D_SHADER_LOG_WARNING;
  DescriptorScan scan;
  if (absl::Status s = scan.Run(compile); !s.ok()) return s;
  SpirvKernel out;
  std::vector<vkd3d_shader_resource_binding> bindings;
  for (unsigned i = 0; i < scan.info().descriptor_count; ++i) {
    const vkd3d_shader_descriptor_info& d = scan.info().descriptors[i];
    absl::StatusOr<VkDescriptorType> type = VulkanTypeOf(d);
    if (!type.ok()) return type.status();
    vkd3d_shader_resource_binding b = {};
    b.type = d.type;
    b.register_space = d.register_space;
    b.register_index = d.register_index;
    b.shader_visibility = VKD3D_SHADER_VISIBILITY_ALL;
    b.flags = VKD3D_SHADER_BINDING_FLAG_BUFFER;
    b.binding.set = 0;
    b.binding.binding = static_cast<unsigned>(bindings.size());
    b.binding.count = 1;
    bindings.push_back(b);
    out.descriptor_types.push_back(*type);
  }
  vkd3d_shader_interface_info iface = {};
  iface.type = VKD3D_SHADER_STRUCTURE_TYPE_INTERFACE_INFO;
  iface.bindings = bindings.data();
  iface.binding_count = static_cast<unsigned>(bindings.size());
  compile.next = &iface;
  vkd3d_shader_code spirv = {};
  char* messages = nullptr;
  const int rc = vkd3d_shader_compile(&compile, &spirv, &messages);
  const std::string text = messages ? messages : "";
  vkd3d_shader_free_messages(messages);
  if (rc < 0) return absl::InternalError(absl::StrCat("vkd3d_shader_compile: ", rc, " ", text));
  out.code.resize(spirv.size / sizeof(uint32_t));
  std::memcpy(out.code.data(), spirv.code, out.code.size() * sizeof(uint32_t));
  vkd3d_shader_free_shader_code(&spirv);
  return out;
}

int PrintKernelStats(const BenchOptions& options) {
  StatsDevice device;
  if (absl::Status s = device.Init(); !s.ok()) {
    std::fprintf(stderr, "dmls_bench --kernel_stats: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  std::printf("kernel statistics from %s%s\n", device.name().c_str(),
              device.offers_statistics()
                  ? ""
                  : " (no VK_KHR_pipeline_executable_properties: pipelines created, no statistics)");
  int failures = 0;
  for (const std::string& op : options.ops) {
    for (uint64_t n : options.sizes) {
      absl::StatusOr<OpPlan> p = PlanOp(op, n, options);
      if (!p.ok()) {
        std::printf("  %s %llu: %s\n", op.c_str(), static_cast<unsigned long long>(n),
                    std::string(p.status().message()).c_str());
        ++failures;
        continue;
      }
      absl::flat_hash_set<gpu::KernelKey, gpu::KernelKeyHash> seen;
      for (const gpu::Dispatch& d : p->plan.dispatches) {
        if (!seen.insert(d.key).second) continue;
        absl::StatusOr<gpu::KernelInfo> kernel = gpu::BuildKernel(d.key);
        absl::StatusOr<SpirvKernel> spirv =
            kernel.ok() ? SpirvOf(kernel->dxbc) : absl::StatusOr<SpirvKernel>(kernel.status());
        absl::StatusOr<std::vector<KernelStatistic>> stats =
            spirv.ok() ? device.Compile(*spirv)
                       : absl::StatusOr<std::vector<KernelStatistic>>(spirv.status());
        std::printf("  stats %s %llu: %s threads %u dxbc %zu B spirv %zu B", op.c_str(),
                    static_cast<unsigned long long>(n), d.key.DebugString().c_str(),
                    kernel.ok() ? kernel->threads_per_group : 0,
                    kernel.ok() ? kernel->dxbc.size() : 0,
                    spirv.ok() ? spirv->code.size() * sizeof(uint32_t) : 0);
        if (!stats.ok()) {
          std::printf(": %s\n", std::string(stats.status().message()).c_str());
          ++failures;
          continue;
        }
        for (const KernelStatistic& s : *stats) {
          std::printf("; %s = %s", s.name.c_str(), s.value.c_str());
        }
        std::printf("\n");
      }
    }
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace dmls::bench
