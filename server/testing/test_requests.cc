#include "server/testing/test_requests.h"

#include "spdlog/sinks/null_sink.h"

namespace dmls::server::testing {

std::shared_ptr<spdlog::logger> NullLogger() {
  return std::make_shared<spdlog::logger>(
      "test", std::make_shared<spdlog::sinks::null_sink_mt>());
}

namespace v1 = dmlserve::v1;

v1::TensorDesc Float32Tensor(const std::vector<uint64_t>& sizes) {
  v1::TensorDesc t;
  t.set_data_type(v1::DATA_TYPE_FLOAT32);
  uint64_t elements = 1;
  for (uint64_t s : sizes) {
    t.add_sizes(s);
    elements *= s;
  }
  t.set_total_tensor_size_in_bytes(4 * elements);
  return t;
}

std::string Payload(uint64_t bytes, int seed) {
  std::string out(bytes, '\0');
  for (uint64_t i = 0; i < bytes; ++i) {
    out[i] = static_cast<char>((i * 7 + static_cast<uint64_t>(seed)) & 0xff);
  }
  return out;
}

v1::ExecuteRequest ReluRequest(uint64_t request_id) {
  v1::ExecuteRequest r;
  r.set_request_id(request_id);
  v1::ActivationRelu* relu = r.mutable_operator_()->mutable_relu();
  *relu->mutable_input() = Float32Tensor({2, 3, 2, 3});
  *relu->mutable_output() = Float32Tensor({2, 3, 2, 3});
  r.set_input(Payload(relu->input().total_tensor_size_in_bytes(),
                      static_cast<int>(request_id)));
  return r;
}

v1::ExecuteRequest Mvn1Request(uint64_t request_id) {
  v1::ExecuteRequest r;
  r.set_request_id(request_id);
  v1::MeanVarianceNormalization1* mvn = r.mutable_operator_()->mutable_mvn1();
  *mvn->mutable_input() = Float32Tensor({2, 3, 2, 3});
  *mvn->mutable_scale() = Float32Tensor({1, 3, 1, 1});
  *mvn->mutable_bias() = Float32Tensor({1, 3, 1, 1});
  *mvn->mutable_output() = Float32Tensor({2, 3, 2, 3});
  mvn->add_axes(3);
  mvn->set_normalize_variance(true);
  mvn->set_epsilon(1e-5f);
  r.set_input(Payload(mvn->input().total_tensor_size_in_bytes(), 1));
  r.set_scale(Payload(mvn->scale().total_tensor_size_in_bytes(), 2));
  r.set_bias(Payload(mvn->bias().total_tensor_size_in_bytes(), 3));
  return r;
}

}  // namespace dmls::server::testing
