#include "bench/bench_ops.h"

#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "engine/core/tensor_desc.h"
#include "engine/ops/validator.h"

namespace dmls::bench {

absl::StatusOr<OperatorDesc> MakeOp(const std::string& name, uint64_t n,
                                    uint64_t mvn_rows, DataType type) {
  OperatorDesc op;
  std::vector<uint64_t> sizes = {1, 1, 1, n};
  auto act = [&](OperatorType t, std::optional<float> p0 = {},
                 std::optional<float> p1 = {}) {
    op.type = static_cast<uint32_t>(t);
    op.activation = {p0, p1};
  };
  if (name == "celu") {
    act(OperatorType::kActivationCelu, 1.0f);
  } else if (name == "elu") {
    act(OperatorType::kActivationElu, 1.0f);
  } else if (name == "relu") {
    act(OperatorType::kActivationRelu);
  } else if (name == "sigmoid") {
    act(OperatorType::kActivationSigmoid);
  } else if (name == "tanh") {
    act(OperatorType::kActivationTanh);
  } else if (name == "gelu") {
    act(OperatorType::kActivationGelu);
  } else if (name == "identity") {
    act(OperatorType::kActivationIdentity);
  } else if (name == "linear") {
    act(OperatorType::kActivationLinear, 0.75f, 0.25f);
  } else if (name == "hard_sigmoid") {
    act(OperatorType::kActivationHardSigmoid, 0.2f, 0.5f);
  } else if (name == "threshold") {
    op.type = static_cast<uint32_t>(OperatorType::kElementWiseThreshold);
    op.min = 0.0f;
  } else if (name == "clip") {
    op.type = static_cast<uint32_t>(OperatorType::kElementWiseClip);
    op.min = -1.0f;
    op.max = 1.0f;
  } else if (name == "mvn1" || name == "mvn1_nv0" || name == "mvn1_affine") {
    if (n % mvn_rows != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("size ", n, " is not a multiple of --mvn_rows"));
    }
    op.type = static_cast<uint32_t>(OperatorType::kMeanVarianceNormalization1);
    sizes = {1, 1, mvn_rows, n / mvn_rows};
    op.axis_count = 1;
    op.axes = {3};
    op.normalize_variance = name == "mvn1_nv0" ? 0 : 1;
    op.epsilon = 1e-5f;
    if (name == "mvn1_affine") {
      op.scale = MakeTensorDesc(type, {1, 1, 1, n / mvn_rows});
      op.bias = op.scale;
    }
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unknown op '", name, "'"));
  }
  op.input = MakeTensorDesc(type, sizes);
  op.output = op.input;
  if (absl::Status s = ops::Validate(op, static_cast<uint32_t>(kHighestFeatureLevel), false);
      !s.ok()) {
    return s;
  }
  return op;
}

}  // namespace dmls::bench
