#include "server/request_processor.h"

#include <algorithm>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/rule_status.h"
#include "engine/ops/schema.h"
#include "engine/ops/validator.h"
#include "engine/sched/admission.h"
#include "server/chain_builder.h"
#include "server/mapping/proto_mapping.h"

namespace dmls::server {
namespace {

namespace v1 = dmlserve::v1;

// Room for an ExecuteResponse's fields besides the output bytes (request id,
// engine name, time, tags); generous on purpose.
constexpr uint64_t kResponseOverheadBytes = 1024;

std::string EngineName(const Engine& engine) {
  DeviceInfo info = engine.device_info();
  return info.backend.empty() ? info.kind : info.backend;
}

}  // namespace

RequestProcessor::RequestProcessor(Engine* engine, ProcessorOptions options,
                                   std::shared_ptr<spdlog::logger> logger,
                                   store::TensorStore* store)
    : engine_(engine),
      store_(store),
      options_(options),
      logger_(std::move(logger)),
      engine_name_(EngineName(*engine)),
      admission_(AdmissionOptionsOf(options)) {}

v1::ValidateResponse RequestProcessor::Validate(
    const v1::ValidateRequest& request) const {
  OperatorDesc op = OperatorFromProto(request.operator_());
  uint32_t level = FeatureLevelFromProto(request.feature_level(),
                                         options_.highest_feature_level);
  std::vector<ops::Violation> violations =
      ops::ValidateAll(op, level, request.in_place());
  v1::ValidateResponse response;
  response.set_valid(violations.empty());
  response.set_feature_level(level);
  for (const ops::Violation& v : violations) {
    ToProto(v, response.add_violations());
  }
  return response;
}

sched::AdmissionOptions AdmissionOptionsOf(const ProcessorOptions& options) {
  sched::AdmissionOptions a;
  a.max_tensor_bytes = options.max_tensor_bytes;
  a.max_output_ratio = options.max_output_ratio;
  a.max_output_ratio_limit = options.max_output_ratio_limit;
  a.max_chain_steps = options.max_chain_steps;
  a.max_in_flight = options.max_in_flight;
  a.memory_budget_bytes = options.memory_budget_bytes;
  // The response carries the output range plus a few small fields.
  if (options.max_message_bytes != 0) {
    a.max_output_bytes = options.max_message_bytes > kResponseOverheadBytes
                             ? options.max_message_bytes - kResponseOverheadBytes
                             : 1;
  }
  return a;
}

namespace {

// `done`, counting the outcome in `metrics` first.
template <typename Outcome>
absl::AnyInvocable<void(Outcome)> Recorded(absl::AnyInvocable<void(Outcome)> done,
                                           Metrics* metrics, MetricsMethod method,
                                           int operator_case, bool chain,
                                           uint64_t bytes_in, absl::Time start) {
  return [=, done = std::move(done)](Outcome outcome) mutable {
    uint64_t bytes_out = 0;
    if constexpr (std::is_same_v<Outcome, ExecuteOutcome>) {
      bytes_out = outcome.response.output().size();
    } else {
      for (const v1::ChainOutput& o : outcome.response.outputs()) {
        bytes_out += o.data().size();
      }
    }
    metrics->RecordRequest(method, operator_case, chain, outcome.error.code,
                           absl::Now() - start, bytes_in, bytes_out);
    done(std::move(outcome));
  };
}

// The answer (an ExecuteOutcome or a ChainOutcome) to request `request_id`
// received at `start`: `error` and the response fields every answer has.
template <typename Outcome>
Outcome Answer(RequestError error, uint64_t request_id,
               const std::string& engine, absl::Time start) {
  Outcome outcome;
  outcome.error = std::move(error);
  outcome.response.set_request_id(request_id);
  outcome.response.set_engine(engine);
  outcome.response.set_server_time_us(
      static_cast<uint64_t>(absl::ToInt64Microseconds(absl::Now() - start)));
  return outcome;
}

}  // namespace

void RequestProcessor::Execute(v1::ExecuteRequest& request, CallContext context,
                               OutcomeCallback done, std::array<Payload, 3> payloads) {
  const absl::Time start = absl::Now();
  // The message's own payload fields where the transport left them there
  // (mutable only where one is set: an empty field's mutable_ allocates).
  const std::string* const given[3] = {&request.input(), &request.scale(), &request.bias()};
  auto field = [&request](int i) {
    return i == 0 ? request.mutable_input() : i == 1 ? request.mutable_scale()
                                                     : request.mutable_bias();
  };
  for (int i = 0; i < 3; ++i) {
    if (payloads[i].empty() && !given[i]->empty()) payloads[i] = std::move(*field(i));
  }
  if (options_.metrics != nullptr) {
    done = Recorded(std::move(done), options_.metrics, context.method,
                    request.operator_().operator_case(), /*chain=*/false,
                    payloads[0].size() + payloads[1].size() + payloads[2].size(),
                    start);
  }
  const uint64_t request_id = request.request_id();
  auto finish = [this, start, request_id](RequestError error,
                                          std::string output) {
    ExecuteOutcome outcome =
        Answer<ExecuteOutcome>(std::move(error), request_id, engine_name_, start);
    if (outcome.error.ok()) {
      outcome.response.set_output(std::move(output));
    }
    return outcome;
  };

  if (UsesResidentTensors(request)) {
    std::array<std::string, 3> bytes;
    for (int i = 0; i < 3; ++i) bytes[i] = payloads[i].TakeString();
    // Both ways for one tensor is the request's own error, reported before
    // the server's (no store) and the call's (metadata).
    absl::Status ready = CheckEachTensorOnce(request, bytes);
    if (ready.ok()) ready = ChainReady(context);
    absl::StatusOr<BuiltChain> built =
        ready.ok() ? BuildExecute(request, bytes, context.principal, *store_,
                                  options_.highest_feature_level)
                   : absl::StatusOr<BuiltChain>(ready);
    RunChain(std::move(built), std::move(context), request_id,
             [finish, done = std::move(done)](ChainRun run) mutable {
               std::string output;
               std::string handle;
               if (run.error.ok() && !run.built->outputs.empty()) {
                 const StepOutput& o = run.built->outputs.front();
                 if (o.returns_bytes) output = std::move(run.outputs[o.step]);
                 handle = o.handle;
               }
               ExecuteOutcome outcome = finish(std::move(run.error), std::move(output));
               outcome.response.set_output_handle(handle);
               outcome.admitted = std::move(run.admitted);
               done(std::move(outcome));
             });
    return;
  }
  if (!context.output_ratio.ok()) {
    done(finish(RequestError::FromStatus(context.output_ratio.status()), {}));
    return;
  }
  ExecuteRequest engine_request;
  engine_request.op = OperatorFromProto(request.operator_());
  engine_request.feature_level = static_cast<FeatureLevel>(FeatureLevelFromProto(
      request.feature_level(), options_.highest_feature_level));
  engine_request.in_place = request.in_place();
  engine_request.input = std::move(payloads[0]);
  engine_request.scale = std::move(payloads[1]);
  engine_request.bias = std::move(payloads[2]);
  engine_request.deadline = context.deadline;
  engine_request.cancelled = std::move(context.cancelled);
  sched::Work work = sched::ExecuteWork(engine_request);
  work.output_ratio = *context.output_ratio;
  absl::StatusOr<sched::Admitted> admitted = admission_.Admit(work);
  if (!admitted.ok()) {
    RequestError error = RequestError::FromStatus(admitted.status());
    logger_->debug("request {} rejected: {}", request_id, error.message);
    done(finish(std::move(error), {}));
    return;
  }
  engine_->Execute(
      std::move(engine_request),
      [this, finish, request_id, admitted = std::move(*admitted),
       done = std::move(done)](absl::StatusOr<ExecuteResult> result) mutable {
        admitted.ReleaseSlot();
        if (!result.ok()) {
          done(finish(EngineError(request_id, result.status()), {}));
          return;
        }
        ExecuteOutcome outcome =
            finish(RequestError{}, std::move(result->output));
        outcome.admitted = std::move(admitted);
        outcome.timing = result->timing;
        logger_->debug("request {} done in {} us", request_id,
                       outcome.response.server_time_us());
        done(std::move(outcome));
      });
}

RequestError RequestProcessor::EngineError(uint64_t request_id,
                                           const absl::Status& status) {
  RequestError error = RequestError::FromEngine(status);
  if (error.code == absl::StatusCode::kInternal) {
    logger_->error("request {} failed in the engine: {}", request_id, status.ToString());
  } else {
    logger_->debug("request {} failed in the engine: {}", request_id, status.ToString());
  }
  return error;
}

void RequestProcessor::ExecuteChain(v1::ChainRequest& request, CallContext context,
                                    ChainOutcomeCallback done) {
  const absl::Time start = absl::Now();
  if (options_.metrics != nullptr) {
    uint64_t bytes_in = 0;
    for (const v1::ChainStep& step : request.steps()) {
      bytes_in += step.input().data().size() + step.scale().data().size() +
                  step.bias().data().size();
    }
    done = Recorded(std::move(done), options_.metrics, context.method,
                    /*operator_case=*/0, /*chain=*/true, bytes_in, start);
  }
  const uint64_t request_id = request.request_id();
  const absl::Status ready = ChainReady(context);
  absl::StatusOr<BuiltChain> built =
      ready.ok() ? BuildChain(request, context.principal, *store_, options_.highest_feature_level)
                 : absl::StatusOr<BuiltChain>(ready);
  RunChain(std::move(built), std::move(context), request_id,
           [this, start, request_id, done = std::move(done)](ChainRun run) mutable {
             ChainOutcome outcome =
                 Answer<ChainOutcome>(std::move(run.error), request_id, engine_name_, start);
             if (outcome.error.ok()) {
               for (const StepOutput& o : run.built->outputs) {
                 v1::ChainOutput& out = *outcome.response.add_outputs();
                 out.set_step(o.step);
                 out.set_handle(o.handle);
                 if (o.returns_bytes) out.set_data(std::move(run.outputs[o.step]));
               }
             }
             outcome.admitted = std::move(run.admitted);
             done(std::move(outcome));
           });
}

absl::Status RequestProcessor::ChainReady(const CallContext& context) const {
  if (store_ == nullptr) return absl::UnimplementedError("this server keeps no resident tensors");
  return context.output_ratio.status();
}

void RequestProcessor::RunChain(absl::StatusOr<BuiltChain> built, CallContext context,
                                uint64_t request_id, absl::AnyInvocable<void(ChainRun)> done) {
  absl::StatusOr<sched::Admitted> admitted = sched::Admitted();
  if (!built.ok()) {
    admitted = built.status();
  } else {
    built->work.deadline = context.deadline;
    built->work.cancelled = context.cancelled;
    built->work.output_ratio = *context.output_ratio;
    admitted = admission_.Admit(built->work);
  }
  absl::Status kept = admitted.status();
  if (kept.ok()) kept = built->CreateKept(*store_, context.principal);
  if (!kept.ok()) {
    ChainRun run;
    run.error = RequestError::FromStatus(kept);
    logger_->debug("chain {} rejected: {}", request_id, run.error.message);
    done(std::move(run));
    return;
  }
  built->request.deadline = context.deadline;
  built->request.cancelled = std::move(context.cancelled);
  ChainRequest engine_request = std::move(built->request);
  auto outputs = std::make_shared<const BuiltChain>(std::move(*built));
  engine_->ExecuteChain(
      std::move(engine_request),
      [this, request_id, outputs, admitted = std::move(*admitted),
       done = std::move(done)](absl::StatusOr<ChainResult> result) mutable {
        admitted.ReleaseSlot();
        outputs->Settle(*store_, result.ok());
        ChainRun run;
        if (!result.ok()) {
          run.error = EngineError(request_id, result.status());
        } else {
          run.built = std::move(outputs);
          run.outputs = std::move(result->outputs);
          run.admitted = std::move(admitted);
        }
        done(std::move(run));
      });
}

}  // namespace dmls::server
