#include "engine/core/types.h"

#include <cstdio>

namespace dmls {
namespace {

struct DataTypeInfo {
  DataType type;
  std::string_view name;
  uint32_t bits;
};

constexpr DataTypeInfo kDataTypes[] = {
    {DataType::kFloat32, "FLOAT32", 32}, {DataType::kFloat16, "FLOAT16", 16},
    {DataType::kUint32, "UINT32", 32},   {DataType::kUint16, "UINT16", 16},
    {DataType::kUint8, "UINT8", 8},      {DataType::kInt32, "INT32", 32},
    {DataType::kInt16, "INT16", 16},     {DataType::kInt8, "INT8", 8},
    {DataType::kFloat64, "FLOAT64", 64}, {DataType::kUint64, "UINT64", 64},
    {DataType::kInt64, "INT64", 64},     {DataType::kUint4, "UINT4", 4},
    {DataType::kInt4, "INT4", 4},
};

const DataTypeInfo* Find(DataType type) {
  for (const auto& info : kDataTypes) {
    if (info.type == type) return &info;
  }
  return nullptr;
}

}  // namespace

uint32_t ElementBits(DataType type) {
  const DataTypeInfo* info = Find(type);
  return info ? info->bits : 0;
}

uint32_t ElementBytes(DataType type) { return ElementBits(type) / 8; }

bool IsFloat(DataType type) {
  return type == DataType::kFloat32 || type == DataType::kFloat16 ||
         type == DataType::kFloat64;
}

bool IsSigned(DataType type) {
  switch (type) {
    case DataType::kInt8:
    case DataType::kInt16:
    case DataType::kInt32:
    case DataType::kInt64:
    case DataType::kInt4:
      return true;
    default:
      return IsFloat(type);
  }
}

bool IsKnownDataType(uint32_t raw) {
  return raw != 0 && raw < kDataTypeCount;
}

std::string_view DataTypeName(DataType type) {
  const DataTypeInfo* info = Find(type);
  return info ? info->name : "UNKNOWN";
}

std::optional<DataType> DataTypeFromName(std::string_view name) {
  for (const auto& info : kDataTypes) {
    if (info.name == name) return info.type;
  }
  return std::nullopt;
}

bool IsKnownFeatureLevel(uint32_t raw) {
  for (FeatureLevel fl : kAllFeatureLevels) {
    if (static_cast<uint32_t>(fl) == raw) return true;
  }
  return false;
}

std::string FeatureLevelName(uint32_t raw) {
  char buf[16];
  if (IsKnownFeatureLevel(raw)) {
    std::snprintf(buf, sizeof(buf), "%u_%u", raw >> 12, (raw >> 8) & 0xF);
  } else {
    std::snprintf(buf, sizeof(buf), "0x%X", raw);
  }
  return buf;
}

std::optional<FeatureLevel> FeatureLevelFromName(std::string_view name) {
  for (FeatureLevel fl : kAllFeatureLevels) {
    if (FeatureLevelName(static_cast<uint32_t>(fl)) == name) return fl;
  }
  return std::nullopt;
}

}  // namespace dmls
