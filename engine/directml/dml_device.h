// DmlDevice: Microsoft's DirectML.dll, loaded at run time, on one of our
// Direct3D 12 devices (engine/d3d12/device.h: the same adapter choice as the
// D3D12 engine). Windows only (built if(WIN32)); under Wine on Debian it runs
// on Wine's vkd3d over lavapipe (docs/WINDOWS.md, docs/DIRECTML.md).
//
// No import library and no DLL in the repository: the DLL is found by
// LoadLibrary from `dll_path` (a bare name searches beside the executable and
// the usual places); deploy/windows/fetch-directml.sh fetches one.
//
// Ownership: owns the IDMLDevice and the d3d12::Device under it (released in
// that order). DirectML.dll stays loaded for the rest of the process: a
// FreeLibrary while the runtime may still hold threads or caches buys
// nothing for a server that loads it once.
// Thread-safety: immutable after Create; IDMLDevice and ID3D12Device are
// free-threaded.
#ifndef DMLSERVE_ENGINE_DIRECTML_DML_DEVICE_H_
#define DMLSERVE_ENGINE_DIRECTML_DML_DEVICE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "engine/core/engine.h"
#include "engine/core/types.h"
#include "engine/d3d12/com_ptr.h"
#include "engine/d3d12/device.h"
#include "engine/directml/dml_api.h"

namespace dmls::directml {

struct DmlDeviceOptions {
  // Passed to LoadLibraryA as is.
  std::string dll_path = "DirectML.dll";
  d3d12::DeviceOptions device;
};

class DmlDevice {
 public:
  // UNAVAILABLE when the DLL does not load, has no DMLCreateDevice, or
  // refuses the device; the d3d12::Device's own errors otherwise.
  static absl::StatusOr<std::unique_ptr<DmlDevice>> Create(const DmlDeviceOptions& options);
  ~DmlDevice();
  DmlDevice(const DmlDevice&) = delete;
  DmlDevice& operator=(const DmlDevice&) = delete;

  IDMLDevice* dml() const { return dml_.get(); }
  ID3D12Device* d3d() const { return device_->d3d(); }
  // The highest DML_FEATURE_LEVEL the DLL reports on this device.
  FeatureLevel max_feature_level() const { return max_feature_level_; }
  // DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT: whether operators may use `type`.
  bool SupportsDataType(DataType type) const;
  // The adapter, with backend "DirectML.dll FL <max> on d3d12".
  DeviceInfo device_info() const;

 private:
  DmlDevice() = default;
  std::unique_ptr<d3d12::Device> device_;
  d3d12::ComPtr<IDMLDevice> dml_;
  FeatureLevel max_feature_level_ = FeatureLevel::k1_0;
};

// IDMLDispatchable::GetBindingProperties. MinGW: the method returns a
// struct, which GCC and MSVC pass differently for member functions, so it is
// called through the vtable in MSVC's form (out-pointer after `this`).
DML_BINDING_PROPERTIES BindingProperties(IDMLDispatchable* dispatchable);

}  // namespace dmls::directml

#endif  // DMLSERVE_ENGINE_DIRECTML_DML_DEVICE_H_
