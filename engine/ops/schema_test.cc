#include "engine/ops/schema.h"

#include <set>
#include <string>

#include "gtest/gtest.h"

namespace dmls::ops {
namespace {

constexpr uint32_t Raw(FeatureLevel fl) { return static_cast<uint32_t>(fl); }
constexpr uint32_t Raw(OperatorType t) { return static_cast<uint32_t>(t); }

TEST(SchemaTest, TwentyOneOperatorsWithUniqueKeys) {
  EXPECT_EQ(AllOperators().size(), 21u);  // OPERATORS.md §1.4, served ones
  std::set<uint32_t> types;
  std::set<std::string_view> names, fields;
  for (const OperatorSchema& s : AllOperators()) {
    EXPECT_TRUE(types.insert(Raw(s.type)).second) << s.name;
    EXPECT_TRUE(names.insert(s.name).second) << s.name;
    EXPECT_TRUE(fields.insert(s.field).second) << s.name;
    EXPECT_EQ(FindOperator(Raw(s.type)), &s);
    EXPECT_EQ(FindOperatorByName(s.name), &s);
    EXPECT_EQ(FindOperatorByField(s.field), &s);
    EXPECT_EQ(OperatorTypeName(Raw(s.type)), s.name);
  }
}

TEST(SchemaTest, TiersAscendFromTheIntroductionLevel) {
  for (const OperatorSchema& s : AllOperators()) {
    ASSERT_FALSE(s.tiers.empty()) << s.name;
    EXPECT_EQ(s.tiers.front().from, s.introduced) << s.name;
    for (size_t i = 0; i < s.tiers.size(); ++i) {
      const SupportTier& t = s.tiers[i];
      EXPECT_LE(1u, t.min_rank);
      EXPECT_LE(t.min_rank, t.max_rank);
      EXPECT_LE(t.max_rank, kTensorDimensionCountMax1);
      EXPECT_NE(t.types & kFloatTypes, 0u) << s.name;
      if (i > 0) {
        const SupportTier& p = s.tiers[i - 1];
        EXPECT_LT(Raw(p.from), Raw(t.from)) << s.name;
        // Feature levels are supersets (§1.3): a tier never removes support.
        EXPECT_EQ(p.types & ~t.types, 0u) << s.name;
        EXPECT_LE(t.min_rank, p.min_rank) << s.name;
        EXPECT_GE(t.max_rank, p.max_rank) << s.name;
      }
    }
  }
}

TEST(SchemaTest, TierForPicksTheHighestTableAtOrBelowTheLevel) {
  const OperatorSchema* th = FindOperatorByField("threshold");
  ASSERT_NE(th, nullptr);
  EXPECT_EQ(TierFor(*th, FeatureLevel::k2_0)->from, FeatureLevel::k1_0);
  EXPECT_EQ(TierFor(*th, FeatureLevel::k2_1)->from, FeatureLevel::k2_1);
  EXPECT_EQ(TierFor(*th, FeatureLevel::k6_4)->from, FeatureLevel::k3_0);
  const OperatorSchema* celu = FindOperatorByField("celu");
  ASSERT_NE(celu, nullptr);
  EXPECT_EQ(TierFor(*celu, FeatureLevel::k2_1), nullptr);
  EXPECT_EQ(TierFor(*celu, FeatureLevel::k3_0)->max_rank, 8u);
  const OperatorSchema* clip = FindOperatorByField("clip");
  ASSERT_NE(clip, nullptr);
  EXPECT_FALSE(TierFor(*clip, FeatureLevel::k4_1)->types &
               Bit(DataType::kInt64));
  EXPECT_TRUE(TierFor(*clip, FeatureLevel::k5_0)->types &
              Bit(DataType::kInt64));
  const OperatorSchema* relu = FindOperatorByField("relu");
  ASSERT_NE(relu, nullptr);
  const DataTypeMask relu51 = TierFor(*relu, FeatureLevel::k5_1)->types;
  EXPECT_TRUE(relu51 & Bit(DataType::kInt8));
  EXPECT_FALSE(relu51 & Bit(DataType::kUint8));  // signed integers only
}

TEST(SchemaTest, ActivationParamsFollowTheDirectMLXCompactForm) {
  struct Row {
    const char* field;
    const char* p0;
    const char* p1;
  };
  const Row rows[] = {// OPERATORS.md §5.3
                      {"hard_sigmoid", "alpha", "beta"},
                      {"linear", "alpha", "beta"},
                      {"parametric_softplus", "alpha", "beta"},
                      {"scaled_tanh", "alpha", "beta"},
                      {"elu", "alpha", ""},
                      {"leaky_relu", "alpha", ""},
                      {"thresholded_relu", "alpha", ""},
                      {"celu", "alpha", ""},
                      {"scaled_elu", "alpha", "gamma"},
                      {"shrink", "bias", "threshold"},
                      {"softplus", "steepness", ""},
                      {"identity", "", ""},
                      {"relu", "", ""},
                      {"sigmoid", "", ""},
                      {"softsign", "", ""},
                      {"tanh", "", ""},
                      {"gelu", "", ""}};
  int activations = 0;
  for (const OperatorSchema& s : AllOperators()) {
    if (s.kind == OpKind::kActivation) ++activations;
  }
  EXPECT_EQ(activations, 17);
  for (const Row& r : rows) {
    const OperatorSchema* s = FindOperatorByField(r.field);
    ASSERT_NE(s, nullptr) << r.field;
    EXPECT_EQ(s->kind, OpKind::kActivation);
    EXPECT_EQ(s->params[0], r.p0) << r.field;
    EXPECT_EQ(s->params[1], r.p1) << r.field;
  }
}

TEST(SchemaTest, ThresholdNeedsMinAndClipMinAndMax) {
  const OperatorSchema* threshold = FindOperatorByField("threshold");
  const OperatorSchema* clip = FindOperatorByField("clip");
  ASSERT_NE(threshold, nullptr);
  ASSERT_NE(clip, nullptr);
  EXPECT_EQ(threshold->params[0], "min");
  EXPECT_EQ(threshold->params[1], "");
  EXPECT_EQ(clip->params[0], "min");
  EXPECT_EQ(clip->params[1], "max");
}

TEST(SchemaTest, FusionAndInPlace) {
  for (const OperatorSchema& s : AllOperators()) {
    if (s.kind == OpKind::kActivation) {
      // §5.2: fusable into MVN/MVN1 from the activation's introduction.
      ASSERT_TRUE(s.fusable_from.has_value()) << s.name;
      EXPECT_EQ(*s.fusable_from, s.introduced) << s.name;
      // §6/§10: every activation but GELU runs in place.
      EXPECT_EQ(s.in_place, s.type != OperatorType::kActivationGelu) << s.name;
    } else {
      EXPECT_FALSE(s.fusable_from.has_value()) << s.name;
      EXPECT_EQ(s.in_place, s.kind == OpKind::kUnaryScaleBias) << s.name;
    }
  }
  EXPECT_EQ(FindOperatorByField("shrink")->introduced, FeatureLevel::k2_0);
  EXPECT_EQ(FindOperatorByField("mvn1")->introduced, FeatureLevel::k2_1);
  EXPECT_EQ(FindOperatorByField("gelu")->introduced, FeatureLevel::k5_1);
}

TEST(SchemaTest, NamesOfUnservedOperators) {
  EXPECT_EQ(FindOperator(Raw(OperatorType::kActivationSoftmax)), nullptr);
  EXPECT_EQ(OperatorTypeName(Raw(OperatorType::kActivationSoftmax)),
            "ACTIVATION_SOFTMAX");
  EXPECT_EQ(OperatorTypeName(Raw(OperatorType::kElementWiseClip1)),
            "ELEMENT_WISE_CLIP1");
  EXPECT_EQ(OperatorTypeName(9999), "OPERATOR_9999");
  EXPECT_EQ(FindOperatorByField("softmax"), nullptr);
  EXPECT_EQ(FindOperatorByName("ELEMENT_WISE_CLIP1"), nullptr);
}

TEST(SchemaTest, ToleranceClasses) {
  EXPECT_EQ(ToleranceClassName(ToleranceClass::kExact), "EXACT");
  EXPECT_EQ(ToleranceClassName(ToleranceClass::kArith), "ARITH");
  EXPECT_EQ(ToleranceClassName(ToleranceClass::kTranscendental),
            "TRANSCENDENTAL");
  EXPECT_EQ(ToleranceClassName(ToleranceClass::kNormalization),
            "NORMALIZATION");
  EXPECT_EQ(FindOperatorByField("mvn1")->tolerance,
            ToleranceClass::kNormalization);
  EXPECT_EQ(FindOperatorByField("celu")->tolerance,
            ToleranceClass::kTranscendental);
  EXPECT_EQ(FindOperatorByField("threshold")->tolerance,
            ToleranceClass::kExact);
}

}  // namespace
}  // namespace dmls::ops
