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
                                   TensorStore* store)
    : engine_(engine),
      store_(store),
      options_(options),
      logger_(std::move(logger)),
      engine_name_(EngineName(*engine)),
      admission_(Admission()),
      budget_(options.memory_budget_bytes) {}

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

sched::AdmissionOptions RequestProcessor::Admission() const {
  sched::AdmissionOptions a;
  a.max_tensor_bytes = options_.max_tensor_bytes;
  a.max_output_ratio = options_.max_output_ratio;
  // The response carries the output range plus a few small fields.
  if (options_.max_message_bytes != 0) {
    a.max_output_bytes = options_.max_message_bytes > kResponseOverheadBytes
                             ? options_.max_message_bytes - kResponseOverheadBytes
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
                               OutcomeCallback done) {
  const absl::Time start = absl::Now();
  if (options_.metrics != nullptr && context.record) {
    done = Recorded(std::move(done), options_.metrics, context.method,
                    request.operator_().operator_case(), /*chain=*/false,
                    request.input().size() + request.scale().size() +
                        request.bias().size(),
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
    absl::StatusOr<v1::ChainRequest> chain = ChainOfExecute(request);
    if (!chain.ok()) {
      done(finish(RequestError::FromStatus(chain.status()), {}));
      return;
    }
    context.record = false;  // counted here, as an Execute
    ExecuteChain(*chain, std::move(context),
                 [finish, done = std::move(done)](ChainOutcome c) mutable {
                   for (ops::Violation& v : c.error.violations) v.field = ExecutePath(v.field);
                   if (!c.error.violations.empty()) {
                     c.error.message = ops::Summary(c.error.violations.front());
                   }
                   std::string output;
                   std::string handle;
                   if (c.error.ok() && c.response.outputs_size() > 0) {
                     output = std::move(*c.response.mutable_outputs(0)->mutable_data());
                     handle = c.response.outputs(0).handle();
                   }
                   ExecuteOutcome outcome = finish(std::move(c.error), std::move(output));
                   outcome.response.set_output_handle(handle);
                   outcome.reservation = std::move(c.reservation);
                   done(std::move(outcome));
                 });
    return;
  }
  ExecuteRequest engine_request;
  engine_request.op = OperatorFromProto(request.operator_());
  engine_request.feature_level = static_cast<FeatureLevel>(FeatureLevelFromProto(
      request.feature_level(), options_.highest_feature_level));
  engine_request.in_place = request.in_place();
  engine_request.input = std::move(*request.mutable_input());
  engine_request.scale = std::move(*request.mutable_scale());
  engine_request.bias = std::move(*request.mutable_bias());
  if (!context.output_ratio.ok()) {
    done(finish(RequestError::FromStatus(context.output_ratio.status()), {}));
    return;
  }
  sched::AdmissionOptions admission = admission_;
  if (*context.output_ratio != 0) {
    admission.max_output_ratio =
        std::min(*context.output_ratio, options_.max_output_ratio_limit);
  }
  // Validation, limits and payload sizes: engine/sched's admission, once
  // (the engine's scheduler is configured not to validate again).
  if (absl::Status s = sched::Admit(engine_request, admission); !s.ok()) {
    RequestError error = RequestError::FromStatus(s);
    logger_->debug("request {} rejected: {}", request_id, error.message);
    done(finish(std::move(error), {}));
    return;
  }
  std::shared_ptr<ByteBudget::Reservation> reservation;
  if (RequestError e = Reserve(context, 2 * sched::RequestBytes(engine_request),
                               &reservation);
      !e.ok()) {
    done(finish(std::move(e), {}));
    return;
  }
  engine_request.deadline = context.deadline;
  engine_request.cancelled = std::move(context.cancelled);
  engine_->Execute(
      std::move(engine_request),
      [this, finish, request_id, reservation = std::move(reservation),
       done = std::move(done)](absl::StatusOr<ExecuteResult> result) mutable {
        in_flight_.fetch_sub(1);
        if (!result.ok()) {
          done(finish(EngineError(request_id, result.status()), {}));
          return;
        }
        ExecuteOutcome outcome =
            finish(RequestError{}, std::move(result->output));
        outcome.reservation = std::move(reservation);
        logger_->debug("request {} done in {} us", request_id,
                       outcome.response.server_time_us());
        done(std::move(outcome));
      });
}

RequestError RequestProcessor::Reserve(
    const CallContext& context, uint64_t estimate,
    std::shared_ptr<ByteBudget::Reservation>* reservation) {
  if (context.cancelled && context.cancelled->load()) {
    return RequestError::FromStatus(
        absl::CancelledError("the call was cancelled before execution"));
  }
  if (absl::Now() >= context.deadline) {
    return RequestError::FromStatus(
        absl::DeadlineExceededError("the deadline passed before execution"));
  }
  // Count first, then compare, so that concurrent callers cannot all slip
  // under the limit together.
  if (in_flight_.fetch_add(1) >= options_.max_in_flight) {
    in_flight_.fetch_sub(1);
    return RequestError::Rule(
        absl::StatusCode::kResourceExhausted, "IN_FLIGHT_LIMIT", "",
        absl::StrCat("the server already has ", options_.max_in_flight,
                     " requests in flight; retry later"));
  }
  // The memory budget, after every cheaper check so that it is only
  // reserved by requests that will run.
  *reservation = budget_.TryReserve(estimate);
  if (*reservation == nullptr) {
    in_flight_.fetch_sub(1);
    return RequestError::Rule(
        absl::StatusCode::kResourceExhausted, "MEMORY_BUDGET", "",
        absl::StrCat("the request needs about ", estimate,
                     " bytes of host memory and the server's budget of ",
                     budget_.capacity(), " bytes (", budget_.used(),
                     " in use) cannot take it now; retry later"));
  }
  return RequestError{};
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
  if (options_.metrics != nullptr && context.record) {
    uint64_t bytes_in = 0;
    for (const v1::ChainStep& step : request.steps()) {
      bytes_in += step.input().data().size() + step.scale().data().size() +
                  step.bias().data().size();
    }
    done = Recorded(std::move(done), options_.metrics, context.method,
                    /*operator_case=*/0, /*chain=*/true, bytes_in, start);
  }
  const uint64_t request_id = request.request_id();
  auto finish = [this, start, request_id](RequestError error) {
    return Answer<ChainOutcome>(std::move(error), request_id, engine_name_, start);
  };
  if (store_ == nullptr) {
    done(finish(RequestError::FromStatus(
        absl::UnimplementedError("this server keeps no resident tensors"))));
    return;
  }
  if (!context.principal.ok()) {
    done(finish(RequestError::FromStatus(context.principal.status())));
    return;
  }
  ChainLimits limits;
  limits.max_steps = options_.max_chain_steps;
  limits.max_tensor_bytes = options_.max_tensor_bytes;
  limits.max_returned_bytes = admission_.max_output_bytes;
  limits.highest_feature_level = options_.highest_feature_level;
  absl::StatusOr<BuiltChain> built =
      BuildChain(request, *context.principal, *store_, limits);
  if (!built.ok()) {
    RequestError error = RequestError::FromStatus(built.status());
    logger_->debug("chain {} rejected: {}", request_id, error.message);
    done(finish(std::move(error)));
    return;
  }
  std::shared_ptr<ByteBudget::Reservation> reservation;
  if (RequestError e = Reserve(context, 2 * (built->inline_bytes + built->returned_bytes),
                               &reservation);
      !e.ok()) {
    built->Settle(*store_, /*ok=*/false);
    done(finish(std::move(e)));
    return;
  }
  built->request.deadline = context.deadline;
  built->request.cancelled = std::move(context.cancelled);
  ChainRequest engine_request = std::move(built->request);
  auto outputs = std::make_shared<BuiltChain>(std::move(*built));
  engine_->ExecuteChain(
      std::move(engine_request),
      [this, finish, request_id, outputs, reservation = std::move(reservation),
       done = std::move(done)](absl::StatusOr<ChainResult> result) mutable {
        in_flight_.fetch_sub(1);
        outputs->Settle(*store_, result.ok());
        if (!result.ok()) {
          done(finish(EngineError(request_id, result.status())));
          return;
        }
        ChainOutcome outcome = finish(RequestError{});
        for (const StepOutput& o : outputs->outputs) {
          v1::ChainOutput& out = *outcome.response.add_outputs();
          out.set_step(o.step);
          out.set_handle(o.handle);
          if (o.returns_bytes) out.set_data(std::move(result->outputs[o.step]));
        }
        outcome.reservation = std::move(reservation);
        done(std::move(outcome));
      });
}

}  // namespace dmls::server
