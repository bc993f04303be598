// RequestProcessor: the path of one request from wire message to engine and
// back, shared by Execute, ExecuteStream and ExecuteChain (and Validate's
// dry run). It maps the proto to the engine's request (moving the
// payloads), admits it once through the server's sched::Admission
// (engine/sched/admission.h: validation, limits, sizes, amplification,
// cancellation, deadline, an in-flight slot and the byte budget), hands it
// to the engine (whose scheduler batches it) and builds the response when
// the engine completes. It reports errors as RequestError values; how they
// reach the client is the caller's business.
//
// Ownership: borrows the engine (which must outlive it and have drained
// before it is destroyed); owns the server's Admission, which the chunked
// and tensor RPCs share (admission()). Thread-safe: any number of threads
// may call it at once; the admission's counters are the only shared state.
#ifndef DMLSERVE_SERVER_REQUEST_PROCESSOR_H_
#define DMLSERVE_SERVER_REQUEST_PROCESSOR_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/time/time.h"
#include "dmlserve/v1/dmlserve.pb.h"
#include "engine/core/engine.h"
#include "engine/core/operator_desc.h"
#include "engine/core/payload.h"
#include "engine/sched/admission.h"
#include "server/telemetry/metrics.h"
#include "server/mapping/status_mapping.h"
#include "engine/store/tensor_store.h"
#include "server/chain_builder.h"
#include "spdlog/logger.h"

namespace dmls::server {

struct ProcessorOptions {
  // Where finished requests are counted; null: nowhere. Not owned.
  Metrics* metrics = nullptr;
  // Largest total_tensor_size_in_bytes of any tensor of a request.
  uint64_t max_tensor_bytes = uint64_t{1} << 30;
  // Largest response gRPC may send; an output that cannot fit is refused
  // before it is computed. 0 = no check.
  uint64_t max_message_bytes = 0;
  // Executions handed to the engine and not yet completed, server-wide.
  uint32_t max_in_flight = 256;
  // Host memory the requests in flight may hold, estimated per request as
  // twice its payload bytes plus twice its output range (the received
  // payload and its staged copy; the output and its serialized response),
  // held until the response is written. Beyond it: RESOURCE_EXHAUSTED
  // (MEMORY_BUDGET). 0 = no limit.
  uint64_t memory_budget_bytes = 0;
  // What FEATURE_LEVEL_UNSPECIFIED means.
  FeatureLevel highest_feature_level = kHighestFeatureLevel;
  // Most steps of one ExecuteChain.
  uint32_t max_chain_steps = 64;
  // Amplification (engine/sched/admission.h): the default limit of output
  // bytes per payload byte (0: none), and the most a call may ask for
  // (CallContext::output_ratio).
  uint64_t max_output_ratio = 64;
  uint64_t max_output_ratio_limit = 4096;
};

// What the transport knows about the call a request arrived on.
struct CallContext {
  absl::Time deadline = absl::InfiniteFuture();
  // Set when the client cancels; may be null (never cancelled).
  std::shared_ptr<const std::atomic<bool>> cancelled;
  // Who is calling (principal.h); an error when the call names an invalid
  // tenant or none, reported only by requests that use resident tensors
  // (chain_builder.h decides).
  absl::StatusOr<std::string> principal = std::string();
  // The amplification limit the call asks for (call_metadata.h); 0: the
  // server's default; an error when the metadata is malformed.
  absl::StatusOr<uint64_t> output_ratio = uint64_t{0};
  // The RPC, for metrics.
  MetricsMethod method = MetricsMethod::kExecute;
};

struct ExecuteOutcome {
  RequestError error;  // ok() on success
  // Always carries request_id, engine and server_time_us; output on success.
  dmlserve::v1::ExecuteResponse response;
  // What admission let in (its in-flight slot already released): the
  // request's share of the memory budget. Keep it until the response has
  // been written (or dropped), then let it go.
  sched::Admitted admitted;
  // Where the engine spent the request's time (engine/core's
  // ExecuteTiming; zero for failures and for a request run as a chain).
  ExecuteTiming timing;
};
using OutcomeCallback = absl::AnyInvocable<void(ExecuteOutcome)>;

struct ChainOutcome {
  RequestError error;  // ok() on success
  // Always carries request_id, engine and server_time_us.
  dmlserve::v1::ChainResponse response;
  sched::Admitted admitted;  // as ExecuteOutcome's
};
using ChainOutcomeCallback = absl::AnyInvocable<void(ChainOutcome)>;

class RequestProcessor {
 public:
  // `store` keeps the resident tensors; null: requests that use them get
  // UNIMPLEMENTED.
  RequestProcessor(Engine* engine, ProcessorOptions options,
                   std::shared_ptr<spdlog::logger> logger,
                   store::TensorStore* store = nullptr);
  RequestProcessor(const RequestProcessor&) = delete;
  RequestProcessor& operator=(const RequestProcessor&) = delete;

