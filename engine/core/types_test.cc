// Checks the enumerations of types.h against the real DirectML.h of
// DirectX-Headers (OPERATORS.md §1), plus the helpers of types.cc.
#include "engine/core/types.h"

// DirectML.h needs the WSL Windows-type adapter on Linux; with no Windows
// target set it declares the latest DML_TARGET_VERSION (0x6400).
#ifndef _WIN32
#include <wsl/winadapter.h>
#endif
#define DML_TARGET_VERSION_USE_LATEST 1
#include <DirectML.h>

#include <cstdint>
#include <set>

#include "gtest/gtest.h"

namespace dmls {
namespace {

static_assert(DML_TARGET_VERSION == 0x6400, "DirectML.h 1.614 expected");

template <typename E>
constexpr uint32_t Raw(E e) {
  return static_cast<uint32_t>(e);
}

// One of our enumerators and the DirectML.h one it must equal.
template <typename Ours, typename Dml>
struct Mirrored {
  Ours ours;
  Dml dml;
};

TEST(CoreTypesTest, DataTypesMatchDirectML) {
  const Mirrored<DataType, DML_TENSOR_DATA_TYPE> rows[] = {
      {DataType::kUnknown, DML_TENSOR_DATA_TYPE_UNKNOWN},
      {DataType::kFloat32, DML_TENSOR_DATA_TYPE_FLOAT32},
      {DataType::kFloat16, DML_TENSOR_DATA_TYPE_FLOAT16},
      {DataType::kUint32, DML_TENSOR_DATA_TYPE_UINT32},
      {DataType::kUint16, DML_TENSOR_DATA_TYPE_UINT16},
      {DataType::kUint8, DML_TENSOR_DATA_TYPE_UINT8},
      {DataType::kInt32, DML_TENSOR_DATA_TYPE_INT32},
      {DataType::kInt16, DML_TENSOR_DATA_TYPE_INT16},
      {DataType::kInt8, DML_TENSOR_DATA_TYPE_INT8},
      {DataType::kFloat64, DML_TENSOR_DATA_TYPE_FLOAT64},
      {DataType::kUint64, DML_TENSOR_DATA_TYPE_UINT64},
      {DataType::kInt64, DML_TENSOR_DATA_TYPE_INT64},
      {DataType::kUint4, DML_TENSOR_DATA_TYPE_UINT4},
      {DataType::kInt4, DML_TENSOR_DATA_TYPE_INT4},
  };
  for (const auto& r : rows) EXPECT_EQ(Raw(r.ours), Raw(r.dml));
  EXPECT_EQ(kDataTypeCount, Raw(DML_TENSOR_DATA_TYPE_INT4) + 1);
  EXPECT_EQ(std::size(rows), size_t{kDataTypeCount});
}

TEST(CoreTypesTest, FeatureLevelsMatchDirectML) {
  const Mirrored<FeatureLevel, DML_FEATURE_LEVEL> rows[] = {
      {FeatureLevel::k1_0, DML_FEATURE_LEVEL_1_0},
      {FeatureLevel::k2_0, DML_FEATURE_LEVEL_2_0},
      {FeatureLevel::k2_1, DML_FEATURE_LEVEL_2_1},
      {FeatureLevel::k3_0, DML_FEATURE_LEVEL_3_0},
      {FeatureLevel::k3_1, DML_FEATURE_LEVEL_3_1},
      {FeatureLevel::k4_0, DML_FEATURE_LEVEL_4_0},
      {FeatureLevel::k4_1, DML_FEATURE_LEVEL_4_1},
      {FeatureLevel::k5_0, DML_FEATURE_LEVEL_5_0},
      {FeatureLevel::k5_1, DML_FEATURE_LEVEL_5_1},
      {FeatureLevel::k5_2, DML_FEATURE_LEVEL_5_2},
      {FeatureLevel::k6_0, DML_FEATURE_LEVEL_6_0},
      {FeatureLevel::k6_1, DML_FEATURE_LEVEL_6_1},
      {FeatureLevel::k6_2, DML_FEATURE_LEVEL_6_2},
      {FeatureLevel::k6_3, DML_FEATURE_LEVEL_6_3},
      {FeatureLevel::k6_4, DML_FEATURE_LEVEL_6_4},
  };
  ASSERT_EQ(std::size(rows), std::size(kAllFeatureLevels));
  for (size_t i = 0; i < std::size(rows); ++i) {
    EXPECT_EQ(Raw(rows[i].ours), Raw(rows[i].dml));
    EXPECT_EQ(kAllFeatureLevels[i], rows[i].ours);  // ascending order
  }
  EXPECT_EQ(Raw(kHighestFeatureLevel), Raw(DML_FEATURE_LEVEL_6_4));
}

TEST(CoreTypesTest, OperatorTypesMatchDirectML) {
  const Mirrored<OperatorType, DML_OPERATOR_TYPE> rows[] = {
      {OperatorType::kInvalid, DML_OPERATOR_INVALID},
      {OperatorType::kElementWiseClip, DML_OPERATOR_ELEMENT_WISE_CLIP},
      {OperatorType::kElementWiseThreshold,
       DML_OPERATOR_ELEMENT_WISE_THRESHOLD},
      {OperatorType::kActivationElu, DML_OPERATOR_ACTIVATION_ELU},
      {OperatorType::kActivationHardmax, DML_OPERATOR_ACTIVATION_HARDMAX},
      {OperatorType::kActivationHardSigmoid,
       DML_OPERATOR_ACTIVATION_HARD_SIGMOID},
      {OperatorType::kActivationIdentity, DML_OPERATOR_ACTIVATION_IDENTITY},
      {OperatorType::kActivationLeakyRelu, DML_OPERATOR_ACTIVATION_LEAKY_RELU},
      {OperatorType::kActivationLinear, DML_OPERATOR_ACTIVATION_LINEAR},
      {OperatorType::kActivationLogSoftmax,
       DML_OPERATOR_ACTIVATION_LOG_SOFTMAX},
      {OperatorType::kActivationParameterizedRelu,
       DML_OPERATOR_ACTIVATION_PARAMETERIZED_RELU},
      {OperatorType::kActivationParametricSoftplus,
       DML_OPERATOR_ACTIVATION_PARAMETRIC_SOFTPLUS},
      {OperatorType::kActivationRelu, DML_OPERATOR_ACTIVATION_RELU},
      {OperatorType::kActivationScaledElu, DML_OPERATOR_ACTIVATION_SCALED_ELU},
      {OperatorType::kActivationScaledTanh,
       DML_OPERATOR_ACTIVATION_SCALED_TANH},
      {OperatorType::kActivationSigmoid, DML_OPERATOR_ACTIVATION_SIGMOID},
      {OperatorType::kActivationSoftmax, DML_OPERATOR_ACTIVATION_SOFTMAX},
      {OperatorType::kActivationSoftplus, DML_OPERATOR_ACTIVATION_SOFTPLUS},
      {OperatorType::kActivationSoftsign, DML_OPERATOR_ACTIVATION_SOFTSIGN},
      {OperatorType::kActivationTanh, DML_OPERATOR_ACTIVATION_TANH},
      {OperatorType::kActivationThresholdedRelu,
       DML_OPERATOR_ACTIVATION_THRESHOLDED_RELU},
      {OperatorType::kMeanVarianceNormalization,
       DML_OPERATOR_MEAN_VARIANCE_NORMALIZATION},
      {OperatorType::kActivationShrink, DML_OPERATOR_ACTIVATION_SHRINK},
      {OperatorType::kMeanVarianceNormalization1,
       DML_OPERATOR_MEAN_VARIANCE_NORMALIZATION1},
      {OperatorType::kActivationCelu, DML_OPERATOR_ACTIVATION_CELU},
      {OperatorType::kElementWiseClip1, DML_OPERATOR_ELEMENT_WISE_CLIP1},
      {OperatorType::kActivationGelu, DML_OPERATOR_ACTIVATION_GELU},
      {OperatorType::kActivationSoftmax1, DML_OPERATOR_ACTIVATION_SOFTMAX1},
      {OperatorType::kActivationSwish, DML_OPERATOR_ACTIVATION_SWISH},
      {OperatorType::kActivationHardSwish, DML_OPERATOR_ACTIVATION_HARD_SWISH},
      {OperatorType::kMeanVarianceNormalization2,
       DML_OPERATOR_MEAN_VARIANCE_NORMALIZATION2},
  };
  std::set<uint32_t> seen;
  for (const auto& r : rows) {
    EXPECT_EQ(Raw(r.ours), Raw(r.dml));
    EXPECT_TRUE(seen.insert(Raw(r.ours)).second);
  }
}

TEST(CoreTypesTest, TensorConstantsMatchDirectML) {
  EXPECT_EQ(kTensorTypeInvalid, Raw(DML_TENSOR_TYPE_INVALID));
  EXPECT_EQ(kTensorTypeBuffer, Raw(DML_TENSOR_TYPE_BUFFER));
  EXPECT_EQ(kTensorFlagNone, Raw(DML_TENSOR_FLAG_NONE));
  EXPECT_EQ(kTensorFlagOwnedByDml, Raw(DML_TENSOR_FLAG_OWNED_BY_DML));
  EXPECT_EQ(kTensorDimensionCountMax, DML_TENSOR_DIMENSION_COUNT_MAX);
  EXPECT_EQ(kTensorDimensionCountMax1, DML_TENSOR_DIMENSION_COUNT_MAX1);
  EXPECT_EQ(kMinimumBufferTensorAlignment, DML_MINIMUM_BUFFER_TENSOR_ALIGNMENT);
}

TEST(CoreTypesTest, ElementSizes) {
  EXPECT_EQ(ElementBits(DataType::kFloat32), 32u);
  EXPECT_EQ(ElementBits(DataType::kFloat16), 16u);
  EXPECT_EQ(ElementBits(DataType::kUint8), 8u);
  EXPECT_EQ(ElementBits(DataType::kInt64), 64u);
  EXPECT_EQ(ElementBits(DataType::kFloat64), 64u);
  EXPECT_EQ(ElementBits(DataType::kInt4), 4u);
  EXPECT_EQ(ElementBits(DataType::kUnknown), 0u);
  EXPECT_EQ(ElementBits(static_cast<DataType>(14)), 0u);
  EXPECT_EQ(ElementBytes(DataType::kInt16), 2u);
  EXPECT_EQ(ElementBytes(DataType::kUint4), 0u);
  for (uint32_t v = 1; v < kDataTypeCount; ++v) {
    EXPECT_GT(ElementBits(static_cast<DataType>(v)), 0u) << v;
  }
}

TEST(CoreTypesTest, Classification) {
  EXPECT_TRUE(IsFloat(DataType::kFloat16));
  EXPECT_TRUE(IsFloat(DataType::kFloat64));
  EXPECT_FALSE(IsFloat(DataType::kInt32));
  EXPECT_TRUE(IsSigned(DataType::kInt8));
  EXPECT_TRUE(IsSigned(DataType::kInt4));
  EXPECT_TRUE(IsSigned(DataType::kFloat32));
  EXPECT_FALSE(IsSigned(DataType::kUint64));
  EXPECT_FALSE(IsKnownDataType(0));
  EXPECT_TRUE(IsKnownDataType(1));
  EXPECT_TRUE(IsKnownDataType(13));
  EXPECT_FALSE(IsKnownDataType(14));
}

TEST(CoreTypesTest, Names) {
  EXPECT_EQ(DataTypeName(DataType::kFloat32), "FLOAT32");
  EXPECT_EQ(DataTypeName(DataType::kUnknown), "UNKNOWN");
  for (uint32_t v = 1; v < kDataTypeCount; ++v) {
    const DataType t = static_cast<DataType>(v);
    EXPECT_EQ(DataTypeFromName(DataTypeName(t)), t);
  }
  EXPECT_FALSE(DataTypeFromName("FLOAT128").has_value());
  EXPECT_EQ(FeatureLevelName(0x3100), "3_1");
  EXPECT_EQ(FeatureLevelName(0x2200), "0x2200");
  EXPECT_FALSE(IsKnownFeatureLevel(0x2200));
  for (FeatureLevel fl : kAllFeatureLevels) {
    EXPECT_TRUE(IsKnownFeatureLevel(Raw(fl)));
    EXPECT_EQ(FeatureLevelFromName(FeatureLevelName(Raw(fl))), fl);
  }
  EXPECT_FALSE(FeatureLevelFromName("7_0").has_value());
}

}  // namespace
}  // namespace dmls
