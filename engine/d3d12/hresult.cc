#include "engine/d3d12/hresult.h"

#include <cstdint>

#include "absl/strings/str_format.h"

namespace dmls::d3d12 {
namespace {

// Not every header set defines the DXGI removal codes; their values are fixed.
constexpr uint32_t kDxgiDeviceRemoved = 0x887A0005;
constexpr uint32_t kDxgiDeviceHung = 0x887A0006;
constexpr uint32_t kDxgiDeviceReset = 0x887A0007;

}  // namespace

absl::Status HrToStatus(HRESULT hr, std::string_view what) {
  if (SUCCEEDED(hr)) return absl::OkStatus();
  const uint32_t code = static_cast<uint32_t>(hr);
  const std::string msg =
      absl::StrFormat("%s failed: HRESULT 0x%08X", what, code);
  if (hr == E_OUTOFMEMORY) return absl::ResourceExhaustedError(msg);
  if (hr == E_INVALIDARG) return absl::InvalidArgumentError(msg);
  if (code == kDxgiDeviceRemoved || code == kDxgiDeviceHung ||
      code == kDxgiDeviceReset) {
    return absl::UnavailableError(msg);
  }
  return absl::InternalError(msg);
}

}  // namespace dmls::d3d12
