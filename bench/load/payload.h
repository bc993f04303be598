// Payload: the one ExecuteRequest every call of a dmls_load run sends, and
// what its answer should look like. Built once before the load starts, from
// generated random data or from an operator JSON (+ .npy), so building it
// costs nothing during the measurement.
//
// Plain value type; thread-compatible (the drivers share one const Payload).
#ifndef DMLSERVE_BENCH_LOAD_PAYLOAD_H_
#define DMLSERVE_BENCH_LOAD_PAYLOAD_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "bench/load/load_options.h"
#include "dmlserve/v1/dmlserve.pb.h"

namespace dmls::load {

struct Payload {
  // request_id 0; the stream driver numbers its own copies.
  dmlserve::v1::ExecuteRequest request;
  // input + scale + bias bytes of one request (the "bytes in" of a call).
  uint64_t request_bytes = 0;
  // output.total_tensor_size_in_bytes: the size of a correct answer.
  uint64_t output_bytes = 0;
  // For the report: "celu FLOAT32 [262144]".
  std::string description;
};

// NOT_FOUND / INVALID_ARGUMENT when a file cannot be read or the operator
// cannot be generated (unknown --op, --bytes not a multiple of the element
// size, a descriptor without sizes and no --input).
absl::StatusOr<Payload> BuildPayload(const PayloadOptions& options);

}  // namespace dmls::load

#endif  // DMLSERVE_BENCH_LOAD_PAYLOAD_H_
