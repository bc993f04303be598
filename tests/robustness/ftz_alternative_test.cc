#include "tests/robustness/ftz_alternative.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "dmlserve/v1/dmlserve.pb.h"
#include "gtest/gtest.h"

namespace dmls::robustness {
namespace {

constexpr float kDenorm = 1e-40f;
constexpr float kMinNormal = std::numeric_limits<float>::min();

TEST(FtzAlternativeTest, FlushesDenormalFloatFieldsInNestedMessages) {
  dmlserve::v1::ExecuteRequest r;
  r.mutable_operator_()->mutable_linear()->set_alpha(-kDenorm);
  r.mutable_operator_()->mutable_linear()->set_beta(kMinNormal);
  EXPECT_EQ(FlushDenormalFloatFields(r), 1);
  const auto& linear = r.operator_().linear();
  EXPECT_TRUE(linear.has_alpha());  // still present, now -0
  EXPECT_EQ(linear.alpha(), 0.0f);
  EXPECT_TRUE(std::signbit(linear.alpha()));
  EXPECT_EQ(linear.beta(), kMinNormal);  // normal: kept
  EXPECT_EQ(FlushDenormalFloatFields(r), 0);

  dmlserve::v1::ExecuteRequest m;
  auto* mvn = m.mutable_operator_()->mutable_mvn1();
  mvn->set_epsilon(kDenorm);
  mvn->mutable_fused_activation()->mutable_linear()->set_alpha(kDenorm);
  mvn->mutable_fused_activation()->mutable_linear()->set_beta(2.0f);
  EXPECT_EQ(FlushDenormalFloatFields(m), 2);
  EXPECT_EQ(mvn->epsilon(), 0.0f);
  EXPECT_FALSE(std::signbit(mvn->epsilon()));
  EXPECT_EQ(mvn->fused_activation().linear().alpha(), 0.0f);
  EXPECT_EQ(mvn->fused_activation().linear().beta(), 2.0f);
}

TEST(FtzAlternativeTest, FlushesDenormalWordsOfAPayload) {
  const float in[] = {kDenorm, -kDenorm, 1.0f, -kMinNormal, std::nanf(""), 0.0f};
  std::string payload(sizeof(in) + 2, '\x01');  // a partial word at the end
  std::memcpy(payload.data(), in, sizeof(in));
  int changed = 0;
  const std::string out = FlushDenormalWords(payload, &changed);
  ASSERT_EQ(out.size(), payload.size());
  EXPECT_EQ(changed, 2);
  float v[6];
  std::memcpy(v, out.data(), sizeof(v));
  EXPECT_EQ(v[0], 0.0f);
  EXPECT_FALSE(std::signbit(v[0]));
  EXPECT_EQ(v[1], 0.0f);
  EXPECT_TRUE(std::signbit(v[1]));
  EXPECT_EQ(v[2], 1.0f);
  EXPECT_EQ(v[3], -kMinNormal);
  EXPECT_TRUE(std::isnan(v[4]));
  EXPECT_EQ(out.substr(sizeof(in)), "\x01\x01");
}

}  // namespace
}  // namespace dmls::robustness
