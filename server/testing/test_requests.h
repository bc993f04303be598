// Request builders for the server tests: small valid dmlserve.v1 requests
// and payloads. Test-only; stateless.
#ifndef DMLSERVE_SERVER_TESTING_TEST_REQUESTS_H_
#define DMLSERVE_SERVER_TESTING_TEST_REQUESTS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dmlserve/v1/dmlserve.pb.h"
#include "spdlog/logger.h"

namespace dmls::server::testing {

// A logger that drops everything.
std::shared_ptr<spdlog::logger> NullLogger();

// A packed FLOAT32 tensor.
dmlserve::v1::TensorDesc Float32Tensor(const std::vector<uint64_t>& sizes);

// `bytes` bytes of a recognisable pattern (byte i is (i * 7 + seed) & 0xff).
std::string Payload(uint64_t bytes, int seed = 0);

// ACTIVATION_RELU over a {2,3,2,3} FLOAT32 tensor, with a matching payload.
dmlserve::v1::ExecuteRequest ReluRequest(uint64_t request_id);

// MEAN_VARIANCE_NORMALIZATION1 over {2,3,2,3} reducing axis 3, with scale and
// bias tensors of {1,3,1,1} and payloads for all three.
dmlserve::v1::ExecuteRequest Mvn1Request(uint64_t request_id);

}  // namespace dmls::server::testing

#endif  // DMLSERVE_SERVER_TESTING_TEST_REQUESTS_H_
