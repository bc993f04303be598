#include "engine/directml/dml_device.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "engine/d3d12/hresult.h"

namespace dmls::directml {
namespace {

using CreateDeviceFn = HRESULT(WINAPI*)(ID3D12Device*, DML_CREATE_DEVICE_FLAGS, REFIID, void**);

}  // namespace

DML_BINDING_PROPERTIES BindingProperties(IDMLDispatchable* dispatchable) {
#if defined(__MINGW32__)
  // Vtable slot: IUnknown 3 + IDMLObject 4 + IDMLDeviceChild 1 +
  // IDMLPageable 0, then GetBindingProperties, IDMLDispatchable's first.
  using Fn =
      DML_BINDING_PROPERTIES*(STDMETHODCALLTYPE*)(IDMLDispatchable*, DML_BINDING_PROPERTIES*);
  void** vtable = *reinterpret_cast<void***>(dispatchable);
  DML_BINDING_PROPERTIES props{};
  reinterpret_cast<Fn>(vtable[8])(dispatchable, &props);
  return props;
#else
  return dispatchable->GetBindingProperties();
#endif
}

absl::StatusOr<std::unique_ptr<DmlDevice>> DmlDevice::Create(const DmlDeviceOptions& options) {
  HMODULE module = LoadLibraryA(options.dll_path.c_str());
  if (module == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("LoadLibrary(", options.dll_path, ") failed: error ", GetLastError()));
  }
  auto create = reinterpret_cast<CreateDeviceFn>(
      reinterpret_cast<void*>(GetProcAddress(module, "DMLCreateDevice")));
  if (create == nullptr) {
    return absl::UnavailableError(absl::StrCat(options.dll_path, " has no DMLCreateDevice export"));
  }
  std::unique_ptr<DmlDevice> d(new DmlDevice());
  absl::StatusOr<std::unique_ptr<d3d12::Device>> device = d3d12::Device::Create(options.device);
  if (!device.ok()) return device.status();
  d->device_ = *std::move(device);
  const HRESULT hr = create(d->device_->d3d(), DML_CREATE_DEVICE_FLAG_NONE, __uuidof(IDMLDevice),
                            reinterpret_cast<void**>(d->dml_.Put()));
  if (FAILED(hr)) {
    return absl::UnavailableError(
        absl::StrCat("DMLCreateDevice failed: hr=0x", absl::Hex(static_cast<uint32_t>(hr))));
  }
  DML_FEATURE_LEVEL levels[std::size(kAllFeatureLevels)];
  for (size_t i = 0; i < std::size(kAllFeatureLevels); ++i) {
    levels[i] = static_cast<DML_FEATURE_LEVEL>(kAllFeatureLevels[i]);
  }
  DML_FEATURE_QUERY_FEATURE_LEVELS query{static_cast<UINT>(std::size(levels)), levels};
  DML_FEATURE_DATA_FEATURE_LEVELS data{};
  DMLS_RETURN_IF_FAILED(d->dml_->CheckFeatureSupport(DML_FEATURE_FEATURE_LEVELS, sizeof query,
                                                     &query, sizeof data, &data),
                        "IDMLDevice::CheckFeatureSupport(FEATURE_LEVELS)");
  d->max_feature_level_ = static_cast<FeatureLevel>(data.MaxSupportedFeatureLevel);
  return d;
}

DmlDevice::~DmlDevice() {
  dml_.Reset();  // before the D3D12 device it holds
  device_.reset();
}

bool DmlDevice::SupportsDataType(DataType type) const {
  DML_FEATURE_QUERY_TENSOR_DATA_TYPE_SUPPORT query{static_cast<DML_TENSOR_DATA_TYPE>(type)};
  DML_FEATURE_DATA_TENSOR_DATA_TYPE_SUPPORT data{};
  const HRESULT hr = dml_->CheckFeatureSupport(DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT, sizeof query,
                                               &query, sizeof data, &data);
  return SUCCEEDED(hr) && data.IsSupported;
}

DeviceInfo DmlDevice::device_info() const {
  DeviceInfo info = device_->device_info();
  info.backend =
      absl::StrCat("DirectML.dll FL ", FeatureLevelName(static_cast<uint32_t>(max_feature_level_)),
                   " on ", info.backend);
  return info;
}

}  // namespace dmls::directml
