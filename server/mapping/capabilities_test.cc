#include "server/mapping/capabilities.h"

#include <set>
#include <string>

#include "engine/ops/schema.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dmls::server {
namespace {

namespace v1 = dmlserve::v1;
using ::testing::ElementsAre;

v1::GetCapabilitiesResponse Build() {
  ServerOptions options;
  options.limits.max_in_flight = 17;
  options.limits.max_tensor_bytes = 1234;
  options.engine.gpu_memory_cap_bytes = 99;  // not what is reported: see below
  return BuildCapabilities(DeviceInfo{"dev", "cpu", "cpu-reference", 0, 0}, {},
                           options, FeatureLevel::k6_4);
}

TEST(Capabilities, DeviceVersionAndLimits) {
  v1::GetCapabilitiesResponse c = Build();
  EXPECT_EQ(c.server_version(), DMLSERVE_VERSION);
  EXPECT_EQ(c.device_name(), "dev");
  EXPECT_EQ(c.device_kind(), "cpu");
  EXPECT_EQ(c.backend(), "cpu-reference");
  EXPECT_EQ(c.highest_feature_level(), v1::FEATURE_LEVEL_6_4);
  EXPECT_EQ(c.feature_levels_size(), 15);
  EXPECT_EQ(c.feature_levels(0), v1::FEATURE_LEVEL_1_0);
  EXPECT_EQ(c.limits().max_in_flight(), 17u);
  EXPECT_EQ(c.limits().max_batch_requests(), 256u);
  EXPECT_EQ(c.limits().max_queue_depth(), 4096u);
  EXPECT_EQ(c.limits().max_tensor_bytes(), 1234u);
  EXPECT_EQ(c.limits().max_message_bytes(), 256u << 20);
  // The cap in effect on the device, not the flag: a CPU engine has none.
  EXPECT_EQ(c.limits().device_memory_cap_bytes(), 0u);
}

TEST(Capabilities, ListsEveryDevice) {
  // One device: listed alone.
  v1::GetCapabilitiesResponse one = Build();
  ASSERT_EQ(one.devices_size(), 1);
  EXPECT_EQ(one.devices(0).name(), "dev");
  EXPECT_EQ(one.devices(0).kind(), "cpu");
  // Two: the summary on top, each one in the list.
  const std::vector<DeviceInfo> two = {
      {"NVIDIA H200", "gpu", "d3d12 (vkd3d)", 140ull << 30},
      {"NVIDIA H200", "gpu", "d3d12 (vkd3d)", 141ull << 30}};
  v1::GetCapabilitiesResponse c = BuildCapabilities(
      DeviceInfo{"2 x NVIDIA H200", "gpu", "d3d12 (vkd3d)", 281ull << 30}, two,
      ServerOptions{}, FeatureLevel::k6_4);
  EXPECT_EQ(c.device_name(), "2 x NVIDIA H200");
  ASSERT_EQ(c.devices_size(), 2);
  EXPECT_EQ(c.devices(1).name(), "NVIDIA H200");
  EXPECT_EQ(c.devices(1).kind(), "gpu");
  EXPECT_EQ(c.devices(1).backend(), "d3d12 (vkd3d)");
  EXPECT_EQ(c.devices(1).memory_bytes(), 141ull << 30);
}

TEST(Capabilities, LowerHighestLevelTrimsTheList) {
  v1::GetCapabilitiesResponse c =
      BuildCapabilities(DeviceInfo{}, {}, ServerOptions{}, FeatureLevel::k4_0);
  EXPECT_EQ(c.highest_feature_level(), v1::FEATURE_LEVEL_4_0);
  EXPECT_EQ(c.feature_levels(c.feature_levels_size() - 1),
            v1::FEATURE_LEVEL_4_0);
}

TEST(Capabilities, EveryOperatorOfTheSchemaWithItsTables) {
  v1::GetCapabilitiesResponse c = Build();
  ASSERT_EQ(static_cast<size_t>(c.operators_size()),
            ops::AllOperators().size());
  std::set<std::string> fields;
  for (const v1::OperatorSupport& op : c.operators()) {
    fields.insert(op.field());
    const ops::OperatorSchema* s = ops::FindOperatorByField(op.field());
    ASSERT_NE(s, nullptr) << op.field();
    EXPECT_EQ(op.name(), s->name);
    EXPECT_EQ(op.operator_type(), static_cast<uint32_t>(s->type));
    EXPECT_EQ(static_cast<size_t>(op.tiers_size()), s->tiers.size());
    EXPECT_FALSE(op.tolerance_class().empty());
    EXPECT_EQ(op.has_fusable_from(), s->fusable_from.has_value());
    for (const v1::SupportTier& tier : op.tiers()) {
      EXPECT_GT(tier.data_types_size(), 0) << op.name();
      EXPECT_LE(tier.min_dimension_count(), tier.max_dimension_count());
    }
  }
  EXPECT_EQ(fields.size(), ops::AllOperators().size());
}

TEST(Capabilities, ParametersAreTheNonTensorFields) {
  v1::GetCapabilitiesResponse c = Build();
  for (const v1::OperatorSupport& op : c.operators()) {
    if (op.field() == "celu") {
      EXPECT_THAT(op.parameters(), ElementsAre("alpha"));
      EXPECT_TRUE(op.has_fusable_from());
    }
    if (op.field() == "relu") {
      EXPECT_TRUE(op.parameters().empty());
    }
    if (op.field() == "mvn1") {
      EXPECT_THAT(op.parameters(),
                  ElementsAre("axis_count", "axes", "normalize_variance",
                              "epsilon", "fused_activation"));
      EXPECT_FALSE(op.has_fusable_from());
    }
    if (op.field() == "clip") {
      EXPECT_THAT(op.parameters(), ElementsAre("scale_bias", "min", "max"));
    }
  }
}

TEST(Capabilities, ReportTheMemoryCapInEffectOnEachDevice) {
  ServerOptions options;  // gpu_memory_cap_bytes unset: "auto"
  const DeviceInfo gpu0{"NVIDIA H200", "gpu", "d3d12", uint64_t{140} << 30, uint64_t{70} << 30};
  const DeviceInfo gpu1{"NVIDIA H200", "gpu", "d3d12", uint64_t{140} << 30, uint64_t{70} << 30};
  v1::GetCapabilitiesResponse c = BuildCapabilities(
      DeviceInfo{"2 x NVIDIA H200", "gpu", "d3d12", uint64_t{280} << 30, uint64_t{140} << 30},
      {gpu0, gpu1}, options, FeatureLevel::k6_4);
  EXPECT_EQ(c.limits().device_memory_cap_bytes(), uint64_t{70} << 30);
  ASSERT_EQ(c.devices_size(), 2);
  EXPECT_EQ(c.devices(1).memory_cap_bytes(), uint64_t{70} << 30);
  EXPECT_EQ(c.devices(1).memory_bytes(), uint64_t{140} << 30);
}

}  // namespace
}  // namespace dmls::server
