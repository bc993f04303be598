// ChainBuilder: a wire ChainRequest (or an ExecuteRequest that names
// resident tensors, as a one-step chain) turned into the engine's
// ChainRequest (engine/core/resident.h) and the sched::Work that admission
// checks (engine/sched/admission.h: operators, sources, sizes, limits,
// amplification) before anything runs.
//
// BuildChain resolves handles (unknown ones, and other principals', are
// NOT_FOUND, the first one found), takes the inline bytes, and checks what
// only the wire says, with field paths into the step
// ("steps[1].keep_output"): outputs go to at most one resident tensor,
// never one that the same step reads (unless in place); something comes
// out of the chain. INVALID_ARGUMENT with every violation found.
//
// The principal matters only to a chain that touches resident tensors: its
// error (TENANT_REQUIRED for a caller without identity, principal.h) is the
// chain's answer only when a step names a handle or keeps its output, with
// that field's path ("steps[0].input.handle"); a chain of inline bytes
// runs without one. This is the one place where the chain path resolves
// handles and creates tensors, so it decides.
//
// Outputs kept as new tensors are created pending in the TensorStore once
// the chain is admitted (CreateKept: their quota is taken then); the caller
// publishes them when the chain succeeds and abandons them otherwise
// (BuiltChain::Settle).
//
// Stateless apart from the store it borrows; thread-safe.
#ifndef DMLSERVE_SERVER_CHAIN_BUILDER_H_
#define DMLSERVE_SERVER_CHAIN_BUILDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "dmlserve/v1/dmlserve.pb.h"
#include "engine/core/resident.h"
#include "engine/sched/work.h"
#include "engine/store/tensor_store.h"

namespace dmls::server {

// What one step hands back: bytes, a tensor, or both.
struct StepOutput {
  uint32_t step = 0;
  bool returns_bytes = false;
  std::string handle;         // empty: none
  bool keep = false;          // a new tensor, made by CreateKept
  absl::Duration keep_ttl;    // its time to live (0: the store's default)
  bool new_tensor = false;    // the handle is pending until Settle
};

struct BuiltChain {
  ChainRequest request;
  sched::Work work;                 // kChain: what admission checks
  std::vector<StepOutput> outputs;  // in step order

  // Creates the outputs to keep, pending (after admission); on error
  // abandons those it made.
  absl::Status CreateKept(store::TensorStore& store, const absl::StatusOr<std::string>& principal);
  // Publishes the new tensors (ok) or abandons them. Call once.
  void Settle(store::TensorStore& store, bool ok) const;
};

// `request`'s inline bytes are moved out. FEATURE_LEVEL_UNSPECIFIED means
// `highest_feature_level`.
absl::StatusOr<BuiltChain> BuildChain(dmlserve::v1::ChainRequest& request,
                                      const absl::StatusOr<std::string>& principal,
                                      store::TensorStore& store,
                                      FeatureLevel highest_feature_level);

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
