#include "server/rpc/call_metadata.h"

#include <chrono>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "engine/ops/rule_status.h"

namespace dmls::server {

absl::StatusOr<uint64_t> RequestedOutputRatio(const grpc::ServerContextBase& context) {
  const auto& metadata = context.client_metadata();
  auto it = metadata.find(kOutputRatioMetadataKey);
  if (it == metadata.end()) return 0;
  const std::string value(it->second.data(), std::min<size_t>(it->second.size(), 32));
  uint64_t ratio = 0;
  if (!absl::SimpleAtoi(value, &ratio) || ratio == 0) {
    return ops::RuleStatus(absl::StatusCode::kInvalidArgument, "OUTPUT_RATIO_INVALID",
                           kOutputRatioMetadataKey,
                           absl::StrCat("metadata '", kOutputRatioMetadataKey,
                                        "' must be a positive integer"));
  }
  return ratio;
}

absl::Time DeadlineOf(const grpc::ServerContextBase& context) {
  std::chrono::system_clock::time_point deadline = context.deadline();
  // gRPC reports "no deadline" as the largest time_point.
  if (deadline == std::chrono::system_clock::time_point::max()) {
    return absl::InfiniteFuture();
  }
  return absl::FromChrono(deadline);
}

}  // namespace dmls::server
