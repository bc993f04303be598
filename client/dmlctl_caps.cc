#include "client/dmlctl_caps.h"

#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"

namespace dmls::client::ctl {
namespace {

namespace v1 = dmlserve::v1;

// "6_4" of FEATURE_LEVEL_6_4.
std::string Level(int level) {
  return std::string(absl::StripPrefix(
      v1::FeatureLevel_Name(static_cast<v1::FeatureLevel>(level)),
      "FEATURE_LEVEL_"));
}

std::string Bytes(uint64_t n) {
  if (n == 0) return "none";
  if (n % (uint64_t{1} << 30) == 0) return absl::StrCat(n >> 30, " GiB");
  if (n % (uint64_t{1} << 20) == 0) return absl::StrCat(n >> 20, " MiB");
  return absl::StrFormat("%.1f MiB", n / 1048576.0);
}

// The support tier in effect at `level`: the last one introduced by then.
const v1::SupportTier* TierAt(const v1::OperatorSupport& op, int level) {
  const v1::SupportTier* tier = nullptr;
  for (const v1::SupportTier& t : op.tiers()) {
    if (t.from_feature_level() <= level) tier = &t;
  }
  return tier;
}

std::string OperatorLine(const v1::OperatorSupport& op, int level) {
  const v1::SupportTier* tier = TierAt(op, level);
  std::string support = "not available";
  if (tier != nullptr) {
    std::vector<std::string> types;
    for (int t : tier->data_types()) {
      types.emplace_back(absl::StripPrefix(
          v1::DataType_Name(static_cast<v1::DataType>(t)), "DATA_TYPE_"));
    }
    support = absl::StrCat("ranks ", tier->min_dimension_count(), "-",
                           tier->max_dimension_count(), "  ",
                           absl::StrJoin(types, " "));
  }
  std::vector<std::string> notes;
  if (op.in_place()) notes.push_back("in-place");
  if (op.has_fusable_from()) {
    notes.push_back(absl::StrCat("fusable from ", Level(op.fusable_from())));
  }
  if (!op.parameters().empty()) {
    notes.push_back(absl::StrCat("params ", absl::StrJoin(op.parameters(), ",")));
  }
  return absl::StrFormat("  %-20s %-30s %s%s%s\n", op.field(), op.name(),
                         support, notes.empty() ? "" : "  ",
                         absl::StrJoin(notes, "  "));
}

}  // namespace

std::string CapsSummary(const v1::GetCapabilitiesResponse& caps) {
  const int level = caps.highest_feature_level();
  std::string out = absl::StrCat(
      "dmlserve ", caps.server_version(), " on ", caps.device_name(), " (",
      caps.device_kind(), ", ", caps.backend(), "), feature levels up to ",
      Level(level), "\n");
  for (int i = 0; i < caps.devices_size(); ++i) {
    const v1::DeviceInfo& d = caps.devices(i);
    absl::StrAppend(&out, "device ", i, ": ", d.name(), " (", d.kind(), ", ",
                    d.backend(), ", memory ", Bytes(d.memory_bytes()),
                    ", cap ", Bytes(d.memory_cap_bytes()), ")\n");
  }
  const v1::Limits& l = caps.limits();
  absl::StrAppend(&out, "limits: message ", Bytes(l.max_message_bytes()),
                  ", tensor ", Bytes(l.max_tensor_bytes()), ", in flight ",
                  l.max_in_flight(), ", batch ", l.max_batch_requests(),
                  " requests / ", Bytes(l.max_batch_bytes()), ", queue depth ",
                  l.max_queue_depth(), "\n");
  absl::StrAppend(&out, caps.operators_size(), " operators at feature level ",
                  Level(level), " (dmlctl caps prints every tier as JSON):\n");
  for (const v1::OperatorSupport& op : caps.operators()) {
    absl::StrAppend(&out, OperatorLine(op, level));
  }
  return out;
}

}  // namespace dmls::client::ctl
