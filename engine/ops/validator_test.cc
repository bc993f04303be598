#include "engine/ops/validator.h"

#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "engine/core/tensor_desc.h"
#include "engine/ops/schema.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dmls::ops {
namespace {

using ::testing::HasSubstr;

constexpr uint32_t Raw(FeatureLevel fl) { return static_cast<uint32_t>(fl); }
constexpr uint32_t Raw(OperatorType t) { return static_cast<uint32_t>(t); }

// Sizes {2,3,2,3,...} of `rank` entries (dimension 1, the channel, is 3).
std::vector<uint64_t> TestSizes(uint32_t rank) {
  std::vector<uint64_t> sizes(rank);
  for (uint32_t i = 0; i < rank; ++i) sizes[i] = (i % 2 == 0) ? 2 : 3;
  return sizes;
}

// A descriptor of `schema` that is valid wherever `rank` and `type` are in
// the applicable support table: packed tensors, harmless parameter values
// (1.0 satisfies CELU and SOFTPLUS), MVN1 reducing the last axis.
OperatorDesc MakeValid(const OperatorSchema& schema, uint32_t rank = 4,
                       DataType type = DataType::kFloat32) {
  OperatorDesc op;
  op.type = Raw(schema.type);
  op.input = MakeTensorDesc(type, TestSizes(rank));
  op.output = MakeTensorDesc(type, TestSizes(rank));
  switch (schema.kind) {
    case OpKind::kUnaryScaleBias:
      op.min = -1.0f;
      op.max = 1.0f;
      break;
    case OpKind::kActivation:
      for (int i = 0; i < 2; ++i) {
        if (!schema.params[i].empty()) op.activation[i] = 1.0f;
      }
      break;
    case OpKind::kMvn1:
      op.axis_count = 1;
      op.axes = {rank - 1};
      op.normalize_variance = 1;
      op.epsilon = 1e-5f;
      break;
    case OpKind::kMvn:
      op.cross_channel = 0;
      op.normalize_variance = 1;
      op.epsilon = 1e-5f;
      break;
  }
  return op;
}

OperatorDesc Valid(std::string_view field, uint32_t rank = 4,
                   DataType type = DataType::kFloat32) {
  const OperatorSchema* s = FindOperatorByField(field);
  EXPECT_NE(s, nullptr) << field;
  return MakeValid(*s, rank, type);
}

std::string FirstRule(const OperatorDesc& op, FeatureLevel fl,
                      bool in_place = false) {
  std::vector<Violation> v = ValidateAll(op, Raw(fl), in_place);
  return v.empty() ? "-" : v.front().rule;
}

// The rule catalogue of OPERATORS.md §9. TENSOR_INVALID ("not a tensor
// description") has no C++ form: a TensorDesc is a TensorDesc or absent.
const std::vector<std::string>& Catalogue() {
  static const auto* rules =
      new std::vector<std::string>{"FL_UNKNOWN",
                                   "OP_UNKNOWN",
                                   "OP_NOT_AVAILABLE",
                                   "PARAM_MISSING",
                                   "PARAM_INVALID",
                                   "TENSOR_MISSING",
                                   "TENSOR_TYPE_INVALID",
                                   "DATATYPE_UNKNOWN",
                                   "FLAGS_INVALID",
                                   "FLAGS_OWNED_BY_DML_ON_OUTPUT",
                                   "DIMCOUNT_RANGE",
                                   "SIZES_LENGTH_MISMATCH",
                                   "STRIDES_LENGTH_MISMATCH",
                                   "SIZE_ZERO",
                                   "SIZE_INVALID",
                                   "STRIDE_INVALID",
                                   "TENSOR_TOO_LARGE",
                                   "TOTAL_SIZE_TOO_SMALL",
                                   "TOTAL_SIZE_NOT_DWORD_MULTIPLE",
                                   "ALIGNMENT_INVALID",
                                   "DIMCOUNT_UNSUPPORTED",
                                   "DATATYPE_UNSUPPORTED",
                                   "DATATYPE_MISMATCH",
                                   "DIMCOUNT_MISMATCH",
                                   "SIZES_MISMATCH",
                                   "OUTPUT_OVERLAP",
                                   "SCALEBIAS_64BIT_UNSUPPORTED",
                                   "CELU_ALPHA_INVALID",
                                   "SOFTPLUS_STEEPNESS_RANGE",
                                   "MVN_SCALE_BIAS_PAIRING",
                                   "MVN_SCALE_BIAS_BROADCAST",
                                   "MVN_AXIS_COUNT_MISMATCH",
                                   "MVN_AXES_EMPTY",
                                   "MVN_AXIS_OUT_OF_RANGE",
                                   "MVN_AXES_DUPLICATE",
                                   "MVN_EPSILON_INVALID",
                                   "FUSED_NOT_FUSABLE",
                                   "FUSED_NOT_AVAILABLE",
                                   "FUSED_TENSORS_NOT_NULL",
                                   "FUSED_PARAM_INVALID",
                                   "INPLACE_NOT_SUPPORTED",
                                   "INPLACE_LAYOUT_MISMATCH"};
  return *rules;
}

// One broken descriptor: a valid `op` at `fl`, changed by `mutate`, must
// give `rule` at `field` as its first violation.
struct RuleCase {
  std::string rule;
  std::string field;
  std::string op;
  FeatureLevel fl;
  std::function<void(OperatorDesc&)> mutate;
  bool in_place = false;
  uint32_t raw_fl = 0;  // overrides fl when non-zero
};

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr uint64_t k4G = uint64_t{1} << 32;
using FL = FeatureLevel;

FusedActivationDesc Fused(OperatorType t, std::optional<float> p0 = 1.0f,
                          std::optional<float> p1 = 1.0f) {
  FusedActivationDesc fa;
  fa.type = Raw(t);
  fa.params = {p0, p1};
  return fa;
}

std::vector<RuleCase> RuleCases() {
  auto in = [](OperatorDesc& op) -> TensorDesc& { return *op.input; };
  auto out = [](OperatorDesc& op) -> TensorDesc& { return *op.output; };
  return {
      {"FL_UNKNOWN", "feature_level", "celu", FL::k6_4, [](auto&) {}, false,
       0x2200},
      {"OP_UNKNOWN", "operator", "celu", FL::k6_4,
       [](OperatorDesc& op) {
         op.type = Raw(OperatorType::kActivationSoftmax);
       }},
      {"OP_NOT_AVAILABLE", "operator.celu", "celu", FL::k2_1, [](auto&) {}},
      {"OP_NOT_AVAILABLE", "operator.mvn1", "mvn1", FL::k2_0, [](auto&) {}},
      {"TENSOR_MISSING", "operator.threshold.input", "threshold", FL::k1_0,
       [](OperatorDesc& op) { op.input.reset(); }},
      {"TENSOR_MISSING", "operator.mvn1.output", "mvn1", FL::k3_1,
       [](OperatorDesc& op) { op.output.reset(); }},
      {"TENSOR_TYPE_INVALID", "operator.celu.input.type", "celu", FL::k3_0,
       [&](OperatorDesc& op) { in(op).tensor_type = kTensorTypeInvalid; }},
      {"DATATYPE_UNKNOWN", "operator.celu.output.data_type", "celu", FL::k3_0,
       [&](OperatorDesc& op) { out(op).data_type = 14; }},
      {"DATATYPE_UNKNOWN", "operator.celu.input.data_type", "celu", FL::k3_0,
       [&](OperatorDesc& op) { in(op).data_type = 0; }},
      {"FLAGS_INVALID", "operator.relu.input.flags", "relu", FL::k1_0,
       [&](OperatorDesc& op) { in(op).flags = 2; }},
      {"FLAGS_OWNED_BY_DML_ON_OUTPUT", "operator.relu.output.flags", "relu",
       FL::k1_0,
       [&](OperatorDesc& op) { out(op).flags = kTensorFlagOwnedByDml; }},
      {"DIMCOUNT_RANGE", "operator.tanh.input.dimension_count", "tanh",
       FL::k3_0, [&](OperatorDesc& op) { in(op).dimension_count = 9; }},
      {"DIMCOUNT_RANGE", "operator.tanh.input.dimension_count", "tanh",
       FL::k3_0, [&](OperatorDesc& op) { in(op).sizes.clear(); }},
      {"SIZES_LENGTH_MISMATCH", "operator.tanh.input.sizes", "tanh", FL::k3_0,
       [&](OperatorDesc& op) { in(op).dimension_count = 3; }},
      {"SIZE_INVALID", "operator.mvn1.input.sizes[2]", "mvn1", FL::k3_1,
       [&](OperatorDesc& op) { in(op).sizes[2] = k4G; }},
      {"SIZE_ZERO", "operator.mvn1.input.sizes[2]", "mvn1", FL::k3_1,
       [&](OperatorDesc& op) { in(op).sizes[2] = 0; }},
      {"STRIDES_LENGTH_MISMATCH", "operator.threshold.output.strides",
       "threshold", FL::k3_0,
       [&](OperatorDesc& op) { out(op).strides = std::vector<uint64_t>{1}; }},
      {"STRIDE_INVALID", "operator.threshold.output.strides[0]", "threshold",
       FL::k3_0,
       [&](OperatorDesc& op) {
         out(op).strides = std::vector<uint64_t>{k4G, 9, 3, 1};
       }},
      {"TENSOR_TOO_LARGE", "operator.elu.input.sizes", "elu", FL::k3_0,
       [&](OperatorDesc& op) {
         in(op).sizes = {65536, 65536, 1, 1};  // 2^32 elements
       }},
      {"TENSOR_TOO_LARGE", "operator.elu.input.strides", "elu", FL::k3_0,
       [&](OperatorDesc& op) {
         in(op).strides = std::vector<uint64_t>{0xFFFFFFFFull, 6, 3, 1};
       }},
      {"TENSOR_TOO_LARGE", "operator.elu.input.total_tensor_size_in_bytes",
       "elu", FL::k3_0,
       [&](OperatorDesc& op) { in(op).total_tensor_size_in_bytes = 4 * k4G; }},
      {"TOTAL_SIZE_TOO_SMALL", "operator.elu.output.total_tensor_size_in_bytes",
       "elu", FL::k3_0,
       [&](OperatorDesc& op) { out(op).total_tensor_size_in_bytes -= 4; }},
      {"TOTAL_SIZE_NOT_DWORD_MULTIPLE",
       "operator.elu.output.total_tensor_size_in_bytes", "elu", FL::k3_0,
       [&](OperatorDesc& op) { out(op).total_tensor_size_in_bytes += 2; }},
      {"ALIGNMENT_INVALID",
       "operator.elu.input.guaranteed_base_offset_alignment", "elu", FL::k3_0,
       [&](OperatorDesc& op) { in(op).guaranteed_base_offset_alignment = 24; }},
      {"ALIGNMENT_INVALID",
       "operator.elu.input.guaranteed_base_offset_alignment", "elu", FL::k3_0,
       [&](OperatorDesc& op) { in(op).guaranteed_base_offset_alignment = 2; }},
      {"DIMCOUNT_UNSUPPORTED", "operator.threshold.input.dimension_count",
       "threshold", FL::k2_1,
       [&](OperatorDesc& op) { op = Valid("threshold", 8); }},
      {"DATATYPE_UNSUPPORTED", "operator.threshold.input.data_type",
       "threshold", FL::k2_0,
       [&](OperatorDesc& op) { op = Valid("threshold", 4, DataType::kInt8); }},
      {"DATATYPE_UNSUPPORTED", "operator.mvn1.scale.data_type", "mvn1",
       FL::k6_4,
       [&](OperatorDesc& op) {
         op.scale = MakeTensorDesc(DataType::kInt32, {1, 3, 1, 1});
         op.bias = MakeTensorDesc(DataType::kFloat32, {1, 3, 1, 1});
       }},
      {"DATATYPE_MISMATCH", "operator.clip.output.data_type", "clip", FL::k3_0,
       [&](OperatorDesc& op) {
         out(op) = MakeTensorDesc(DataType::kFloat16, out(op).sizes);
       }},
      {"DATATYPE_MISMATCH", "operator.mvn.bias.data_type", "mvn", FL::k1_0,
       [&](OperatorDesc& op) {
         op.scale = MakeTensorDesc(DataType::kFloat32, {1, 3, 1, 1});
         op.bias = MakeTensorDesc(DataType::kFloat16, {1, 3, 1, 1});
       }},
      {"DIMCOUNT_MISMATCH", "operator.mvn1.scale.dimension_count", "mvn1",
       FL::k3_1,
       [&](OperatorDesc& op) {
         op.scale = MakeTensorDesc(DataType::kFloat32, {3});
         op.bias = MakeTensorDesc(DataType::kFloat32, {1, 3, 1, 1});
       }},
      {"DIMCOUNT_MISMATCH", "operator.sigmoid.output.dimension_count",
       "sigmoid", FL::k3_0,
       [&](OperatorDesc& op) {
         out(op) = MakeTensorDesc(DataType::kFloat32, {2, 3, 6});
       }},
      {"SIZES_MISMATCH", "operator.sigmoid.output.sizes", "sigmoid", FL::k3_0,
       [&](OperatorDesc& op) {
         out(op) = MakeTensorDesc(DataType::kFloat32, {2, 3, 2, 4});
       }},
      {"OUTPUT_OVERLAP", "operator.threshold.output.strides", "threshold",
       FL::k1_0,
       [&](OperatorDesc& op) {
         out(op) = MakeTensorDesc(DataType::kFloat32, {2, 3, 2, 3},
                                  std::vector<uint64_t>{9, 3, 0, 1});
       }},
      {"OUTPUT_OVERLAP", "operator.threshold.output.strides", "threshold",
       FL::k3_0,  // interleaved: decided by enumerating the offsets
       [&](OperatorDesc& op) {
         in(op) = MakeTensorDesc(DataType::kFloat32, {3, 2});
         out(op) = MakeTensorDesc(DataType::kFloat32, {3, 2},
                                  std::vector<uint64_t>{1, 2});
       }},
      {"PARAM_MISSING", "operator.threshold.min", "threshold", FL::k1_0,
       [](OperatorDesc& op) { op.min.reset(); }},
      {"PARAM_MISSING", "operator.clip.max", "clip", FL::k1_0,
       [](OperatorDesc& op) { op.max.reset(); }},
      {"PARAM_MISSING", "operator.scaled_elu.gamma", "scaled_elu", FL::k1_0,
       [](OperatorDesc& op) { op.activation[1].reset(); }},
      {"PARAM_MISSING", "operator.mvn1.axis_count", "mvn1", FL::k2_1,
       [](OperatorDesc& op) { op.axis_count.reset(); }},
      {"PARAM_MISSING", "operator.mvn.cross_channel", "mvn", FL::k1_0,
       [](OperatorDesc& op) { op.cross_channel.reset(); }},
      {"PARAM_MISSING", "operator.mvn1.epsilon", "mvn1", FL::k2_1,
       [](OperatorDesc& op) { op.epsilon.reset(); }},
      {"PARAM_MISSING", "operator.mvn1.fused_activation.celu.alpha", "mvn1",
       FL::k3_0,
       [](OperatorDesc& op) {
         op.fused_activation = Fused(OperatorType::kActivationCelu, {}, {});
       }},
      {"PARAM_INVALID", "operator.clip.scale_bias.bias", "clip", FL::k1_0,
       [](OperatorDesc& op) {
         op.scale_bias = ScaleBias{2.0f, {}};
       }},
      {"PARAM_INVALID", "operator.mvn1.normalize_variance", "mvn1", FL::k2_1,
       [](OperatorDesc& op) { op.normalize_variance = 2; }},
      {"PARAM_INVALID", "operator.mvn.cross_channel", "mvn", FL::k1_0,
       [](OperatorDesc& op) { op.cross_channel = 7; }},
      {"SCALEBIAS_64BIT_UNSUPPORTED", "operator.clip.scale_bias", "clip",
       FL::k5_0,
       [](OperatorDesc& op) {
         op = Valid("clip", 3, DataType::kInt64);
         op.scale_bias = ScaleBias{1.0f, 0.0f};
       }},
      {"CELU_ALPHA_INVALID", "operator.celu.alpha", "celu", FL::k3_0,
       [](OperatorDesc& op) { op.activation[0] = 0.0f; }},
      {"CELU_ALPHA_INVALID", "operator.celu.alpha", "celu", FL::k6_4,
       [](OperatorDesc& op) { op.activation[0] = kNaN; }},
      {"SOFTPLUS_STEEPNESS_RANGE", "operator.softplus.steepness", "softplus",
       FL::k6_3, [](OperatorDesc& op) { op.activation[0] = 0.5f; }},
      {"SOFTPLUS_STEEPNESS_RANGE", "operator.softplus.steepness", "softplus",
       FL::k6_4, [](OperatorDesc& op) { op.activation[0] = 0.0f; }},
      {"SOFTPLUS_STEEPNESS_RANGE", "operator.softplus.steepness", "softplus",
       FL::k6_4, [](OperatorDesc& op) { op.activation[0] = -kInf; }},
      {"MVN_SCALE_BIAS_PAIRING", "operator.mvn1.bias", "mvn1", FL::k5_1,
       [](OperatorDesc& op) {
         op.scale = MakeTensorDesc(DataType::kFloat32, {1, 3, 1, 1});
       }},
      {"MVN_SCALE_BIAS_PAIRING", "operator.mvn.scale", "mvn", FL::k1_0,
       [](OperatorDesc& op) {
         op.bias = MakeTensorDesc(DataType::kFloat32, {1, 3, 1, 1});
       }},
      {"MVN_SCALE_BIAS_BROADCAST", "operator.mvn1.scale.sizes[1]", "mvn1",
       FL::k3_1,
       [](OperatorDesc& op) {
         op.scale = MakeTensorDesc(DataType::kFloat32, {1, 1, 1, 1});
         op.bias = MakeTensorDesc(DataType::kFloat32, {1, 1, 1, 1});
       }},
      {"MVN_SCALE_BIAS_BROADCAST", "operator.mvn1.bias.sizes[3]", "mvn1",
       FL::k6_4,
       [](OperatorDesc& op) {
         op.bias = MakeTensorDesc(DataType::kFloat32, {1, 1, 1, 2});
       }},
      {"MVN_AXIS_COUNT_MISMATCH", "operator.mvn1.axis_count", "mvn1", FL::k2_1,
       [](OperatorDesc& op) { op.axis_count = 2; }},
      {"MVN_AXES_EMPTY", "operator.mvn1.axis_count", "mvn1", FL::k2_1,
       [](OperatorDesc& op) {
         op.axis_count = 0;
         op.axes.clear();
       }},
      {"MVN_AXIS_OUT_OF_RANGE", "operator.mvn1.axes[1]", "mvn1", FL::k2_1,
       [](OperatorDesc& op) {
         op.axes = {2, 4};
         op.axis_count = 2;
       }},
      {"MVN_AXES_DUPLICATE", "operator.mvn1.axes[1]", "mvn1", FL::k2_1,
       [](OperatorDesc& op) {
         op.axes = {3, 3};
         op.axis_count = 2;
       }},
      {"MVN_EPSILON_INVALID", "operator.mvn1.epsilon", "mvn1", FL::k2_1,
       [](OperatorDesc& op) { op.epsilon = -1e-5f; }},
      {"MVN_EPSILON_INVALID", "operator.mvn.epsilon", "mvn", FL::k2_1,
       [](OperatorDesc& op) { op.epsilon = kInf; }},
      {"FUSED_NOT_FUSABLE", "operator.mvn1.fused_activation", "mvn1", FL::k6_4,
       [](OperatorDesc& op) {
         op.fused_activation = Fused(OperatorType::kElementWiseClip);
       }},
      {"FUSED_NOT_FUSABLE", "operator.mvn1.fused_activation", "mvn1", FL::k6_4,
       [](OperatorDesc& op) { op.fused_activation.emplace(); }},
      {"FUSED_NOT_AVAILABLE", "operator.mvn1.fused_activation.celu", "mvn1",
       FL::k2_1,
       [](OperatorDesc& op) {
         op.fused_activation = Fused(OperatorType::kActivationCelu);
       }},
      {"FUSED_NOT_AVAILABLE", "operator.mvn.fused_activation.gelu", "mvn",
       FL::k5_0,
       [](OperatorDesc& op) {
         op.fused_activation = Fused(OperatorType::kActivationGelu);
       }},
      {"FUSED_TENSORS_NOT_NULL", "operator.mvn.fused_activation.relu", "mvn",
       FL::k1_0,
       [](OperatorDesc& op) {
         op.fused_activation = Fused(OperatorType::kActivationRelu);
         op.fused_activation->has_tensors = true;
       }},
      {"FUSED_PARAM_INVALID", "operator.mvn1.fused_activation.celu.alpha",
       "mvn1", FL::k3_0,
       [](OperatorDesc& op) {
         op.fused_activation = Fused(OperatorType::kActivationCelu, 0.0f);
       }},
      {"FUSED_PARAM_INVALID",
       "operator.mvn1.fused_activation.softplus.steepness", "mvn1", FL::k6_3,
       [](OperatorDesc& op) {
         op.fused_activation = Fused(OperatorType::kActivationSoftplus, 0.5f);
       }},
      {"INPLACE_NOT_SUPPORTED", "in_place", "mvn1", FL::k6_4, [](auto&) {},
       true},
      {"INPLACE_NOT_SUPPORTED", "in_place", "gelu", FL::k6_4, [](auto&) {},
       true},
      {"INPLACE_LAYOUT_MISMATCH", "in_place", "celu", FL::k6_4,
       [&](OperatorDesc& op) {
         out(op) = MakeTensorDesc(DataType::kFloat32, out(op).sizes,
                                  std::vector<uint64_t>{24, 8, 4, 1});
       },
       true},
  };
}

TEST(ValidatorTest, EveryCatalogueRuleIsProducedWithItsField) {
  std::set<std::string> produced;
  for (const RuleCase& c : RuleCases()) {
    OperatorDesc op = Valid(c.op);
    c.mutate(op);
    const uint32_t fl = c.raw_fl ? c.raw_fl : Raw(c.fl);
    std::vector<Violation> v = ValidateAll(op, fl, c.in_place);
    ASSERT_FALSE(v.empty()) << c.rule << " " << c.field;
    EXPECT_EQ(v.front().rule, c.rule) << v.front().Description();
    EXPECT_EQ(v.front().field, c.field) << v.front().Description();
    EXPECT_FALSE(v.front().message.empty());
    produced.insert(v.front().rule);
  }
  for (const std::string& rule : Catalogue()) {
    EXPECT_EQ(produced.count(rule), 1u) << "rule never produced: " << rule;
  }
}

TEST(ValidatorTest, BaseDescriptorsAreValidWhereTheOperatorExists) {
  for (const OperatorSchema& s : AllOperators()) {
    for (FeatureLevel fl : kAllFeatureLevels) {
      const OperatorDesc op = MakeValid(s);
      const bool exists = Raw(fl) >= Raw(s.introduced);
      // Every operator accepts 4-D FLOAT32 from its introduction on.
      EXPECT_EQ(FirstRule(op, fl), exists ? "-" : "OP_NOT_AVAILABLE")
          << s.name << " at " << FeatureLevelName(Raw(fl));
    }
  }
}

// The feature level just below `fl` in kAllFeatureLevels (nullopt for 1_0).
std::optional<FeatureLevel> Below(FeatureLevel fl) {
  std::optional<FeatureLevel> prev;
  for (FeatureLevel f : kAllFeatureLevels) {
    if (f == fl) return prev;
    prev = f;
  }
  return prev;
}

bool RankIn(const SupportTier& t, uint32_t r) {
  return r >= t.min_rank && r <= t.max_rank;
}

// For every support tier of every operator: a rank and a data type that the
// tier adds are rejected at the level just below it and accepted at it.
TEST(ValidatorTest, EverySupportTierBoundary) {
  int checked = 0;
  for (const OperatorSchema& s : AllOperators()) {
    for (size_t k = 0; k < s.tiers.size(); ++k) {
      const SupportTier& tier = s.tiers[k];
      const std::optional<FeatureLevel> below = Below(tier.from);
      const std::string where =
          std::string(s.name) + " tier " + FeatureLevelName(Raw(tier.from));
      if (k == 0) {
        // The first table starts where the operator is introduced.
        EXPECT_EQ(tier.from, s.introduced) << where;
        EXPECT_EQ(FirstRule(MakeValid(s, tier.min_rank), tier.from), "-")
            << where;
        if (below) {
          EXPECT_EQ(FirstRule(MakeValid(s, tier.min_rank), *below),
                    "OP_NOT_AVAILABLE")
              << where;
        }
        ++checked;
        continue;
      }
      const SupportTier& prev = s.tiers[k - 1];
      ASSERT_TRUE(below.has_value());
      const DataType base_type = DataType::kFloat32;  // in every tier
      ASSERT_TRUE(prev.types & Bit(base_type));
      for (uint32_t r = 1; r <= kTensorDimensionCountMax1; ++r) {
        if (!RankIn(tier, r) || RankIn(prev, r)) continue;
        EXPECT_EQ(FirstRule(MakeValid(s, r, base_type), *below),
                  "DIMCOUNT_UNSUPPORTED")
            << where << " rank " << r;
        EXPECT_EQ(FirstRule(MakeValid(s, r, base_type), tier.from), "-")
            << where << " rank " << r;
        ++checked;
      }
      const uint32_t rank = prev.min_rank;  // in both tiers
      ASSERT_TRUE(RankIn(tier, rank));
      for (uint32_t t = 1; t < kDataTypeCount; ++t) {
        const DataType type = static_cast<DataType>(t);
        if (!(tier.types & Bit(type)) || (prev.types & Bit(type))) continue;
        EXPECT_EQ(FirstRule(MakeValid(s, rank, type), *below),
                  "DATATYPE_UNSUPPORTED")
            << where << " " << DataTypeName(type);
        EXPECT_EQ(FirstRule(MakeValid(s, rank, type), tier.from), "-")
            << where << " " << DataTypeName(type);
        ++checked;
      }
    }
    // Outside the highest tier: every other rank and type is rejected.
    const SupportTier& top = s.tiers.back();
    for (uint32_t r = 1; r <= kTensorDimensionCountMax1; ++r) {
      if (RankIn(top, r)) continue;
      EXPECT_EQ(FirstRule(MakeValid(s, r), FeatureLevel::k6_4),
                "DIMCOUNT_UNSUPPORTED")
          << s.name << " rank " << r;
    }
    for (uint32_t t = 1; t < kDataTypeCount; ++t) {
      const DataType type = static_cast<DataType>(t);
      if (top.types & Bit(type)) continue;
      EXPECT_EQ(FirstRule(MakeValid(s, top.min_rank, type), FeatureLevel::k6_4),
                "DATATYPE_UNSUPPORTED")
          << s.name << " " << DataTypeName(type);
    }
  }
  EXPECT_GT(checked, 40);
}

// FL boundaries that change rules rather than tables (§4.3.3, §5.2, §6).
TEST(ValidatorTest, RuleFeatureLevelBoundaries) {
  OperatorDesc mvn1 = Valid("mvn1");
  mvn1.scale = MakeTensorDesc(DataType::kFloat32, {1, 3, 1, 1});
  EXPECT_EQ(FirstRule(mvn1, FL::k5_1), "MVN_SCALE_BIAS_PAIRING");
  EXPECT_EQ(FirstRule(mvn1, FL::k5_2), "-");

  OperatorDesc chan = Valid("mvn1");
  chan.scale = MakeTensorDesc(DataType::kFloat32, {1, 1, 2, 1});
  chan.bias = MakeTensorDesc(DataType::kFloat32, {2, 1, 1, 3});
  EXPECT_EQ(FirstRule(chan, FL::k3_1), "MVN_SCALE_BIAS_BROADCAST");
  EXPECT_EQ(FirstRule(chan, FL::k4_0), "-");
  // MVN (CrossChannel form) broadcasts the channel at every FL.
  OperatorDesc mvn = Valid("mvn");
  mvn.scale = *chan.scale;
  mvn.bias = *chan.bias;
  EXPECT_EQ(FirstRule(mvn, FL::k1_0), "-");
  // Zero strides broadcast at any FL (§4.3.3 "Strides").
  OperatorDesc zero = Valid("mvn1");
  zero.scale = MakeTensorDesc(DataType::kFloat32, {2, 3, 2, 3},
                              std::vector<uint64_t>{0, 1, 0, 0});
  zero.bias = zero.scale;
  EXPECT_EQ(FirstRule(zero, FL::k2_1), "-");

  OperatorDesc sp = Valid("softplus");
  sp.activation[0] = 0.5f;
  EXPECT_EQ(FirstRule(sp, FL::k6_3), "SOFTPLUS_STEEPNESS_RANGE");
  EXPECT_EQ(FirstRule(sp, FL::k6_4), "-");
  sp.activation[0] = -2.0f;
  EXPECT_EQ(FirstRule(sp, FL::k6_4), "-");

  for (const OperatorSchema& act : AllOperators()) {
    if (!act.fusable_from) continue;
    OperatorDesc f = Valid("mvn1");
    f.fused_activation = Fused(act.type);
    const std::optional<FeatureLevel> below = Below(*act.fusable_from);
    const FeatureLevel at =
        Raw(*act.fusable_from) < Raw(FL::k2_1) ? FL::k2_1 : *act.fusable_from;
    EXPECT_EQ(FirstRule(f, at), "-") << act.name;
    if (below && Raw(*below) >= Raw(FL::k2_1)) {
      EXPECT_EQ(FirstRule(f, *below), "FUSED_NOT_AVAILABLE") << act.name;
    }
  }
}

TEST(ValidatorTest, AcceptsEdgeCasesTheSpecAllows) {
  OperatorDesc celu = Valid("celu");
  celu.activation[0] = -1.5f;  // negative Alpha follows the formula
  EXPECT_EQ(FirstRule(celu, FL::k3_0), "-");
  // In-place with NULL strides on one side and packed on the other.
  celu.output->strides = PackedStrides(celu.output->sizes);
  EXPECT_EQ(FirstRule(celu, FL::k3_0, true), "-");
  // OWNED_BY_DML on inputs, bigger totals, alignment 16.
  OperatorDesc mvn1 = Valid("mvn1");
  mvn1.input->flags = kTensorFlagOwnedByDml;
  mvn1.input->total_tensor_size_in_bytes += 64;
  mvn1.input->guaranteed_base_offset_alignment = 16;
  mvn1.axes = {3, 0, 2, 1};  // every axis, any order
  mvn1.axis_count = 4;
  mvn1.epsilon = 0.0f;
  EXPECT_EQ(FirstRule(mvn1, FL::k2_1), "-");
  // An interleaved output that does not overlap (enumeration path).
  OperatorDesc th = Valid("threshold");
  th.input = MakeTensorDesc(DataType::kFloat32, {3, 2});
  th.output =
      MakeTensorDesc(DataType::kFloat32, {3, 2}, std::vector<uint64_t>{2, 3});
  EXPECT_EQ(FirstRule(th, FL::k3_0), "-");
  // A 2^32-1 element tensor is the largest allowed.
  OperatorDesc big = Valid("relu", 1);
  big.input = MakeTensorDesc(DataType::kFloat32, {0xFFFFFFFFull});
  big.output = big.input;
  EXPECT_EQ(FirstRule(big, FL::k3_0), "-");
  // ...but INT8 rounds its total up to 2^32 bytes, one element too many.
  big.input = MakeTensorDesc(DataType::kInt8, {0xFFFFFFFFull});
  big.output = big.input;
  EXPECT_EQ(FirstRule(big, FL::k5_1), "TENSOR_TOO_LARGE");
  // IndexOfLastElement + 1 <= 2^32-1, exactly at the limit and one past it.
  OperatorDesc strided = Valid("relu", 1);
  strided.input = MakeTensorDesc(DataType::kFloat32, {2},
                                 std::vector<uint64_t>{0xFFFFFFFEull});
  EXPECT_EQ(FirstRule(strided, FL::k3_0), "-");
  strided.input = MakeTensorDesc(DataType::kFloat32, {2},
                                 std::vector<uint64_t>{0xFFFFFFFFull});
  EXPECT_EQ(FirstRule(strided, FL::k3_0), "TENSOR_TOO_LARGE");
  EXPECT_EQ(ValidateAll(strided, Raw(FL::k3_0), false).front().field,
            "operator.relu.input.strides");
  // TotalTensorSizeInBytes / element size <= 2^32-1.
  OperatorDesc total = Valid("relu", 1);
  total.input->total_tensor_size_in_bytes = 4 * 0xFFFFFFFFull;
  EXPECT_EQ(FirstRule(total, FL::k3_0), "-");
  total.input->total_tensor_size_in_bytes += 4;
  EXPECT_EQ(FirstRule(total, FL::k3_0), "TENSOR_TOO_LARGE");
}

TEST(ValidatorTest, ValidateAllReportsIndependentViolationsAfterTheFirst) {
  OperatorDesc op = Valid("mvn1");
  op.input->sizes[0] = 0;  // SIZE_ZERO (first)
  op.output->flags = 4;    // FLAGS_INVALID
  op.axes = {1, 1};        // MVN_AXES_DUPLICATE
  op.axis_count = 2;
  op.epsilon = kNaN;          // MVN_EPSILON_INVALID
  op.normalize_variance = 3;  // PARAM_INVALID
  std::vector<Violation> v = ValidateAll(op, Raw(FL::k3_1), true);
  std::vector<std::string> rules;
  for (const Violation& x : v) rules.push_back(x.rule);
  EXPECT_THAT(rules, ::testing::ElementsAre(
                         "SIZE_ZERO", "FLAGS_INVALID", "MVN_AXES_DUPLICATE",
                         "PARAM_INVALID", "MVN_EPSILON_INVALID",
                         "INPLACE_NOT_SUPPORTED"));
  EXPECT_EQ(v[0].field, "operator.mvn1.input.sizes[0]");
  EXPECT_EQ(v[1].field, "operator.mvn1.output.flags");

  // Several tier and parameter problems at once.
  OperatorDesc c = Valid("celu", 8, DataType::kInt8);
  c.activation[0] = 0.0f;
  v = ValidateAll(c, Raw(FL::k6_4), false);
  rules.clear();
  for (const Violation& x : v) rules.push_back(x.rule);
  EXPECT_THAT(rules, ::testing::ElementsAre("DATATYPE_UNSUPPORTED",
                                            "DATATYPE_UNSUPPORTED",
                                            "CELU_ALPHA_INVALID"));
}

TEST(ValidatorTest, ValidateReturnsTheFirstViolationAsInvalidArgument) {
  OperatorDesc op = Valid("celu");
  EXPECT_TRUE(Validate(op, Raw(FL::k3_0), false).ok());
  op.activation[0] = kInf;
  absl::Status s = Validate(op, Raw(FL::k3_0), false);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("CELU_ALPHA_INVALID: "));
  EXPECT_EQ(ValidateAll(op, Raw(FL::k3_0), false).front().Description(),
            s.message());
}

