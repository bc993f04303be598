#include "server/kserve/infer_mapping.h"

#include <cstring>
#include <string>
#include <vector>

#include "engine/ops/validator.h"
#include "gtest/gtest.h"
#include "server/mapping/proto_mapping.h"

namespace dmls::server::kserve {
namespace {

namespace v1 = dmlserve::v1;
using inference::InferParameter;
using inference::ModelInferRequest;

class InferMappingTest : public ::testing::Test {
 protected:
  // A request for `model` with one raw input `name` of `shape` (float
  // bytes unless `element_bytes` says otherwise).
  ModelInferRequest Request(const std::string& model, std::vector<int64_t> shape,
                            const std::string& datatype = "FP32", int element_bytes = 4) {
    ModelInferRequest r;
    r.set_model_name(model);
    AddInput(r, "input", shape, datatype, element_bytes);
    return r;
  }
  void AddInput(ModelInferRequest& r, const std::string& name, std::vector<int64_t> shape,
                const std::string& datatype = "FP32", int element_bytes = 4) {
    auto* input = r.add_inputs();
    input->set_name(name);
    input->set_datatype(datatype);
    int64_t elements = 1;
    for (int64_t d : shape) {
      input->add_shape(d);
      elements *= d;
    }
    r.add_raw_input_contents(std::string(elements * element_bytes, '\x01'));
  }
  static void Set(ModelInferRequest& r, const std::string& key, double v) {
    (*r.mutable_parameters())[key].set_double_param(v);
  }
  static void SetString(ModelInferRequest& r, const std::string& key, const std::string& v) {
    (*r.mutable_parameters())[key].set_string_param(v);
  }
  static void SetInt(ModelInferRequest& r, const std::string& key, int64_t v) {
    (*r.mutable_parameters())[key].set_int64_param(v);
  }
  // Maps and expects failure with `rule` at `field`.
  void ExpectError(ModelInferRequest r, const std::string& rule, const std::string& field,
                   absl::StatusCode code = absl::StatusCode::kInvalidArgument) {
    MappedInfer mapped;
    RequestError e = MapInferRequest(catalog_, r, &mapped);
    ASSERT_FALSE(e.ok()) << rule;
    EXPECT_EQ(e.code, code) << e.message;
    ASSERT_EQ(e.violations.size(), 1u) << e.message;
    EXPECT_EQ(e.violations[0].rule, rule) << e.message;
    EXPECT_EQ(e.violations[0].field, field) << e.message;
    EXPECT_EQ(e.message.rfind(rule + ":", 0), 0u) << e.message;
  }
  MappedInfer Map(ModelInferRequest r) {
    MappedInfer mapped;
    RequestError e = MapInferRequest(catalog_, r, &mapped);
    EXPECT_TRUE(e.ok()) << e.message;
    return mapped;
  }

