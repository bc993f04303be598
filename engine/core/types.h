// Core enumerations of dmlserve, numerically identical to DirectML.h
// (DirectX-Headers 1.614.1). engine/core/types_test.cc checks every value
// against the real header. Plain data, no state: thread-safe.
#ifndef DMLSERVE_ENGINE_CORE_TYPES_H_
#define DMLSERVE_ENGINE_CORE_TYPES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dmls {

// DML_TENSOR_DATA_TYPE.
enum class DataType : uint32_t {
  kUnknown = 0,
  kFloat32 = 1,
  kFloat16 = 2,
  kUint32 = 3,
  kUint16 = 4,
  kUint8 = 5,
  kInt32 = 6,
  kInt16 = 7,
  kInt8 = 8,
  kFloat64 = 9,
  kUint64 = 10,
  kInt64 = 11,
  kUint4 = 12,
  kInt4 = 13,
};
inline constexpr uint32_t kDataTypeCount = 14;

// DML_TENSOR_TYPE.
inline constexpr uint32_t kTensorTypeInvalid = 0;
inline constexpr uint32_t kTensorTypeBuffer = 1;

// DML_TENSOR_FLAGS.
inline constexpr uint32_t kTensorFlagNone = 0x0;
inline constexpr uint32_t kTensorFlagOwnedByDml = 0x1;

inline constexpr uint32_t kTensorDimensionCountMax = 5;   // legacy, pre 3_0
inline constexpr uint32_t kTensorDimensionCountMax1 = 8;  // FL 3_0+
inline constexpr uint32_t kMinimumBufferTensorAlignment = 16;

// DML_FEATURE_LEVEL.
enum class FeatureLevel : uint32_t {
  k1_0 = 0x1000,
  k2_0 = 0x2000,
  k2_1 = 0x2100,
  k3_0 = 0x3000,
  k3_1 = 0x3100,
  k4_0 = 0x4000,
  k4_1 = 0x4100,
  k5_0 = 0x5000,
  k5_1 = 0x5100,
  k5_2 = 0x5200,
  k6_0 = 0x6000,
  k6_1 = 0x6100,
  k6_2 = 0x6200,
  k6_3 = 0x6300,
  k6_4 = 0x6400,
};
inline constexpr FeatureLevel kAllFeatureLevels[] = {
    FeatureLevel::k1_0, FeatureLevel::k2_0, FeatureLevel::k2_1,
    FeatureLevel::k3_0, FeatureLevel::k3_1, FeatureLevel::k4_0,
    FeatureLevel::k4_1, FeatureLevel::k5_0, FeatureLevel::k5_1,
    FeatureLevel::k5_2, FeatureLevel::k6_0, FeatureLevel::k6_1,
    FeatureLevel::k6_2, FeatureLevel::k6_3, FeatureLevel::k6_4};
inline constexpr FeatureLevel kHighestFeatureLevel = FeatureLevel::k6_4;

// DML_OPERATOR_TYPE values of the operators in scope (OPERATORS.md §1.4),
// plus the non-fusable ones that only appear in error messages.
enum class OperatorType : uint32_t {
  kInvalid = 0,
  kElementWiseClip = 8,
  kElementWiseThreshold = 32,
  kActivationElu = 35,
  kActivationHardmax = 36,
  kActivationHardSigmoid = 37,
  kActivationIdentity = 38,
  kActivationLeakyRelu = 39,
  kActivationLinear = 40,
  kActivationLogSoftmax = 41,
  kActivationParameterizedRelu = 42,
  kActivationParametricSoftplus = 43,
  kActivationRelu = 44,
  kActivationScaledElu = 45,
  kActivationScaledTanh = 46,
  kActivationSigmoid = 47,
  kActivationSoftmax = 48,
  kActivationSoftplus = 49,
  kActivationSoftsign = 50,
  kActivationTanh = 51,
  kActivationThresholdedRelu = 52,
  kMeanVarianceNormalization = 73,
  kActivationShrink = 90,
  kMeanVarianceNormalization1 = 115,
  kActivationCelu = 128,
  kElementWiseClip1 = 153,
  kActivationGelu = 157,
  kActivationSoftmax1 = 158,
  kActivationSwish = 167,
  kActivationHardSwish = 168,
  kMeanVarianceNormalization2 = 171,
};

// Element size in bits (4 for the 4-bit types), 0 for UNKNOWN/invalid values.
uint32_t ElementBits(DataType type);
// Element size in bytes for types of 8 bits or more, 0 otherwise.
uint32_t ElementBytes(DataType type);
bool IsFloat(DataType type);   // FLOAT16/32/64
bool IsSigned(DataType type);  // INTn and floats
// A raw wire value that names a DML_TENSOR_DATA_TYPE other than UNKNOWN.
bool IsKnownDataType(uint32_t raw);

// "FLOAT32", "INT8", ...; "UNKNOWN" for anything else.
std::string_view DataTypeName(DataType type);
std::optional<DataType> DataTypeFromName(std::string_view name);

// "1_0" ... "6_4"; nullopt-safe: unknown values print as hex.
bool IsKnownFeatureLevel(uint32_t raw);
std::string FeatureLevelName(uint32_t raw);
std::optional<FeatureLevel> FeatureLevelFromName(std::string_view name);

}  // namespace dmls

#endif  // DMLSERVE_ENGINE_CORE_TYPES_H_