TEST(ValidatorTest, UnknownFeatureLevelStillChecksTheTensors) {
  OperatorDesc op = Valid("relu");
  op.input->sizes[1] = 0;
  std::vector<Violation> v = ValidateAll(op, 0x2200, false);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].rule, "FL_UNKNOWN");
  EXPECT_THAT(v[0].message, HasSubstr("0x2200"));
  EXPECT_EQ(v[1].rule, "SIZE_ZERO");
}

TEST(ValidatorTest, HugeAxesListsGiveBoundedMessages) {
  // 5,000 axes (about 10 KB on the wire): the first rule and field are
  // those of a short list, and the list in the message is cut.
  OperatorDesc op = Valid("mvn1");
  op.axes.assign(5000, 0);
  op.axis_count = 5000;
  std::vector<Violation> v = ValidateAll(op, Raw(FL::k6_4), false);
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v[0].rule, "MVN_AXES_DUPLICATE");
  EXPECT_EQ(v[0].field, "operator.mvn1.axes[1]");
  EXPECT_EQ(v[0].message,
            "axes {0,0,0,0,0,0,0,0, ... and 4992 more} contain 0 twice");
  // The longest numbers, out of range as well.
  op.axes.assign(5000, std::numeric_limits<uint64_t>::max());
  op.axis_count = 4999;
  v = ValidateAll(op, Raw(FL::k6_4), false);
  std::vector<std::string> rules;
  for (const Violation& x : v) {
    rules.push_back(x.rule);
    EXPECT_LE(x.message.size(), kMaxMessageBytes) << x.message;
  }
  EXPECT_THAT(rules, ::testing::ElementsAre("MVN_AXIS_COUNT_MISMATCH",
                                            "MVN_AXIS_OUT_OF_RANGE",
                                            "MVN_AXES_DUPLICATE"));
  EXPECT_THAT(v[2].message, HasSubstr(", ... and 4992 more}"));
  // Short lists are unchanged.
  op.axes = {1, 1};
  op.axis_count = 2;
  EXPECT_EQ(ValidateAll(op, Raw(FL::k6_4), false)[0].message,
            "axes {1,1} contain 1 twice");
}

