// Work: what admission (admission.h) is asked to let in, in the engine's
// terms and without the transport: one operator (Execute, ExecuteStream),
// a chain of operators (ExecuteChain, and an Execute that names resident
// tensors), one operator whose tensors travel in chunks (ExecuteChunked),
// or one resident tensor (CreateTensor, WriteTensor). It describes the
// request (descriptors, where each tensor comes from, byte counts, the
// call's deadline and cancellation) and owns none of its bytes.
//
// Plain values; thread-compatible.
#ifndef DMLSERVE_ENGINE_SCHED_WORK_H_
#define DMLSERVE_ENGINE_SCHED_WORK_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/time/time.h"
#include "engine/core/execute_request.h"
#include "engine/core/operator_desc.h"
#include "engine/core/resident.h"
#include "engine/core/tensor_desc.h"
#include "engine/core/types.h"

namespace dmls::sched {

// Where a tensor that a step reads comes from.
struct WorkSource {
  enum class Kind : uint8_t {
    kNone,      // nothing was given
    kInline,    // `bytes` bytes sent with the request
    kResident,  // a resident tensor of `bytes` bytes and `data_type`
    kStep,      // the output range of the earlier step `step`
    kStreamed,  // `bytes` bytes that arrive in chunks after admission
  };
  Kind kind = Kind::kNone;
  uint64_t bytes = 0;
  uint32_t data_type = 0;
  uint32_t step = 0;
};

// A resident tensor a step writes its output range into.
struct WorkTarget {
  uint64_t bytes = 0;
  uint32_t data_type = 0;
};

struct WorkStep {
  OperatorDesc op;
  bool in_place = false;
  WorkSource input, scale, bias;
  // The output range goes back in the response.
  bool returns_output = false;
  std::optional<WorkTarget> target;
};

struct Work {
  enum class Kind : uint8_t {
    kExecute,  // one step (inline payloads, or resident tensors: an Execute
               // run as a one-step chain); field paths of ExecuteRequest
    kChain,    // steps; field paths "steps[i]. ..." of ChainRequest
    kChunked,  // one step, streamed tensors; field paths "header. ..."
    kTensor,   // `tensor` alone; field paths under `tensor_path`
  };
  Kind kind = Kind::kExecute;
  FeatureLevel feature_level = kHighestFeatureLevel;
  // All kinds but kTensor. One step inline: an Execute's Work allocates
  // nothing for it (it is built per request).
  absl::InlinedVector<WorkStep, 1> steps;

  // kTensor: the descriptor, where its fields are reported, and the bytes
  // sent with it.
  TensorDesc tensor;
  std::string tensor_path;
  uint64_t tensor_data_bytes = 0;

  // kChunked: the most bytes one chunk carries (each way); what the call
  // holds in host memory at once.
  uint64_t chunk_bytes = 0;

  absl::Time deadline = absl::InfiniteFuture();
  std::shared_ptr<const std::atomic<bool>> cancelled;  // null: never
  // The amplification limit the call asks for (0: the server's default);
  // capped at AdmissionOptions::max_output_ratio_limit.
  uint64_t output_ratio = 0;
};

// The one-step kExecute work of `request`: its operator, payload sizes,
// deadline and cancellation.
Work ExecuteWork(const ExecuteRequest& request);

// The kChain work of an engine-level chain (engine/core/resident.h): its
// operators, where each tensor comes from, its deadline and cancellation.
// The engine knows a resident buffer's size but not its data type: a
// resident source is taken to be of the type of the tensor it feeds (the
// server, which knows the types, builds its own Work: server/chain_builder).
Work ChainWork(const ChainRequest& chain);

// The output range of `op`: the output tensor's bytes, or for in-place
// execution the larger of input and output (OPERATORS.md §10).
uint64_t OutputRange(const OperatorDesc& op, bool in_place);

}  // namespace dmls::sched

#endif  // DMLSERVE_ENGINE_SCHED_WORK_H_