  // The dry run: every violation, never an error status.
  dmlserve::v1::ValidateResponse Validate(
      const dmlserve::v1::ValidateRequest& request) const;

  // Checks `request` and starts it on the engine. `payloads` (input, scale,
  // bias) are the payload fields as the transport located them in the
  // received bytes (message_codec.h's ParseRequestWithPayloads; those fields
  // of `request` are then empty); they reach the engine as they are, still
  // borrowing the received memory (no copy). An empty one stands for the
  // message's own field (callers that build the message: KServe, tests),
  // whose string is moved out of `request` (no copy). `done` is called
  // exactly once: on this thread before Execute returns when a check fails,
  // otherwise from the engine's completion, possibly on another thread.
  // A request that names resident tensors or keeps its output runs as a
  // one-step chain on the engine (chain_builder.h's BuildExecute), its
  // error paths in ExecuteRequest's terms; its inline bytes are then
  // copied into strings (a chain's inline sources are strings).
  void Execute(dmlserve::v1::ExecuteRequest& request, CallContext context,
               OutcomeCallback done, std::array<Payload, 3> payloads = {});

  // Builds the chain (chain_builder.h), admits it, creates the tensors it
  // keeps, then runs it on the engine. Inline bytes are moved out of
  // `request`. `done` as for Execute.
  void ExecuteChain(dmlserve::v1::ChainRequest& request, CallContext context,
                    ChainOutcomeCallback done);

  // Executions currently in the engine.
  uint32_t in_flight() const { return admission_.in_flight(); }
  const ProcessorOptions& options() const { return options_; }
  // The server's one admission (shared with ExecuteChunked and the tensor
  // RPCs, so that every call counts against the same limits).
  sched::Admission& admission() { return admission_; }

 private:
  // What RunChain hands back: an error, or the engine's outputs (by step)
  // and the built chain's outputs (handles, what returns bytes).
  struct ChainRun {
    RequestError error;
    std::shared_ptr<const BuiltChain> built;  // set when error.ok()
    std::vector<std::string> outputs;         // ChainResult::outputs
    sched::Admitted admitted;
  };
  // What a chain needs of the server and the call before it is built: a
  // tensor store (UNIMPLEMENTED without) and well-formed ratio metadata.
  absl::Status ChainReady(const CallContext& context) const;
  // Admits `built` (or answers its error), creates the tensors it keeps,
  // runs it on the engine and settles those tensors. `done` as Execute's.
  void RunChain(absl::StatusOr<BuiltChain> built, CallContext context, uint64_t request_id,
                absl::AnyInvocable<void(ChainRun)> done);
  // Logs an engine failure at the level its mapping deserves.
  RequestError EngineError(uint64_t request_id, const absl::Status& status);

  Engine* const engine_;
  store::TensorStore* const store_;
  const ProcessorOptions options_;
  const std::shared_ptr<spdlog::logger> logger_;
  const std::string engine_name_;
  sched::Admission admission_;
};

// The admission options `options` ask for (the response's room for fields
// besides the output taken off max_message_bytes).
sched::AdmissionOptions AdmissionOptionsOf(const ProcessorOptions& options);

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_REQUEST_PROCESSOR_H_
