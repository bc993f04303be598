// Admission: the checks every request passes once, before any engine work,
// whichever engine runs it: validation against the feature-level rules,
// server limits, and payload sizes. Errors carry rule ids and field paths
// (ops/rule_status.h) so the server reports them as it always has:
//   INVALID_ARGUMENT  every validator violation; PAYLOAD_SIZE_MISMATCH
//   RESOURCE_EXHAUSTED TENSOR_BYTES_LIMIT, MESSAGE_BYTES_LIMIT,
//                      OUTPUT_AMPLIFICATION
// Deadline, cancellation, queue depth and the in-flight limit are the
// Scheduler's (they depend on its state). Stateless: thread-safe.
#ifndef DMLSERVE_ENGINE_SCHED_ADMISSION_H_
#define DMLSERVE_ENGINE_SCHED_ADMISSION_H_

#include <cstdint>

#include "absl/status/status.h"
#include "engine/core/engine.h"

namespace dmls::sched {

struct AdmissionOptions {
  // Largest TotalTensorSizeInBytes of any tensor of a request.
  uint64_t max_tensor_bytes = uint64_t{1} << 30;
  // Largest output range (for in-place the aliased max(input, output)) a
  // request may produce; the server derives it from its message limit.
  // 0: no limit.
  uint64_t max_output_bytes = 0;
  // Amplification: an output range above `output_ratio_floor_bytes` may
  // be at most `max_output_ratio` times the request's payload bytes (a
  // 41-byte request with a stride-0 input can otherwise ask for a 255 MiB
  // output). RESOURCE_EXHAUSTED (OUTPUT_AMPLIFICATION) beyond. 0: no limit.
  uint64_t max_output_ratio = 0;
  uint64_t output_ratio_floor_bytes = uint64_t{1} << 20;
  // Run the feature-level validator. A caller that has already validated
  // the request with Admit (the server does, to answer on its own thread)
  // turns it off in the engine so that no request is validated twice.
  bool validate = true;
};

// OK, or the first problem found (validation first, in the validator's
// order, then limits, then payload sizes).
absl::Status Admit(const ExecuteRequest& request,
                   const AdmissionOptions& options);

// The output range a request produces: the output tensor's bytes, or for
// in-place execution the larger of input and output (OPERATORS.md §10).
uint64_t OutputRangeBytes(const ExecuteRequest& request);

// The bytes a request moves: payloads in plus its output range out.
uint64_t RequestBytes(const ExecuteRequest& request);

}  // namespace dmls::sched

#endif  // DMLSERVE_ENGINE_SCHED_ADMISSION_H_
