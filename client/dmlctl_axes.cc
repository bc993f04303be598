#include "client/dmlctl_axes.h"

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "dmlserve/v1/dmlserve.pb.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace dmls::client::ctl {
namespace {

using google::protobuf::Value;

void Encode(Value* v, bool in_mvn1) {
  if (v->has_list_value()) {
    for (Value& item : *v->mutable_list_value()->mutable_values()) {
      Encode(&item, false);
    }
    return;
  }
  if (!v->has_struct_value()) return;
  for (auto& [key, field] : *v->mutable_struct_value()->mutable_fields()) {
    if (in_mvn1 && key == "axes" && field.has_list_value()) {
      for (Value& axis : *field.mutable_list_value()->mutable_values()) {
        if (axis.has_number_value() && axis.number_value() < 0) {
          axis.set_number_value(4294967296.0 + axis.number_value());
        }
      }
      continue;
    }
    Encode(&field, key == "mvn1");
  }
}

}  // namespace

absl::StatusOr<std::string> EncodeNegativeAxes(const std::string& json) {
  Value value;
  if (!google::protobuf::util::JsonStringToMessage(json, &value).ok()) {
    return absl::InvalidArgumentError("not JSON");
  }
  Encode(&value, false);
  std::string out;
  if (!google::protobuf::util::MessageToJsonString(value, &out).ok()) {
    return absl::InternalError("cannot print the JSON back");
  }
  return out;
}

void ResolveNegativeAxes(google::protobuf::Message* body) {
  auto* mvn1 = dynamic_cast<dmlserve::v1::MeanVarianceNormalization1*>(body);
  if (mvn1 == nullptr) return;
  const int64_t rank = mvn1->input().sizes_size();
  if (rank == 0) return;
  for (uint32_t& axis : *mvn1->mutable_axes()) {
    const int64_t signed_axis = static_cast<int32_t>(axis);
    if (signed_axis < 0 && signed_axis >= -rank) {
      axis = static_cast<uint32_t>(rank + signed_axis);
    }
  }
}

}  // namespace dmls::client::ctl
