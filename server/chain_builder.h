// ChainBuilder: a wire ChainRequest, or an ExecuteRequest that names
// resident tensors, turned into the engine's ChainRequest
// (engine/core/resident.h: an Execute is a one-step chain there, not a
// rewritten message) and the sched::Work that admission checks
// (engine/sched/admission.h: operators, sources, sizes, limits,
// amplification) before anything runs. Both messages map to the same
// steps; only the field paths differ ("steps[1].input.handle" in a chain,
// "input_handle" in an Execute, whose Work is of kind kExecute so that
// admission reports its fields the Execute's way too).
//
// BuildChain and BuildExecute resolve handles (unknown ones, and other
// principals', are NOT_FOUND, the first one found), take the inline bytes,
// and check what only the wire says: outputs go to at most one resident
// tensor, never one that the same step reads (unless in place); something
// comes out of the chain. INVALID_ARGUMENT with every violation found.
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

#include <array>
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
  std::string keep_path;      // keep: where its errors are reported
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

// INVALID_ARGUMENT (HANDLE_AND_BYTES, at "input_handle" say) when a tensor
// of `request` is given both as a handle and as bytes (`payloads`: input,
// scale, bias); the first check of an Execute on handles.
absl::Status CheckEachTensorOnce(const dmlserve::v1::ExecuteRequest& request,
                                 const std::array<std::string, 3>& payloads);

// The one-step chain of such a request, with `payloads` (input, scale,
// bias; moved out) as its inline tensors; CheckEachTensorOnce's error
// first. A tensor without a handle is its payload, even an empty one
// (admission checks its size).
absl::StatusOr<BuiltChain> BuildExecute(dmlserve::v1::ExecuteRequest& request,
                                        std::array<std::string, 3>& payloads,
                                        const absl::StatusOr<std::string>& principal,
                                        store::TensorStore& store,
                                        FeatureLevel highest_feature_level);

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_CHAIN_BUILDER_H_