TEST(ValidatorTest, MessagesAreCutAtTheBound) {
  EXPECT_EQ(BoundedMessage("short"), "short");
  std::string exact(kMaxMessageBytes, 'x');
  EXPECT_EQ(BoundedMessage(exact), exact);
  std::string cut = BoundedMessage(std::string(10000, 'y'));
  EXPECT_EQ(cut.size(), kMaxMessageBytes);
  EXPECT_EQ(cut.substr(cut.size() - 4), "y...");
  // Never inside a UTF-8 character: "\xC3\xA9" (e-acute) straddling the cut.
  std::string utf8(kMaxMessageBytes - 4, 'z');
  utf8 += "\xC3\xA9\xC3\xA9\xC3\xA9";
  cut = BoundedMessage(utf8);
  EXPECT_EQ(cut, std::string(kMaxMessageBytes - 4, 'z') + "...");
}

// OPERATORS.md §2.3's exact overlap test on an interleaved 4M-element
// output (0.73 s when every offset was enumerated and sorted).
TEST(ValidatorTest, InterleavedOutputStridesValidateQuickly) {
  OperatorDesc op = Valid("celu");
  op.input = MakeTensorDesc(DataType::kFloat32, {3, 1398101});
  op.output =
      MakeTensorDesc(DataType::kFloat32, {3, 1398101}, {{2, 3}});  // 2a + 3b
  double best_ms = 1e9;
  std::vector<Violation> v;
  for (int i = 0; i < 3; ++i) {
    auto start = std::chrono::steady_clock::now();
    v = ValidateAll(op, Raw(FL::k6_4), false);
    std::chrono::duration<double, std::milli> ms =
        std::chrono::steady_clock::now() - start;
    best_ms = std::min(best_ms, ms.count());
  }
  EXPECT_TRUE(v.empty()) << v.front().Description();
  EXPECT_LT(best_ms, 10.0);
  op.output->strides = {{2, 2}};  // 2a + 2b: a + b repeats
  op.output->total_tensor_size_in_bytes = CalcBufferTensorSize(
      DataType::kFloat32, op.output->sizes, op.output->strides);
  EXPECT_EQ(FirstRule(op, FL::k6_4), "OUTPUT_OVERLAP");
}

}  // namespace
}  // namespace dmls::ops