  ModelCatalog catalog_{kHighestFeatureLevel};
};

TEST_F(InferMappingTest, CeluWithRawBytes) {
  ModelInferRequest r = Request("activation_celu", {2, 3});
  r.set_id("req-7");
  Set(r, "alpha", 0.5);
  MappedInfer m = Map(r);
  ASSERT_TRUE(m.request.operator_().has_celu());
  const v1::ActivationCelu& celu = m.request.operator_().celu();
  EXPECT_FLOAT_EQ(celu.alpha(), 0.5f);
  EXPECT_EQ(celu.input().data_type(), v1::DATA_TYPE_FLOAT32);
  EXPECT_EQ(celu.input().sizes_size(), 2);
  EXPECT_EQ(celu.input().total_tensor_size_in_bytes(), 24u);
  EXPECT_EQ(celu.output().SerializeAsString(), celu.input().SerializeAsString());
  EXPECT_EQ(m.request.input(), std::string(24, '\x01'));
  EXPECT_EQ(m.output_bytes, 24u);
  EXPECT_EQ(m.id, "req-7");
  EXPECT_TRUE(ops::ValidateAll(OperatorFromProto(m.request.operator_()),
                               static_cast<uint32_t>(kHighestFeatureLevel), false)
                  .empty());
}

TEST_F(InferMappingTest, PayloadIsPaddedToTheBufferSize) {
  // 3 FP16 elements: 6 bytes, a buffer of 8.
  ModelInferRequest r = Request("activation_relu_fp16", {3}, "FP16", 2);
  MappedInfer m = Map(r);
  EXPECT_EQ(m.request.operator_().relu().input().total_tensor_size_in_bytes(), 8u);
  EXPECT_EQ(m.request.input().size(), 8u);
  EXPECT_EQ(m.output_bytes, 6u);
  v1::ExecuteResponse executed;
  executed.set_output(std::string(8, 'x'));
  inference::ModelInferResponse response = MapInferResponse(m, executed);
  EXPECT_EQ(response.model_name(), "activation_relu_fp16");
  EXPECT_EQ(response.model_version(), "1");
  ASSERT_EQ(response.outputs_size(), 1);
  EXPECT_EQ(response.outputs(0).name(), "output");
  EXPECT_EQ(response.outputs(0).datatype(), "FP16");
  EXPECT_EQ(response.outputs(0).shape_size(), 1);
  EXPECT_EQ(response.raw_output_contents(0), std::string(6, 'x'));
}

TEST_F(InferMappingTest, TypedContents) {
  ModelInferRequest r;
  r.set_model_name("element_wise_clip_int8");
  auto* input = r.add_inputs();
  input->set_name("input");
  input->set_datatype("INT8");
  input->add_shape(2);
  input->mutable_contents()->add_int_contents(-5);
  input->mutable_contents()->add_int_contents(7);
  Set(r, "min", -1);
  Set(r, "max", 1);
  MappedInfer m = Map(r);
  EXPECT_FALSE(m.raw);
  EXPECT_EQ(m.request.input(), std::string("\xfb\x07\0\0", 4));

  input->mutable_contents()->set_int_contents(1, 300);
  ExpectError(r, "KSERVE_CONTENTS_RANGE", "inputs[0].contents.int_contents[1]");
  input->mutable_contents()->set_int_contents(1, 3);
  input->mutable_contents()->add_int_contents(3);
  ExpectError(r, "KSERVE_CONTENTS_COUNT", "inputs[0].contents");

  ModelInferRequest f16;
  f16.set_model_name("activation_relu_fp16");
  auto* h = f16.add_inputs();
  h->set_name("input");
  h->set_datatype("FP16");
  h->add_shape(1);
  h->mutable_contents()->add_fp32_contents(1.0f);
  ExpectError(f16, "KSERVE_CONTENTS_TYPE", "inputs[0].contents");
}

TEST_F(InferMappingTest, ParametersOfEveryKind) {
  ModelInferRequest r = Request("mean_variance_normalization1", {2, 3, 4});
  AddInput(r, "scale", {1, 1, 4});
  SetString(r, "axes", "[-1, 0]");
  SetString(r, "normalize_variance", "true");
  SetString(r, "epsilon", "1e-5");
  SetString(r, "fused_activation", "celu");
  SetInt(r, "fused_activation.celu.alpha", 2);
  SetInt(r, "priority", 3);  // Triton's: ignored
  MappedInfer m = Map(r);
  const v1::MeanVarianceNormalization1& mvn = m.request.operator_().mvn1();
  EXPECT_EQ(std::vector<uint32_t>(mvn.axes().begin(), mvn.axes().end()),
            std::vector<uint32_t>({2, 0}));
  EXPECT_TRUE(mvn.normalize_variance());
  EXPECT_FLOAT_EQ(mvn.epsilon(), 1e-5f);
  EXPECT_FLOAT_EQ(mvn.fused_activation().celu().alpha(), 2.0f);
  EXPECT_TRUE(mvn.has_scale());
  EXPECT_FALSE(mvn.has_bias());
  EXPECT_EQ(m.scale_index, 1);
  EXPECT_EQ(m.request.scale().size(), 16u);

  ModelInferRequest t = Request("element_wise_threshold", {4});
  (*t.mutable_parameters())["min"].set_uint64_param(3);
  (*t.mutable_parameters())["scale_bias.scale"].set_double_param(2);
  (*t.mutable_parameters())["in_place"].set_bool_param(true);
  MappedInfer mt = Map(t);
  EXPECT_FLOAT_EQ(mt.request.operator_().threshold().min(), 3.0f);
  EXPECT_FLOAT_EQ(mt.request.operator_().threshold().scale_bias().scale(), 2.0f);
  EXPECT_FALSE(mt.request.operator_().threshold().scale_bias().has_bias());
  EXPECT_TRUE(mt.request.in_place());
}

TEST_F(InferMappingTest, ParameterErrors) {
  ModelInferRequest r = Request("activation_celu", {4});
  SetString(r, "alpha", "one");
  ExpectError(r, "KSERVE_PARAMETER_TYPE", "parameters[\"alpha\"]");
  r.mutable_parameters()->clear();
  (*r.mutable_parameters())["alpha"].set_bool_param(true);
  ExpectError(r, "KSERVE_PARAMETER_TYPE", "parameters[\"alpha\"]");
  r.mutable_parameters()->clear();
  Set(r, "gamma", 1);
  ExpectError(r, "KSERVE_PARAMETER_UNKNOWN", "parameters[\"gamma\"]");
  r.mutable_parameters()->clear();
  Set(r, "input", 1);  // a tensor, not a parameter
  ExpectError(r, "KSERVE_PARAMETER_UNKNOWN", "parameters[\"input\"]");
  r.mutable_parameters()->clear();
  Set(r, "alpha.x", 1);
  ExpectError(r, "KSERVE_PARAMETER_UNKNOWN", "parameters[\"alpha.x\"]");

  ModelInferRequest m = Request("mean_variance_normalization1", {2, 3, 4});
  SetInt(m, "axes", -4);
  ExpectError(m, "KSERVE_PARAMETER_RANGE", "parameters[\"axes\"]");
  m.mutable_parameters()->clear();
  SetString(m, "fused_activation", "softmax");
  ExpectError(m, "KSERVE_PARAMETER_RANGE", "parameters[\"fused_activation\"]");
  m.mutable_parameters()->clear();
  SetString(m, "normalize_variance", "maybe");
  ExpectError(m, "KSERVE_PARAMETER_TYPE", "parameters[\"normalize_variance\"]");
}

TEST_F(InferMappingTest, RequestShapeErrors) {
  ExpectError(Request("resnet50", {1}), "KSERVE_MODEL_UNKNOWN", "model_name",
              absl::StatusCode::kNotFound);
  ModelInferRequest version = Request("activation_relu", {1});
  version.set_model_version("2");
  ExpectError(version, "KSERVE_VERSION_UNKNOWN", "model_version",
              absl::StatusCode::kNotFound);
  version.set_model_version("1");
  Map(version);

  ModelInferRequest wrong_type = Request("activation_relu_fp16", {2}, "FP32");
  ExpectError(wrong_type, "KSERVE_DATATYPE_MISMATCH", "inputs[0].datatype");

  ModelInferRequest unknown = Request("activation_relu", {2});
  AddInput(unknown, "scale", {2});  // only MVN has a scale
  ExpectError(unknown, "KSERVE_INPUT_UNKNOWN", "inputs[1].name");

  ModelInferRequest twice = Request("activation_relu", {2});
  AddInput(twice, "input", {2});
  ExpectError(twice, "KSERVE_INPUT_DUPLICATE", "inputs[1].name");

  ModelInferRequest missing = Request("mean_variance_normalization1", {2});
  missing.mutable_inputs(0)->set_name("scale");
  ExpectError(missing, "KSERVE_INPUT_MISSING", "inputs");

  ModelInferRequest count = Request("activation_relu", {2});
  count.add_raw_input_contents("extra");
  ExpectError(count, "KSERVE_RAW_COUNT", "raw_input_contents");

  ModelInferRequest size = Request("activation_relu", {2});
  size.mutable_raw_input_contents(0)->pop_back();
  ExpectError(size, "KSERVE_RAW_SIZE", "raw_input_contents[0]");

  ModelInferRequest both = Request("activation_relu", {2});
  both.mutable_inputs(0)->mutable_contents()->add_fp32_contents(1.0f);
  ExpectError(both, "KSERVE_CONTENTS_AND_RAW", "inputs[0].contents");

  ModelInferRequest negative = Request("activation_relu", {2});
  negative.mutable_inputs(0)->add_shape(-1);
  ExpectError(negative, "KSERVE_SHAPE_INVALID", "inputs[0].shape[1]");

  ModelInferRequest huge = Request("activation_relu", {1});
  for (int i = 0; i < 4; ++i) huge.mutable_inputs(0)->add_shape(int64_t{1} << 20);
  ExpectError(huge, "KSERVE_SHAPE_OVERFLOW", "inputs[0].shape");

  ModelInferRequest output = Request("activation_relu", {2});
  output.add_outputs()->set_name("OUTPUT0");
  ExpectError(output, "KSERVE_OUTPUT_UNKNOWN", "outputs[0].name");
}

TEST_F(InferMappingTest, ValidatorPathsInKServeTerms) {
  ModelInferRequest r = Request("mean_variance_normalization1", {2, 3, 4});
  AddInput(r, "bias", {1, 1, 4});
  SetString(r, "axes", "1,7");
  SetString(r, "normalize_variance", "1");
  Set(r, "epsilon", 1e-5);
  MappedInfer m = Map(r);
  RequestError e = RequestError::FromViolations(ops::ValidateAll(
      OperatorFromProto(m.request.operator_()), static_cast<uint32_t>(kHighestFeatureLevel),
      false));
  ASSERT_FALSE(e.violations.empty());
  EXPECT_EQ(e.violations[0].field, "operator.mvn1.axes[1]");
  RewriteFieldPaths(m, &e);
  EXPECT_EQ(e.violations[0].rule, "MVN_AXIS_OUT_OF_RANGE");
  EXPECT_EQ(e.violations[0].field, "parameters[\"axes\"][1]");
  EXPECT_NE(e.message.find("(parameters[\"axes\"][1])"), std::string::npos) << e.message;

  EXPECT_EQ(KServePath(m, "operator.mvn1.input.sizes[2]"), "inputs[0].shape[2]");
  EXPECT_EQ(KServePath(m, "operator.mvn1.bias.data_type"), "inputs[1].datatype");
  EXPECT_EQ(KServePath(m, "operator.mvn1.bias.strides[0]"), "inputs[1].shape");
  EXPECT_EQ(KServePath(m, "operator.mvn1.output.sizes[0]"), "inputs[0].shape[0]");
  EXPECT_EQ(KServePath(m, "operator.mvn1.fused_activation.celu.alpha"),
            "parameters[\"fused_activation.celu.alpha\"]");
  EXPECT_EQ(KServePath(m, "operator.mvn1.epsilon"), "parameters[\"epsilon\"]");
  EXPECT_EQ(KServePath(m, "input"), "raw_input_contents[0]");
  EXPECT_EQ(KServePath(m, "bias"), "raw_input_contents[1]");
  EXPECT_EQ(KServePath(m, "in_place"), "parameters[\"in_place\"]");
  EXPECT_EQ(KServePath(m, "feature_level"), "feature_level");

  // A rank CELU does not take: the validator names the input's shape.
  ModelInferRequest rank = Request("activation_celu", {1, 1, 1, 1, 1, 1, 1, 1, 1});
  Set(rank, "alpha", 1);
  MappedInfer mr = Map(rank);
  RequestError er = RequestError::FromViolations(ops::ValidateAll(
      OperatorFromProto(mr.request.operator_()), static_cast<uint32_t>(kHighestFeatureLevel),
      false));
  ASSERT_FALSE(er.violations.empty());
  RewriteFieldPaths(mr, &er);
  EXPECT_EQ(er.violations[0].field.rfind("inputs[0].shape", 0), 0u) << er.violations[0].field;
}

}  // namespace
}  // namespace dmls::server::kserve
