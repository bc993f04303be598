#include "server/kserve/model_catalog.h"

#include <set>
#include <string>

#include "absl/strings/ascii.h"
#include "gtest/gtest.h"
#include "server/kserve/model_description.h"

namespace dmls::server::kserve {
namespace {

TEST(ModelCatalog, EveryOperatorIsAModelNamedAfterIt) {
  ModelCatalog catalog(kHighestFeatureLevel);
  for (const ops::OperatorSchema& schema : ops::AllOperators()) {
    const ModelEntry* model =
        catalog.Find(absl::AsciiStrToLower(std::string(schema.name)));
    ASSERT_NE(model, nullptr) << schema.name;
    EXPECT_EQ(model->schema, &schema);
    EXPECT_EQ(model->type, DataType::kFloat32);
  }
  std::set<std::string> names;
  for (const ModelEntry& m : catalog.models()) {
    EXPECT_TRUE(names.insert(m.name).second) << m.name << " twice";
  }
}

TEST(ModelCatalog, OneModelPerSupportedType) {
  ModelCatalog catalog(kHighestFeatureLevel);
  const ModelEntry* celu16 = catalog.Find("activation_celu_fp16");
  ASSERT_NE(celu16, nullptr);
  EXPECT_EQ(celu16->type, DataType::kFloat16);
  EXPECT_EQ(celu16->schema->type, OperatorType::kActivationCelu);
  const ModelEntry* clip = catalog.Find("element_wise_clip_int32");
  ASSERT_NE(clip, nullptr);
  EXPECT_EQ(clip->type, DataType::kInt32);
  // CELU has no integer form, so no such model.
  EXPECT_EQ(catalog.Find("activation_celu_int32"), nullptr);
  EXPECT_EQ(catalog.Find("activation_celu_fp32"), nullptr);  // the plain name is FP32
  EXPECT_EQ(catalog.Find("resnet50"), nullptr);
  EXPECT_EQ(catalog.Find(""), nullptr);
}

TEST(ModelCatalog, OperatorsAboveTheLevelAreNotModels) {
  ModelCatalog catalog(FeatureLevel::k2_0);  // before CELU (3_0), GELU (5_1)
  EXPECT_EQ(catalog.Find("activation_celu"), nullptr);
  EXPECT_EQ(catalog.Find("activation_gelu"), nullptr);
  EXPECT_NE(catalog.Find("activation_relu"), nullptr);
}

TEST(ModelCatalog, Datatypes) {
  EXPECT_EQ(KServeDatatype(DataType::kFloat16), "FP16");
  EXPECT_EQ(KServeDatatype(DataType::kUint8), "UINT8");
  EXPECT_EQ(KServeDatatype(DataType::kInt4), "");
  for (DataType t : {DataType::kFloat32, DataType::kFloat16, DataType::kInt8,
                     DataType::kUint64}) {
    EXPECT_EQ(DataTypeFromKServe(KServeDatatype(t)), t);
  }
  EXPECT_FALSE(DataTypeFromKServe("BYTES").has_value());
  EXPECT_FALSE(DataTypeFromKServe("fp32").has_value());
}

TEST(ModelDescription, MetadataNamesTensorsWithVariableDims) {
  ModelCatalog catalog(kHighestFeatureLevel);
  inference::ModelMetadataResponse m =
      BuildMetadata(*catalog.Find("mean_variance_normalization1_fp16"));
  EXPECT_EQ(m.name(), "mean_variance_normalization1_fp16");
  ASSERT_EQ(m.versions_size(), 1);
  EXPECT_EQ(m.versions(0), kModelVersion);
  ASSERT_EQ(m.inputs_size(), 3);
  EXPECT_EQ(m.inputs(0).name(), "input");
  EXPECT_EQ(m.inputs(1).name(), "scale");
  EXPECT_EQ(m.inputs(2).name(), "bias");
  ASSERT_EQ(m.outputs_size(), 1);
  EXPECT_EQ(m.outputs(0).name(), "output");
  EXPECT_EQ(m.outputs(0).datatype(), "FP16");
  EXPECT_EQ(std::vector<int64_t>(m.inputs(0).shape().begin(), m.inputs(0).shape().end()),
            std::vector<int64_t>({-1, -1, -1, -1}));
  EXPECT_EQ(BuildMetadata(*catalog.Find("activation_tanh")).inputs_size(), 1);
}

TEST(ModelDescription, ConfigReportsBatchingAsConfigured) {
  ModelCatalog catalog(kHighestFeatureLevel);
  const ModelEntry& model = *catalog.Find("element_wise_threshold");
  ServerFacts facts;
  facts.max_batch_requests = 32;
  facts.max_queue_delay_us = 250;
  facts.device_kind = "gpu";
  facts.device_count = 2;
  inference::ModelConfig c = BuildConfig(model, facts);
  EXPECT_EQ(c.name(), "element_wise_threshold");
  EXPECT_EQ(c.max_batch_size(), 0);
  ASSERT_TRUE(c.has_dynamic_batching());
  EXPECT_EQ(c.dynamic_batching().max_queue_delay_microseconds(), 250u);
  ASSERT_EQ(c.input_size(), 1);
  EXPECT_EQ(c.input(0).data_type(), inference::TYPE_FP32);
  EXPECT_FALSE(c.input(0).optional());
  ASSERT_EQ(c.instance_group_size(), 1);
  EXPECT_EQ(c.instance_group(0).kind(), inference::ModelInstanceGroup::KIND_GPU);
  EXPECT_EQ(c.instance_group(0).count(), 2);
  EXPECT_EQ(c.parameters().at("max_batch_requests").string_value(), "32");

  facts.max_batch_requests = 1;  // batching off
  facts.device_kind = "cpu";
  inference::ModelConfig off = BuildConfig(*catalog.Find("mean_variance_normalization1"), facts);
  EXPECT_FALSE(off.has_dynamic_batching());
  EXPECT_EQ(off.instance_group(0).kind(), inference::ModelInstanceGroup::KIND_CPU);
  ASSERT_EQ(off.input_size(), 3);
  EXPECT_TRUE(off.input(1).optional());
}

}  // namespace
}  // namespace dmls::server::kserve
