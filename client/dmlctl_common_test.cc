#include "client/dmlctl_common.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dmls::client::ctl {
namespace {

namespace v1 = dmlserve::v1;

TEST(DmlctlCommonTest, ApplyShapeGivesTheInputAndOutputTheirLayout) {
  v1::OperatorDesc op;
  op.mutable_celu()->mutable_input()->set_data_type(v1::DATA_TYPE_FLOAT16);
  ASSERT_TRUE(ApplyShape(OperatorBody(&op), "2,3", "").ok());
  const v1::TensorDesc& in = op.celu().input();
  EXPECT_THAT(in.sizes(), ::testing::ElementsAre(2, 3));
  EXPECT_EQ(in.data_type(), v1::DATA_TYPE_FLOAT16);
  EXPECT_EQ(in.total_tensor_size_in_bytes(), 12u);
  EXPECT_THAT(op.celu().output().sizes(), ::testing::ElementsAre(2, 3));
  EXPECT_EQ(op.celu().output().data_type(), v1::DATA_TYPE_FLOAT16);

  v1::OperatorDesc plain;
  plain.mutable_relu();
  ASSERT_TRUE(ApplyShape(OperatorBody(&plain), "4", "").ok());
  EXPECT_EQ(plain.relu().input().data_type(), v1::DATA_TYPE_FLOAT32);
  EXPECT_EQ(ApplyShape(nullptr, "2", "").code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(DmlctlCommonTest, ApplyShapeRefusesSizesTwiceAndBadText) {
  v1::OperatorDesc op;
  op.mutable_celu()->mutable_input()->add_sizes(5);
  EXPECT_EQ(ApplyShape(OperatorBody(&op), "2,3", "").code(),
            absl::StatusCode::kInvalidArgument);
  v1::OperatorDesc fresh;
  fresh.mutable_celu();
  EXPECT_FALSE(ApplyShape(OperatorBody(&fresh), "2,x", "").ok());
  EXPECT_FALSE(ApplyShape(OperatorBody(&fresh), "2", "FLOAT99").ok());
}

}  // namespace
}  // namespace dmls::client::ctl
