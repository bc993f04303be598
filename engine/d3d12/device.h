// Device: one Direct3D 12 device on a chosen adapter, created headlessly.
//
// On Linux the device comes from vkd3d: we create the vkd3d instance without
// any window-system extension (vkd3d-utils' D3D12CreateDevice asks for
// surface/swapchain extensions, which a headless server does not have),
// enumerate the Vulkan physical devices ourselves, pick one by
// DeviceOptions, and hand it to vkd3d_create_device. On Windows the same
// choice is made over DXGI adapters (WARP is the software adapter).
//
// Ownership: Device owns the ID3D12Device and (Linux) a reference to the
// process's one vkd3d instance, which every Device shares.
// Thread-safety: immutable after Create; ID3D12Device itself is free-threaded.
#ifndef DMLSERVE_ENGINE_D3D12_DEVICE_H_
#define DMLSERVE_ENGINE_D3D12_DEVICE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/core/engine.h"
#include "engine/d3d12/com_ptr.h"
#include "engine/d3d12/platform.h"

namespace dmls::d3d12 {

struct DeviceOptions {
  enum class Kind {
    kAuto,      // a hardware GPU when present, else the software adapter
    kGpu,       // a hardware GPU (discrete preferred); fail when none
    kSoftware,  // the software adapter (lavapipe on Linux, WARP on Windows)
  };
  Kind kind = Kind::kAuto;
  // Index into ListAdapters(); when set it overrides `kind`.
  std::optional<int> adapter_index;
};

// "auto" | "gpu" | "software" (case-sensitive, as on the command line).
absl::StatusOr<DeviceOptions::Kind> ParseDeviceKind(std::string_view name);
std::string_view DeviceKindName(DeviceOptions::Kind kind);

struct AdapterInfo {
  int index = -1;            // position in ListAdapters()
  std::string name;          // e.g. "NVIDIA H200", "llvmpipe (LLVM 15.0.6, 256 bits)"
  std::string kind;          // "gpu", "software" or "other"
  bool discrete = false;     // a discrete GPU (preferred among GPUs)
  uint64_t memory_bytes = 0; // device-local memory, 0 when unknown
};

class Device {
 public:
  // Fails with a message that lists the adapters seen when none matches, or
  // that says the runtime could not start at all.
  static absl::StatusOr<std::unique_ptr<Device>> Create(
      const DeviceOptions& options);
  // The adapters the runtime can see, in enumeration order.
  static absl::StatusOr<std::vector<AdapterInfo>> ListAdapters();

  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  ID3D12Device* d3d() const { return device_.get(); }
  const AdapterInfo& adapter() const { return adapter_; }
  // The Engine-facing description ("d3d12 (vkd3d)" backend on Linux).
  DeviceInfo device_info() const;

 private:
  Device() = default;

  ComPtr<ID3D12Device> device_;
  AdapterInfo adapter_;
#ifndef _WIN32
  struct vkd3d_instance* instance_ = nullptr;
#else
  // The DXGI factory and adapter the device was created on, released only
  // after it (~Device). Under Wine 8 a device outliving them crashes on its
  // release (a call into freed code); deploy/windows/run-tests.sh showed it
  // and docs/WINDOWS.md has the 40-line reproduction. Harmless on Windows.
  ComPtr<IDXGIFactory6> dxgi_factory_;
  ComPtr<IDXGIAdapter1> dxgi_adapter_;
#endif
};

// Picks the adapter for `options` from `adapters`; exposed for tests.
absl::StatusOr<int> ChooseAdapter(const std::vector<AdapterInfo>& adapters,
                                  const DeviceOptions& options);

// The adapters to run engines on, one engine each, when nothing names them:
// for kGpu and kAuto every discrete GPU when there is one; otherwise the
// one ChooseAdapter picks. `options.adapter_index` is ignored.
absl::StatusOr<std::vector<int>> ChooseAdapters(
    const std::vector<AdapterInfo>& adapters, const DeviceOptions& options);

// dmlserve's --adapters: a comma-separated list whose entries are adapter
// indices (into `adapters`) or name substrings; an index selects that
// adapter, a name every adapter whose name contains it, in index order. The
// result keeps the list's order. An adapter selected twice ("0,0") gets two
// engines: a testing knob (two engines on one device), of no use in
// production. NOT_FOUND for an entry that selects nothing, INVALID_ARGUMENT
// for an empty entry.
absl::StatusOr<std::vector<int>> ParseAdapterList(
    const std::vector<AdapterInfo>& adapters, const std::string& list);

}  // namespace dmls::d3d12

#endif  // DMLSERVE_ENGINE_D3D12_DEVICE_H_
