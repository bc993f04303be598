// What ModelMetadata and ModelConfig say about a model (model_catalog.h):
// its tensors with the protocol's datatype and shape, and the Triton
// configuration that perf_analyzer and tritonclient read.
//
// Shapes: every dimension -1 (any size). The operators accept any
// dimension count in [min_rank, max_rank] (ModelConfig's parameters say
// which); the shape lists kReportedRank dimensions, clamped to that range.
// max_batch_size is 0: the operators have no batch dimension of their own
// (the first dimension is data like the others). dynamic_batching is set
// when the server's batcher combines requests (max_batch_requests > 1),
// with its max_queue_delay_microseconds: requests of the same model and
// shape are coalesced into one dispatch by the scheduler, whatever the
// tensors' first dimension.
//
// Stateless functions: thread-safe.
#ifndef DMLSERVE_SERVER_KSERVE_MODEL_DESCRIPTION_H_
#define DMLSERVE_SERVER_KSERVE_MODEL_DESCRIPTION_H_

#include <cstdint>
#include <string>

#include "inference/grpc_predict_v2.pb.h"
#include "server/kserve/model_catalog.h"

namespace dmls::server::kserve {

inline constexpr uint32_t kReportedRank = 4;

// The facts of the server a ModelConfig reports.
struct ServerFacts {
  uint32_t max_batch_requests = 1;    // the batcher's (1: no batching)
  uint64_t max_queue_delay_us = 0;
  uint64_t max_batch_bytes = 0;
  std::string device_kind = "cpu";    // "gpu", "software", "cpu"
  int device_count = 1;
};

// The tensor names of the model's inputs, in order ("input", then "scale"
// and "bias" for MVN/MVN1).
std::vector<std::string> InputNames(const ModelEntry& model);

inference::ModelMetadataResponse BuildMetadata(const ModelEntry& model);
inference::ModelConfig BuildConfig(const ModelEntry& model, const ServerFacts& facts);

}  // namespace dmls::server::kserve

#endif  // DMLSERVE_SERVER_KSERVE_MODEL_DESCRIPTION_H_
