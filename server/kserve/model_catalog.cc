#include "server/kserve/model_catalog.h"

#include <array>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace dmls::server::kserve {
namespace {

struct DatatypeName {
  DataType type;
  absl::string_view name;
};

// FP32 first: the type of the model without a suffix.
constexpr std::array<DatatypeName, 11> kDatatypes = {{
    {DataType::kFloat32, "FP32"},
    {DataType::kFloat16, "FP16"},
    {DataType::kFloat64, "FP64"},
    {DataType::kInt8, "INT8"},
    {DataType::kInt16, "INT16"},
    {DataType::kInt32, "INT32"},
    {DataType::kInt64, "INT64"},
    {DataType::kUint8, "UINT8"},
    {DataType::kUint16, "UINT16"},
    {DataType::kUint32, "UINT32"},
    {DataType::kUint64, "UINT64"},
}};

}  // namespace

absl::string_view KServeDatatype(DataType type) {
  for (const DatatypeName& d : kDatatypes) {
    if (d.type == type) return d.name;
  }
  return {};
}

std::optional<DataType> DataTypeFromKServe(absl::string_view name) {
  for (const DatatypeName& d : kDatatypes) {
    if (d.name == name) return d.type;
  }
  return std::nullopt;
}

bool HasScaleAndBias(const ops::OperatorSchema& schema) {
  return schema.kind == ops::OpKind::kMvn || schema.kind == ops::OpKind::kMvn1;
}

ModelCatalog::ModelCatalog(FeatureLevel highest) : highest_(highest) {
  for (const ops::OperatorSchema& schema : ops::AllOperators()) {
    const ops::SupportTier* tier = ops::TierFor(schema, highest);
    if (tier == nullptr) continue;  // introduced above `highest`
    const std::string base = absl::AsciiStrToLower(std::string(schema.name));
    for (const DatatypeName& d : kDatatypes) {
      if ((tier->types & ops::Bit(d.type)) == 0) continue;
      std::string name = d.type == DataType::kFloat32
                             ? base
                             : absl::StrCat(base, "_", absl::AsciiStrToLower(std::string(d.name)));
      models_.push_back(
          ModelEntry{std::move(name), &schema, d.type, tier->min_rank, tier->max_rank});
    }
  }
}

const ModelEntry* ModelCatalog::Find(absl::string_view name) const {
  for (const ModelEntry& entry : models_) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

}  // namespace dmls::server::kserve
