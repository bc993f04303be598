#include "engine/core/execute_request.h"

#include <utility>

#include "absl/strings/cord.h"

namespace dmls {

namespace {

// The status payload that marks UNAVAILABLE as a lost device.
constexpr char kDeviceLostUrl[] = "type.dmlserve/dmls.DeviceLost";

}  // namespace

absl::Status DeviceLostError(absl::string_view message) {
  absl::Status status = absl::UnavailableError(message);
  status.SetPayload(kDeviceLostUrl, absl::Cord("1"));
  return status;
}

bool IsDeviceLost(const absl::Status& status) {
  return absl::IsUnavailable(status) &&
         status.GetPayload(kDeviceLostUrl).has_value();
}

void HandBackRequest(ExecuteRequest& request) {
  if (!request.on_device_lost) return;
  std::function<void(ExecuteRequest)> hook =
      std::move(request.on_device_lost);
  request.on_device_lost = nullptr;
  hook(std::move(request));
}

}  // namespace dmls
