#include "engine/sched/admission.h"

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engine/ops/rule_status.h"
#include "engine/ops/schema.h"
#include "engine/ops/validator.h"

namespace dmls::sched {
namespace {

using Source = WorkSource::Kind;

uint64_t Bytes(const std::optional<TensorDesc>& t) {
  return t ? t->total_tensor_size_in_bytes : 0;
}

// One step as the checks see it: its operator's field paths and whether
// its descriptor passed validation (the rest of its checks trust it only
// then). Paths are made only for a message that names them, so that work
// that passes every check makes no string (admission runs per request).
struct StepView {
  const WorkStep* step = nullptr;
  std::string prefix;   // "", "steps[2].", "header." (short: no allocation)
  std::string_view op_field = "unknown";  // the schema's "celu"
  bool valid = false;

  // prefix + "operator.celu"
  std::string op_path() const {
    return absl::StrCat(prefix, "operator.", absl::string_view(op_field.data(), op_field.size()));
  }
};

// Inline for one step (an Execute): no allocation.
using StepViews = absl::InlinedVector<StepView, 1>;

struct Slot {
  const char* name;
  const std::optional<TensorDesc>* desc;
  const WorkSource* source;
};

std::array<Slot, 3> SlotsOf(const WorkStep& s) {
  return {{{"input", &s.op.input, &s.input},
           {"scale", &s.op.scale, &s.scale},
           {"bias", &s.op.bias, &s.bias}}};
}

std::string StepPrefix(const Work& work, size_t i) {
  switch (work.kind) {
    case Work::Kind::kChain:
      return absl::StrCat("steps[", i, "].");
    case Work::Kind::kChunked:
      return "header.";
    default:
      return "";
  }
}

// Where a source's problems are reported: "input" for an Execute payload,
// "input_handle" for an Execute's resident tensor, "steps[1].input.handle"
// in a chain.
std::string SourcePath(const Work& work, const StepView& v, const char* name,
                       const WorkSource& source) {
  std::string path = absl::StrCat(v.prefix, name);
  if (work.kind == Work::Kind::kExecute && source.kind == Source::kResident) {
    return path + "_handle";
  }
  if (work.kind != Work::Kind::kChain) return path;
  switch (source.kind) {
    case Source::kInline:
      return path + ".data";
    case Source::kResident:
      return path + ".handle";
    case Source::kStep:
      return path + ".step";
    default:
      return path;
  }
}

// 1. Validation of the steps: the validator's rules, then sources and
// output tensors of the valid steps.
std::vector<ops::Violation> ValidateSteps(const Work& work, StepViews& views) {
  std::vector<ops::Violation> found;
  auto add = [&found](std::string rule, std::string field, std::string message) {
    found.push_back({std::move(rule), std::move(field), ops::BoundedMessage(std::move(message))});
  };
  const uint32_t level = static_cast<uint32_t>(work.feature_level);
  for (size_t i = 0; i < work.steps.size(); ++i) {
    const WorkStep& s = work.steps[i];
    StepView& v = views[i];
    v.step = &s;
    v.prefix = StepPrefix(work, i);
    std::vector<ops::Violation> own = ops::ValidateAll(s.op, level, s.in_place);
    for (ops::Violation& x : own) {
      // A chain's feature level is the chain's, not a step's.
      if (work.kind != Work::Kind::kChain || x.field != "feature_level") {
        x.field = v.prefix + x.field;
      }
      found.push_back(std::move(x));
    }
    v.valid = own.empty();
    const ops::OperatorSchema* schema = v.valid ? ops::FindOperator(s.op.type) : nullptr;
    if (schema != nullptr) v.op_field = schema->field;
    if (!v.valid) continue;  // the descriptor says nothing reliable

    for (const Slot& slot : SlotsOf(s)) {
      const WorkSource& src = *slot.source;
      auto field = [&] { return absl::StrCat(v.prefix, slot.name); };
      auto path = [&] { return SourcePath(work, v, slot.name, src); };
      if (!slot.desc->has_value()) {
        // An Execute's empty payload is no source; its size is checked in 3.
        // A resident tensor is one, in an Execute too (at its handle field,
        // "scale_handle"; a chain's at the tensor, "steps[0].scale").
        if (src.kind != Source::kNone &&
            (work.kind == Work::Kind::kChain || src.kind == Source::kResident)) {
          add("CHAIN_SOURCE_UNEXPECTED", work.kind == Work::Kind::kChain ? field() : path(),
              absl::StrCat("a source was given for ", slot.name, " but the operator has no ",
                           slot.name, " tensor"));
        }
        continue;
      }
      const uint64_t want = (*slot.desc)->total_tensor_size_in_bytes;
      const uint32_t type = (*slot.desc)->data_type;
      switch (src.kind) {
        case Source::kNone:
          add("CHAIN_SOURCE_MISSING", field(),
              absl::StrCat("the ", slot.name, " tensor has no source (data, handle or step)"));
          break;
        case Source::kResident:
          if (src.data_type != type) {
            add("HANDLE_TYPE_MISMATCH", path(),
                absl::StrCat("the resident tensor is of data type ", src.data_type, ", the ",
                             slot.name, " tensor of ", type));
          } else if (src.bytes != want) {
            add("HANDLE_SIZE_MISMATCH", path(),
                absl::StrCat("the resident tensor has ", src.bytes, " bytes, the ", slot.name,
                             " tensor ", want));
          }
          break;
        case Source::kStep: {
          const uint32_t k = src.step;
          if (k >= i) {
            add("CHAIN_STEP_FORWARD", path(),
                absl::StrCat("step ", i, " can only use the output of an earlier step, not ", k));
            break;
          }
          if (!views[k].valid) break;
          const WorkStep& from = work.steps[k];
          const uint64_t bytes = OutputRange(from.op, from.in_place);
          if (bytes != want) {
            add("CHAIN_SIZE_MISMATCH", path(),
                absl::StrCat("step ", k, "'s output range has ", bytes, " bytes, the ",
                             slot.name, " tensor ", want));
          } else if (from.op.output->data_type != type) {
            add("CHAIN_TYPE_MISMATCH", path(),
                absl::StrCat("step ", k, "'s output is of data type ",
                             from.op.output->data_type, ", the ", slot.name, " tensor of ",
                             type));
          }
          break;
        }
        case Source::kInline:    // 3. checks its size
        case Source::kStreamed:  // its chunks are checked as they come
          break;
      }
    }
    if (s.target) {
      const std::string path = v.prefix + "output_handle";
      const uint64_t out = OutputRange(s.op, s.in_place);
      if (s.target->data_type != s.op.output->data_type) {
        add("HANDLE_TYPE_MISMATCH", path,
            absl::StrCat("the resident tensor is of data type ", s.target->data_type,
                         ", the output of ", s.op.output->data_type));
      } else if (s.target->bytes < out) {
        add("OUTPUT_HANDLE_TOO_SMALL", path,
            absl::StrCat("the resident tensor has ", s.target->bytes,
                         " bytes; the output range needs ", out));
      }
    }
  }
  return found;
}

// 1. Validation of a resident tensor's descriptor: the operators' tensor
// rules (OPERATORS.md §2), checked as the input of IDENTITY, whose output
// is its packed twin.
std::vector<ops::Violation> ValidateTensor(const Work& work) {
  const TensorDesc& desc = work.tensor;
  OperatorDesc op;
  op.type = static_cast<uint32_t>(OperatorType::kActivationIdentity);
  op.input = desc;
  if (!desc.sizes.empty() && desc.data_type != 0) {
    op.output = MakeTensorDesc(static_cast<DataType>(desc.data_type), desc.sizes);
  } else {
    op.output = desc;  // the input's rules report what is wrong
  }
  constexpr absl::string_view kInput = "operator.identity.input";
  std::vector<ops::Violation> found;
  for (ops::Violation& v :
       ops::ValidateAll(op, static_cast<uint32_t>(kHighestFeatureLevel), false)) {
    // IDENTITY's own data type support is not the tensor's business: a
    // resident tensor may hold any valid data type.
    if (!absl::StartsWith(v.field, kInput) || v.rule == "DATATYPE_UNSUPPORTED") continue;
    v.field = absl::StrCat(work.tensor_path, v.field.substr(kInput.size()));
    found.push_back(std::move(v));
  }
  return found;
}

// The server's tensor limit on `bytes` of the `what` ("input tensor");
// the field path, `path()`, is made only for the message of a failure.
template <typename Path>
absl::Status TensorLimit(uint64_t bytes, const Path& path, absl::string_view what,
                         const AdmissionOptions& o) {
  if (bytes <= o.max_tensor_bytes) return absl::OkStatus();
  return ops::RuleStatus(absl::StatusCode::kResourceExhausted, "TENSOR_BYTES_LIMIT", path(),
                         absl::StrCat("the ", what, " has ", bytes,
                                      " bytes, above the server limit of ",
                                      o.max_tensor_bytes, " bytes"));
}

// 2. Limits (tensor bytes, response bytes); the first hit.
absl::Status Limits(const Work& work, const StepViews& views,
                    const AdmissionOptions& o) {
  if (work.kind == Work::Kind::kTensor) {
    return TensorLimit(
        work.tensor.total_tensor_size_in_bytes,
        [&] { return absl::StrCat(work.tensor_path, ".total_tensor_size_in_bytes"); }, "tensor",
        o);
  }
  uint64_t returned = 0;
  for (const StepView& v : views) {
    const OperatorDesc& op = v.step->op;
    for (const auto& [name, what, t] : {std::tuple{"input", "input tensor", &op.input},
                                        std::tuple{"scale", "scale tensor", &op.scale},
                                        std::tuple{"bias", "bias tensor", &op.bias},
                                        std::tuple{"output", "output tensor", &op.output}}) {
      auto path = [&, name = name] {
        return absl::StrCat(v.op_path(), ".", name, ".total_tensor_size_in_bytes");
      };
      if (absl::Status s = TensorLimit(Bytes(*t), path, what, o); !s.ok()) return s;
    }
    if (v.step->returns_output && op.output) returned += OutputRange(op, v.step->in_place);
  }
  // A chunked output goes back in chunks, not in one response.
  if (o.max_output_bytes == 0 || returned <= o.max_output_bytes ||
      work.kind == Work::Kind::kChunked) {
    return absl::OkStatus();
  }
  if (work.kind == Work::Kind::kChain) {
    return ops::RuleStatus(
        absl::StatusCode::kResourceExhausted, "MESSAGE_BYTES_LIMIT", "steps",
        absl::StrCat("the response would carry ", returned,
                     " output bytes, above the server's limit of ", o.max_output_bytes,
                     "; keep outputs resident and read them with ReadTensor"));
  }
  return ops::RuleStatus(absl::StatusCode::kResourceExhausted, "MESSAGE_BYTES_LIMIT",
                         absl::StrCat(views[0].op_path(), ".output.total_tensor_size_in_bytes"),
                         absl::StrCat("the response would carry ", returned,
                                      " output bytes, above the server's limit of ",
                                      o.max_output_bytes, " output bytes"));
}

// 3. Inline payloads against their tensors; every mismatch.
std::vector<ops::Violation> Sizes(const Work& work, const StepViews& views) {
  std::vector<ops::Violation> found;
  for (const StepView& v : views) {
    for (const Slot& slot : SlotsOf(*v.step)) {
      const WorkSource& src = *slot.source;
      if (src.kind != Source::kInline) continue;
      std::string message;
      if (!slot.desc->has_value()) {
        if (src.bytes == 0) continue;
        message = absl::StrCat(src.bytes, " bytes of ", slot.name,
                               " payload were sent but the operator has no ", slot.name,
                               " tensor");
      } else if (src.bytes != (*slot.desc)->total_tensor_size_in_bytes) {
        message = absl::StrCat("the ", slot.name, " payload has ", src.bytes, " bytes but ",
                               v.op_path(), ".", slot.name, ".total_tensor_size_in_bytes is ",
                               (*slot.desc)->total_tensor_size_in_bytes);
      } else {
        continue;
      }
      found.push_back({"PAYLOAD_SIZE_MISMATCH", SourcePath(work, v, slot.name, src),
                       ops::BoundedMessage(std::move(message))});
    }
  }
  return found;
}

// 4. Amplification: every output range against the bytes the work brings
// in (a chain's later steps cannot multiply what its first one made).
absl::Status Amplification(const Work& work, const StepViews& views,
                           const AdmissionOptions& o) {
  const uint64_t ratio = work.output_ratio != 0
                             ? std::min(work.output_ratio, o.max_output_ratio_limit)
                             : o.max_output_ratio;
  if (ratio == 0) return absl::OkStatus();
  uint64_t brought = 0;
  for (const StepView& v : views) {
    for (const Slot& slot : SlotsOf(*v.step)) {
      if (slot.source->kind != Source::kStep) brought += slot.source->bytes;
    }
  }
  for (const StepView& v : views) {
    if (!v.step->op.output) continue;
    const uint64_t out = OutputRange(v.step->op, v.step->in_place);
    if (out <= o.output_ratio_floor_bytes || out / ratio <= std::max<uint64_t>(brought, 1)) {
      continue;
    }
    return ops::RuleStatus(
        absl::StatusCode::kResourceExhausted, "OUTPUT_AMPLIFICATION",
        absl::StrCat(v.op_path(), ".output.total_tensor_size_in_bytes"),
        absl::StrCat("the output range of ", out, " bytes is more than ", ratio,
                     " times the ", brought,
                     " bytes the request brings in; raise the ratio with the "
                     "'dmls-max-output-ratio' request metadata (within the server's limit)"));
  }
  return absl::OkStatus();
}

// 8. The host bytes the work holds until its response is written (the
// budget reserves twice this: each copy and its staged or serialized twin).
uint64_t HostBytes(const Work& work) {
  if (work.kind == Work::Kind::kTensor) return work.tensor_data_bytes;
  const bool chunked = work.kind == Work::Kind::kChunked;
  auto held = [&](uint64_t bytes) {
    return chunked && work.chunk_bytes != 0 ? std::min(bytes, work.chunk_bytes) : bytes;
  };
  uint64_t in = 0, out = 0;
  for (const WorkStep& s : work.steps) {
    for (const WorkSource* src : {&s.input, &s.scale, &s.bias}) {
      if (src->kind == Source::kInline || src->kind == Source::kStreamed) in += src->bytes;
    }
    if (s.returns_output && s.op.output) out += OutputRange(s.op, s.in_place);
  }
  return held(in) + held(out);
}

}  // namespace

uint64_t OutputRange(const OperatorDesc& op, bool in_place) {
  uint64_t out = Bytes(op.output);
  if (in_place) out = std::max(out, Bytes(op.input));
  return out;
}

namespace {

// Work of `kind` with the feature level, deadline and cancellation of `r`
// (an ExecuteRequest or a ChainRequest).
template <typename Request>
Work WorkOf(Work::Kind kind, const Request& r) {
  Work work;
  work.kind = kind;
  work.feature_level = r.feature_level;
  work.deadline = r.deadline;
  work.cancelled = r.cancelled;
  return work;
}

}  // namespace

Work ExecuteWork(const ExecuteRequest& r) {
  Work work = WorkOf(Work::Kind::kExecute, r);
  WorkStep& s = work.steps.emplace_back();
  s.op = r.op;
  s.in_place = r.in_place;
  s.returns_output = true;
  for (const auto& [src, payload] :
       {std::pair{&s.input, &r.input}, std::pair{&s.scale, &r.scale},
        std::pair{&s.bias, &r.bias}}) {
    src->kind = Source::kInline;
    src->bytes = payload->size();
  }
  return work;
}

Work ChainWork(const ChainRequest& chain) {
  Work work = WorkOf(Work::Kind::kChain, chain);
  for (const ChainStep& c : chain.steps) {
    WorkStep& s = work.steps.emplace_back();
    s.op = c.op;
    s.in_place = c.in_place;
    s.returns_output = c.return_output;
    for (const auto& [to, from, desc] :
         {std::tuple{&s.input, &c.input, &c.op.input}, std::tuple{&s.scale, &c.scale, &c.op.scale},
          std::tuple{&s.bias, &c.bias, &c.op.bias}}) {
      switch (from->kind) {
        case ChainSource::Kind::kNone:
          break;
        case ChainSource::Kind::kInline:
          to->kind = Source::kInline;
          to->bytes = from->bytes.size();
          break;
        case ChainSource::Kind::kResident:
          to->kind = Source::kResident;
          to->bytes = from->resident ? from->resident->size() : 0;
          to->data_type = *desc ? (*desc)->data_type : 0;
          break;
        case ChainSource::Kind::kStep:
          to->kind = Source::kStep;
          to->step = from->step;
          break;
      }
    }
    if (c.output) {
      s.target = WorkTarget{c.output->size(), c.op.output ? c.op.output->data_type : 0};
    }
  }
  return work;
}

uint64_t OutputRangeBytes(const ExecuteRequest& r) { return OutputRange(r.op, r.in_place); }

uint64_t RequestBytes(const ExecuteRequest& r) {
  return r.input.size() + r.scale.size() + r.bias.size() + OutputRangeBytes(r);
}

Admission::Admission(AdmissionOptions options, std::shared_ptr<Clock> clock)
    : options_(options),
      clock_(clock ? std::move(clock) : RealClock::Get()),
      slots_(options.max_in_flight),
      budget_(options.memory_budget_bytes) {}

absl::StatusOr<Admitted> Admission::Admit(const Work& work) {
  const AdmissionOptions& o = options_;
  if (work.kind == Work::Kind::kChain && work.steps.size() > o.max_chain_steps) {
    return ops::RuleStatus(absl::StatusCode::kResourceExhausted, "CHAIN_TOO_LONG", "steps",
                           absl::StrCat("the chain has ", work.steps.size(),
                                        " steps, above the server's ", o.max_chain_steps));
  }
  StepViews views(work.steps.size());
  std::vector<ops::Violation> invalid =
      work.kind == Work::Kind::kTensor ? ValidateTensor(work) : ValidateSteps(work, views);
  if (!invalid.empty()) {
    return ops::RuleStatus(absl::StatusCode::kInvalidArgument, std::move(invalid));
  }
  if (absl::Status s = Limits(work, views, o); !s.ok()) return s;
  if (std::vector<ops::Violation> sizes = Sizes(work, views); !sizes.empty()) {
    return ops::RuleStatus(absl::StatusCode::kInvalidArgument, std::move(sizes));
  }
  if (absl::Status s = Amplification(work, views, o); !s.ok()) return s;
  if (work.cancelled && work.cancelled->load()) {
    return absl::CancelledError("the call was cancelled before execution");
  }
  if (clock_->Now() >= work.deadline) {
    return absl::DeadlineExceededError("the deadline passed before execution");
  }

  Admitted admitted;
  // Count first, then compare, so that concurrent callers cannot all slip
  // under the limit together. Resident tensors are not executions.
  if (o.max_in_flight != 0 && work.kind != Work::Kind::kTensor) {
    // Work whose deadline passed or whose caller is gone, still queued in
    // the engine, does not count (in_flight_slots.h).
    const uint64_t slot = slots_.TryAcquire(work.deadline, work.cancelled, clock_->Now());
    if (slot == 0) {
      return ops::RuleStatus(absl::StatusCode::kResourceExhausted, "IN_FLIGHT_LIMIT", "",
                             absl::StrCat("the server already has ", o.max_in_flight,
                                          " requests in flight; retry later"));
    }
    admitted.slots_ = &slots_;
    admitted.slot_ = slot;
  }
  // The budget last, so that only work that will run reserves it.
  absl::StatusOr<ByteBudget::Reservation> reserved = ReserveBytes(2 * HostBytes(work));
  if (!reserved.ok()) return reserved.status();
  admitted.reservation_ = *std::move(reserved);
  return admitted;
}

absl::StatusOr<ByteBudget::Reservation> Admission::ReserveBytes(uint64_t bytes) {
  ByteBudget::Reservation reservation = budget_.TryReserve(bytes);
  if (reservation == nullptr) {
    return ops::RuleStatus(
        absl::StatusCode::kResourceExhausted, "MEMORY_BUDGET", "",
        absl::StrCat("the request needs about ", bytes,
                     " bytes of host memory and the server's budget of ", budget_.capacity(),
                     " bytes (", budget_.used(), " in use) cannot take it now; retry later"));
  }
  return reservation;
}

}  // namespace dmls::sched
