#include "engine/d3d12/device.h"

#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/str_join.h"
#include "engine/core/mutex.h"
#include "engine/d3d12/fence.h"
#include "engine/d3d12/hresult.h"

namespace dmls::d3d12 {

absl::StatusOr<DeviceOptions::Kind> ParseDeviceKind(std::string_view name) {
  if (name == "auto") return DeviceOptions::Kind::kAuto;
  if (name == "gpu") return DeviceOptions::Kind::kGpu;
  if (name == "software") return DeviceOptions::Kind::kSoftware;
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown device kind '", std::string(name), "' (expected auto, gpu or software)"));
}

std::string_view DeviceKindName(DeviceOptions::Kind kind) {
  switch (kind) {
    case DeviceOptions::Kind::kAuto: return "auto";
    case DeviceOptions::Kind::kGpu: return "gpu";
    case DeviceOptions::Kind::kSoftware: return "software";
  }
  return "auto";
}

namespace {

std::string DescribeAdapters(const std::vector<AdapterInfo>& adapters) {
  if (adapters.empty()) return "no adapters found";
  std::vector<std::string> parts;
  for (const AdapterInfo& a : adapters) {
    parts.push_back(absl::StrCat("#", a.index, " ", a.name, " (", a.kind, ")"));
  }
  return absl::StrCat("adapters: ", absl::StrJoin(parts, ", "));
}

}  // namespace

absl::StatusOr<std::vector<int>> ChooseAdapters(
    const std::vector<AdapterInfo>& adapters, const DeviceOptions& options) {
  if (options.kind == DeviceOptions::Kind::kGpu ||
      options.kind == DeviceOptions::Kind::kAuto) {
    std::vector<int> discrete;
    for (const AdapterInfo& a : adapters) {
      if (a.kind == "gpu" && a.discrete) discrete.push_back(a.index);
    }
    if (!discrete.empty()) return discrete;
  }
  DeviceOptions one = options;
  one.adapter_index.reset();
  absl::StatusOr<int> chosen = ChooseAdapter(adapters, one);
  if (!chosen.ok()) return chosen.status();
  return std::vector<int>{*chosen};
}

absl::StatusOr<std::vector<int>> ParseAdapterList(
    const std::vector<AdapterInfo>& adapters, const std::string& list) {
  std::vector<int> chosen;
  for (absl::string_view entry : absl::StrSplit(list, ',')) {
    entry = absl::StripAsciiWhitespace(entry);
    if (entry.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--adapters=\"", list, "\" has an empty entry"));
    }
    int index = -1;
    if (absl::SimpleAtoi(entry, &index)) {
      if (index < 0 || index >= static_cast<int>(adapters.size())) {
        return absl::NotFoundError(absl::StrCat(
            "--adapters: adapter index ", index, " out of range; ",
            DescribeAdapters(adapters)));
      }
      chosen.push_back(index);
      continue;
    }
    bool found = false;
    for (const AdapterInfo& a : adapters) {
      if (absl::StrContains(a.name, entry)) {
        chosen.push_back(a.index);
        found = true;
      }
    }
    if (!found) {
      return absl::NotFoundError(absl::StrCat("--adapters: \"", entry,
                                              "\" matches no adapter; ",
                                              DescribeAdapters(adapters)));
    }
  }
  return chosen;
}

absl::StatusOr<int> ChooseAdapter(const std::vector<AdapterInfo>& adapters,
                                  const DeviceOptions& options) {
  if (options.adapter_index) {
    const int i = *options.adapter_index;
    if (i < 0 || i >= static_cast<int>(adapters.size())) {
      return absl::NotFoundError(absl::StrCat("adapter index ", i,
                                              " out of range; ",
                                              DescribeAdapters(adapters)));
    }
    return i;
  }
  int best_gpu = -1;
  int software = -1;
  for (const AdapterInfo& a : adapters) {
    if (a.kind == "gpu") {
      // The first discrete GPU wins; an integrated one only if none exists.
      if (best_gpu < 0 || (a.discrete && !adapters[best_gpu].discrete)) {
        best_gpu = a.index;
      }
    } else if (a.kind == "software" && software < 0) {
      software = a.index;
    }
  }
  switch (options.kind) {
    case DeviceOptions::Kind::kGpu:
      if (best_gpu >= 0) return best_gpu;
      return absl::NotFoundError(absl::StrCat(
          "no hardware GPU adapter found (--device=gpu); ",
          DescribeAdapters(adapters)));
    case DeviceOptions::Kind::kSoftware:
      if (software >= 0) return software;
      return absl::NotFoundError(absl::StrCat(
          "no software adapter found (--device=software); ",
          DescribeAdapters(adapters)));
    case DeviceOptions::Kind::kAuto:
      if (best_gpu >= 0) return best_gpu;
      if (software >= 0) return software;
      return absl::NotFoundError(absl::StrCat(
          "no usable Direct3D 12 adapter; ", DescribeAdapters(adapters)));
  }
  return absl::InternalError("unreachable");
}

