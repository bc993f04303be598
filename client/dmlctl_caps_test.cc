#include "client/dmlctl_caps.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dmls::client::ctl {
namespace {

using ::testing::HasSubstr;
namespace v1 = dmlserve::v1;

TEST(DmlctlCapsTest, SummaryShowsServerDeviceLimitsAndTheTierInEffect) {
  v1::GetCapabilitiesResponse caps;
  caps.set_server_version("0.9.0");
  caps.set_device_name("llvmpipe");
  caps.set_device_kind("software");
  caps.set_backend("d3d12 (vkd3d)");
  caps.set_highest_feature_level(v1::FEATURE_LEVEL_3_0);
  v1::DeviceInfo* d = caps.add_devices();
  d->set_name("llvmpipe");
  d->set_kind("software");
  d->set_memory_bytes(uint64_t{2} << 30);
  caps.mutable_limits()->set_max_message_bytes(64 << 20);
  caps.mutable_limits()->set_max_in_flight(256);
  v1::OperatorSupport* celu = caps.add_operators();
  celu->set_name("ACTIVATION_CELU");
  celu->set_field("celu");
  celu->set_in_place(true);
  celu->set_fusable_from(v1::FEATURE_LEVEL_3_0);
  celu->add_parameters("alpha");
  v1::SupportTier* early = celu->add_tiers();
  early->set_from_feature_level(v1::FEATURE_LEVEL_1_0);
  early->set_min_dimension_count(4);
  early->set_max_dimension_count(4);
  early->add_data_types(v1::DATA_TYPE_FLOAT32);
  v1::SupportTier* later = celu->add_tiers();
  later->set_from_feature_level(v1::FEATURE_LEVEL_3_0);
  later->set_min_dimension_count(1);
  later->set_max_dimension_count(8);
  later->add_data_types(v1::DATA_TYPE_FLOAT32);
  later->add_data_types(v1::DATA_TYPE_FLOAT16);
  v1::OperatorSupport* gelu = caps.add_operators();
  gelu->set_name("ACTIVATION_GELU");
  gelu->set_field("gelu");
  gelu->add_tiers()->set_from_feature_level(v1::FEATURE_LEVEL_5_1);

  const std::string text = CapsSummary(caps);
  EXPECT_THAT(text, HasSubstr("dmlserve 0.9.0 on llvmpipe (software, d3d12 "
                              "(vkd3d)), feature levels up to 3_0\n"));
  EXPECT_THAT(text, HasSubstr("device 0: llvmpipe (software, , memory 2 GiB, "
                              "cap none)"));
  EXPECT_THAT(text, HasSubstr("limits: message 64 MiB, tensor none, in flight 256"));
  EXPECT_THAT(text, HasSubstr("2 operators at feature level 3_0"));
  EXPECT_THAT(text, HasSubstr("ranks 1-8  FLOAT32 FLOAT16  in-place  fusable "
                              "from 3_0  params alpha\n"));
  EXPECT_THAT(text, HasSubstr("ACTIVATION_GELU"));
  EXPECT_THAT(text, HasSubstr("not available"));
  EXPECT_LT(std::count(text.begin(), text.end(), '\n'), 10);
}

}  // namespace
}  // namespace dmls::client::ctl
