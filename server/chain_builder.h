// ChainBuilder: a wire ChainRequest (or an ExecuteRequest that names
// resident tensors, as a one-step chain) checked as a whole and turned into
// the engine's ChainRequest (engine/core/resident.h) before anything runs.
//
// Checks, with field paths into the step ("steps[2].operator.mvn1.axes[1]",
// "steps[1].input.step"): every operator against the feature-level rules;
// tensor byte limits; every tensor of an operator has exactly one source
// and no source is given for a tensor the operator lacks; inline bytes,
// resident tensors and earlier steps' outputs match the tensor they feed in
// size and data type; outputs go to at most one resident tensor, never
// one that the same step reads (unless in place); something comes out of
// the chain; the bytes returned fit in one response. Unknown handles (and
// other principals') are NOT_FOUND; limits RESOURCE_EXHAUSTED; everything
// else INVALID_ARGUMENT with every violation found.
//
// Outputs kept as new tensors are created pending in the TensorStore when
// the chain is built (their quota is taken then); the caller publishes them
// when the chain succeeds and abandons them otherwise (BuiltChain::Settle).
//
// Stateless apart from the store it borrows; thread-safe.
#ifndef DMLSERVE_SERVER_CHAIN_BUILDER_H_
#define DMLSERVE_SERVER_CHAIN_BUILDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "dmlserve/v1/dmlserve.pb.h"
#include "engine/core/resident.h"
#include "server/tensor_store.h"

namespace dmls::server {

struct ChainLimits {
  uint32_t max_steps = 64;
  uint64_t max_tensor_bytes = uint64_t{1} << 30;
  // Most output bytes one response may carry (0: no limit).
  uint64_t max_returned_bytes = 0;
  FeatureLevel highest_feature_level = kHighestFeatureLevel;
};

// What one step hands back: bytes, a tensor, or both.
struct StepOutput {
  uint32_t step = 0;
  bool returns_bytes = false;
  std::string handle;         // empty: none
  bool new_tensor = false;    // the handle is pending until Settle
};

struct BuiltChain {
  ChainRequest request;
  std::vector<StepOutput> outputs;  // in step order
  uint64_t inline_bytes = 0;        // payload bytes sent with the request
  uint64_t returned_bytes = 0;      // bytes the response will carry

  // Publishes the new tensors (ok) or abandons them. Call once.
  void Settle(TensorStore& store, bool ok) const;
};

// `request`'s inline bytes are moved out.
absl::StatusOr<BuiltChain> BuildChain(dmlserve::v1::ChainRequest& request,
                                      const std::string& principal,
                                      TensorStore& store,
                                      const ChainLimits& limits);

// Whether an ExecuteRequest names resident tensors or keeps its output (and
// so runs as a one-step chain).
bool UsesResidentTensors(const dmlserve::v1::ExecuteRequest& request);
// The one-step chain of such a request (payloads moved out of it);
// INVALID_ARGUMENT (HANDLE_AND_BYTES) when a tensor is given both ways.
// Field paths of the chain's errors map back with ExecutePath.
absl::StatusOr<dmlserve::v1::ChainRequest> ChainOfExecute(
    dmlserve::v1::ExecuteRequest& request);
// "steps[0].input.handle" -> "input_handle", "steps[0].operator.x" ->
// "operator.x": the path of a one-step chain's field in ExecuteRequest.
std::string ExecutePath(const std::string& chain_path);

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_CHAIN_BUILDER_H_