DeviceInfo Device::device_info() const {
  DeviceInfo info;
  info.name = adapter_.name;
  info.kind = adapter_.kind;
#ifdef _WIN32
  info.backend = "d3d12";
#else
  info.backend = "d3d12 (vkd3d)";
#endif
  info.memory_bytes = adapter_.memory_bytes;
  return info;
}

#ifndef _WIN32
// ---------------------------------------------------------------- Linux --

namespace {

// The instance has no window-system extensions: a headless server has no
// surface to present to, and asking for one fails on machines without it.
absl::StatusOr<struct vkd3d_instance*> CreateInstance() {
  struct vkd3d_application_info app = {};
  app.type = VKD3D_STRUCTURE_TYPE_APPLICATION_INFO;
  app.application_name = "dmlserve";
  app.api_version = VKD3D_API_VERSION_1_2;

  struct vkd3d_instance_create_info info = {};
  info.type = VKD3D_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  info.next = &app;
  info.pfn_signal_event = SignalFenceEvent;
  info.wchar_size = sizeof(WCHAR);
  // Same loader for vkd3d and for our own enumeration below.
  info.pfn_vkGetInstanceProcAddr = vkGetInstanceProcAddr;

  struct vkd3d_instance* instance = nullptr;
  const HRESULT hr = vkd3d_create_instance(&info, &instance);
  if (FAILED(hr)) {
    return absl::UnavailableError(absl::StrCat(
        "cannot start the Direct3D 12 runtime: vkd3d_create_instance: ",
        HrToStatus(hr, "vkd3d_create_instance").message(),
        " (is a Vulkan driver installed? lavapipe: mesa-vulkan-drivers)"));
  }
  return instance;
}

// The process's one vkd3d instance, made on first use and kept for the
// life of the process: every device and every adapter listing shares it
// (each caller gets a reference of its own and drops it with
// vkd3d_instance_decref). NVIDIA's driver refuses new Vulkan instances
// (VK_ERROR_INCOMPATIBLE_DRIVER) after a few dozen in one process, even
// when each was destroyed: GPU test binaries that made an engine per test
// ran out on the H100s. A failed creation is retried by the next caller.
absl::StatusOr<struct vkd3d_instance*> AcquireInstance() {
  static Mutex mu;
  static struct vkd3d_instance* shared ABSL_GUARDED_BY(mu) = nullptr;
  MutexLock lock(&mu);
  if (shared == nullptr) {
    absl::StatusOr<struct vkd3d_instance*> created = CreateInstance();
    if (!created.ok()) return created.status();
    shared = *created;  // this reference is the process's
  }
  vkd3d_instance_incref(shared);
  return shared;
}

absl::StatusOr<std::vector<VkPhysicalDevice>> PhysicalDevices(
    struct vkd3d_instance* instance) {
  VkInstance vk = vkd3d_instance_get_vk_instance(instance);
  uint32_t count = 0;
  if (vkEnumeratePhysicalDevices(vk, &count, nullptr) != VK_SUCCESS) {
    return absl::UnavailableError("vkEnumeratePhysicalDevices failed");
  }
  std::vector<VkPhysicalDevice> devices(count);
  if (count > 0 &&
      vkEnumeratePhysicalDevices(vk, &count, devices.data()) != VK_SUCCESS) {
    return absl::UnavailableError("vkEnumeratePhysicalDevices failed");
  }
  devices.resize(count);
  return devices;
}

std::vector<AdapterInfo> Describe(const std::vector<VkPhysicalDevice>& devs) {
  std::vector<AdapterInfo> out;
  for (size_t i = 0; i < devs.size(); ++i) {
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(devs[i], &props);
    VkPhysicalDeviceMemoryProperties mem;
    vkGetPhysicalDeviceMemoryProperties(devs[i], &mem);
    AdapterInfo a;
    a.index = static_cast<int>(i);
    a.name = props.deviceName;
    switch (props.deviceType) {
      case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
        a.kind = "gpu";
        a.discrete = true;
        break;
      case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
        a.kind = "gpu";
        break;
      case VK_PHYSICAL_DEVICE_TYPE_CPU:
        a.kind = "software";
        break;
      default:
        a.kind = "other";
        break;
    }
    for (uint32_t h = 0; h < mem.memoryHeapCount; ++h) {
      if (mem.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) {
        a.memory_bytes += mem.memoryHeaps[h].size;
      }
    }
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<AdapterInfo>> Device::ListAdapters() {
  absl::StatusOr<struct vkd3d_instance*> instance = AcquireInstance();
  if (!instance.ok()) return instance.status();
  absl::StatusOr<std::vector<VkPhysicalDevice>> devs =
      PhysicalDevices(*instance);
  std::vector<AdapterInfo> out;
  if (devs.ok()) out = Describe(*devs);
  vkd3d_instance_decref(*instance);
  if (!devs.ok()) return devs.status();
  return out;
}

absl::StatusOr<std::unique_ptr<Device>> Device::Create(
    const DeviceOptions& options) {
  absl::StatusOr<struct vkd3d_instance*> instance = AcquireInstance();
  if (!instance.ok()) return instance.status();
  std::unique_ptr<Device> device(new Device());
  device->instance_ = *instance;  // released by ~Device, also on failure

  absl::StatusOr<std::vector<VkPhysicalDevice>> devs =
      PhysicalDevices(device->instance_);
  if (!devs.ok()) return devs.status();
  const std::vector<AdapterInfo> adapters = Describe(*devs);
  absl::StatusOr<int> chosen = ChooseAdapter(adapters, options);
  if (!chosen.ok()) return chosen.status();
  device->adapter_ = adapters[*chosen];

  struct vkd3d_device_create_info info = {};
  info.type = VKD3D_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  info.minimum_feature_level = D3D_FEATURE_LEVEL_11_0;
  info.instance = device->instance_;
  info.vk_physical_device = (*devs)[*chosen];
  const HRESULT hr = vkd3d_create_device(
      &info, DMLS_IID_PPV(ID3D12Device, device->device_.Put()));
  if (FAILED(hr)) {
    return absl::UnavailableError(absl::StrCat(
        "cannot create a Direct3D 12 device on adapter #", *chosen, " ",
        device->adapter_.name, ": ",
        HrToStatus(hr, "vkd3d_create_device").message()));
  }
  return device;
}

Device::~Device() {
  device_.Reset();  // the device holds its own instance reference
  if (instance_ != nullptr) vkd3d_instance_decref(instance_);
}

#else
// -------------------------------------------------------------- Windows --

namespace {

struct DxgiAdapters {
  ComPtr<IDXGIFactory6> factory;
  std::vector<ComPtr<IDXGIAdapter1>> adapters;
  std::vector<AdapterInfo> infos;
};

std::string Narrow(const wchar_t* w) {
  std::string s;
  for (; *w; ++w) s.push_back(*w < 128 ? static_cast<char>(*w) : '?');
  return s;
}

// A CPU rasterizer: Microsoft's Basic Render Driver (WARP), flagged software
// and known by its PCI ids 1414:008c; or a Mesa software driver, whose
// Vulkan vendor id is VK_VENDOR_ID_MESA (0x10005): that is how Wine with its
// Vulkan renderer shows lavapipe (deploy/windows/wine-env.sh). Mesa's
// hardware drivers report the hardware's own vendor.
bool IsSoftwareAdapter(const DXGI_ADAPTER_DESC1& desc) {
  constexpr UINT kMicrosoftVendor = 0x1414;
  constexpr UINT kBasicRenderDriver = 0x8c;
  constexpr UINT kMesaVendor = 0x10005;
  return (desc.Flags & DXGI_ADAPTER_FLAG_SOFTWARE) != 0 ||
         (desc.VendorId == kMicrosoftVendor && desc.DeviceId == kBasicRenderDriver) ||
         desc.VendorId == kMesaVendor;
}

absl::StatusOr<DxgiAdapters> EnumerateDxgi() {
  DxgiAdapters out;
  DMLS_RETURN_IF_FAILED(
      CreateDXGIFactory2(0, DMLS_IID_PPV(IDXGIFactory6, out.factory.Put())),
      "CreateDXGIFactory2");
  for (UINT i = 0;; ++i) {
    ComPtr<IDXGIAdapter1> adapter;
    if (out.factory->EnumAdapters1(i, adapter.Put()) == DXGI_ERROR_NOT_FOUND) {
      break;
    }
    DXGI_ADAPTER_DESC1 desc;
    adapter->GetDesc1(&desc);
    AdapterInfo a;
    a.index = static_cast<int>(i);
    a.name = Narrow(desc.Description);
    a.kind = IsSoftwareAdapter(desc) ? "software" : "gpu";
    a.discrete = a.kind == "gpu" && desc.DedicatedVideoMemory > 0;
    a.memory_bytes = desc.DedicatedVideoMemory;
    out.infos.push_back(a);
    out.adapters.push_back(std::move(adapter));
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<AdapterInfo>> Device::ListAdapters() {
  absl::StatusOr<DxgiAdapters> dxgi = EnumerateDxgi();
  if (!dxgi.ok()) return dxgi.status();
  return dxgi->infos;
}

absl::StatusOr<std::unique_ptr<Device>> Device::Create(
    const DeviceOptions& options) {
  absl::StatusOr<DxgiAdapters> dxgi = EnumerateDxgi();
  if (!dxgi.ok()) return dxgi.status();
  absl::StatusOr<int> chosen = ChooseAdapter(dxgi->infos, options);
  if (!chosen.ok()) return chosen.status();
  std::unique_ptr<Device> device(new Device());
  device->adapter_ = dxgi->infos[*chosen];
  const HRESULT hr = D3D12CreateDevice(
      dxgi->adapters[*chosen].get(), D3D_FEATURE_LEVEL_11_0,
      DMLS_IID_PPV(ID3D12Device, device->device_.Put()));
  if (FAILED(hr)) return HrToStatus(hr, "D3D12CreateDevice");
  device->dxgi_adapter_ = std::move(dxgi->adapters[*chosen]);
  device->dxgi_factory_ = std::move(dxgi->factory);
  return device;
}

Device::~Device() {
  device_.Reset();  // before the DXGI adapter and factory (device.h)
}

#endif  // _WIN32

}  // namespace dmls::d3d12
