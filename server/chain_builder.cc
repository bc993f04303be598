#include "server/chain_builder.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engine/ops/rule_status.h"
#include "engine/ops/schema.h"
#include "engine/ops/validator.h"
#include "server/mapping/proto_mapping.h"

namespace dmls::server {
namespace {

namespace v1 = dmlserve::v1;

uint64_t Bytes(const std::optional<TensorDesc>& t) {
  return t ? t->total_tensor_size_in_bytes : 0;
}

// What the checks of one chain collect.
struct Problems {
  std::vector<ops::Violation> invalid;     // INVALID_ARGUMENT
  std::optional<absl::Status> not_found;   // the first unknown handle
  std::optional<absl::Status> exhausted;   // the first limit hit

  void Add(std::string rule, std::string field, std::string message) {
    invalid.push_back({std::move(rule), std::move(field),
                       ops::BoundedMessage(std::move(message))});
  }
  void Limit(std::string rule, std::string field, std::string message) {
    if (!exhausted) {
      exhausted = ops::RuleStatus(absl::StatusCode::kResourceExhausted, std::move(rule),
                                  std::move(field), std::move(message));
    }
  }
};

// A step as far as later steps need to know it.
struct StepInfo {
  bool valid = false;
  uint64_t output_bytes = 0;
  uint32_t output_type = 0;
};

// The resident tensor `handle` names, or nullptr (recorded in `p`).
std::shared_ptr<const ResidentTensor> Lookup(TensorStore& store,
                                             const std::string& principal,
                                             const std::string& handle,
                                             const std::string& field, Problems& p) {
  absl::StatusOr<std::shared_ptr<const ResidentTensor>> t = store.Find(principal, handle);
  if (t.ok()) return *t;
  if (!p.not_found) {
    p.not_found = ops::RuleStatus(absl::StatusCode::kNotFound, "HANDLE_NOT_FOUND", field,
                                  std::string(t.status().message()).substr(
                                      std::string("HANDLE_NOT_FOUND: ").size()));
  }
  return nullptr;
}

}  // namespace

void BuiltChain::Settle(TensorStore& store, bool ok) const {
  for (const StepOutput& o : outputs) {
    if (!o.new_tensor) continue;
    if (ok) {
      store.Publish(o.handle);
    } else {
      store.Abandon(o.handle);
    }
  }
}

absl::StatusOr<BuiltChain> BuildChain(v1::ChainRequest& request,
                                      const std::string& principal,
                                      TensorStore& store, const ChainLimits& limits) {
  Problems p;
  const int n = request.steps_size();
  if (n == 0) {
    return ops::RuleStatus(absl::StatusCode::kInvalidArgument, "CHAIN_EMPTY", "steps",
                           "a chain needs at least one step");
  }
  if (static_cast<uint32_t>(n) > limits.max_steps) {
    return ops::RuleStatus(absl::StatusCode::kResourceExhausted, "CHAIN_TOO_LONG", "steps",
                           absl::StrCat("the chain has ", n, " steps, above the server's ",
                                        limits.max_steps));
  }
  const uint32_t level =
      FeatureLevelFromProto(request.feature_level(), limits.highest_feature_level);
  BuiltChain built;
  built.request.feature_level = static_cast<FeatureLevel>(level);
  std::vector<StepInfo> info(n);
  // Tensors a step writes, to be created once everything checks out.
  std::vector<const v1::ChainStep*> keeps(n, nullptr);

  for (int i = 0; i < n; ++i) {
    v1::ChainStep& ws = *request.mutable_steps(i);
    const std::string sp = absl::StrCat("steps[", i, "]");
    ChainStep step;
    step.op = OperatorFromProto(ws.operator_());
    step.in_place = ws.in_place();
    std::vector<ops::Violation> v = ops::ValidateAll(step.op, level, step.in_place);
    for (ops::Violation& x : v) {
      if (x.field != "feature_level") x.field = absl::StrCat(sp, ".", x.field);
      p.invalid.push_back(std::move(x));
    }
    const bool valid = v.empty();
    const ops::OperatorSchema* schema = valid ? ops::FindOperator(step.op.type) : nullptr;
    const std::string op_path =
        absl::StrCat(sp, ".operator.", schema ? std::string(schema->field) : "unknown");
    if (valid) {
      for (const auto& [name, t] : {std::pair{"input", &step.op.input},
                                    std::pair{"scale", &step.op.scale},
                                    std::pair{"bias", &step.op.bias},
                                    std::pair{"output", &step.op.output}}) {
        if (Bytes(*t) > limits.max_tensor_bytes) {
          p.Limit("TENSOR_BYTES_LIMIT",
                  absl::StrCat(op_path, ".", name, ".total_tensor_size_in_bytes"),
                  absl::StrCat("the ", name, " tensor has ", Bytes(*t),
                               " bytes, above the server limit of ",
                               limits.max_tensor_bytes, " bytes"));
        }
      }
    }

    // Sources.
    std::vector<std::string> input_handles;
    const std::tuple<const char*, v1::ChainTensor*, const std::optional<TensorDesc>*,
                     ChainSource*>
        slots[] = {{"input", ws.mutable_input(), &step.op.input, &step.input},
                   {"scale", ws.mutable_scale(), &step.op.scale, &step.scale},
                   {"bias", ws.mutable_bias(), &step.op.bias, &step.bias}};
    for (const auto& [name, src, desc, out] : slots) {
      const std::string field = absl::StrCat(sp, ".", name);
      const bool has_source = src->source_case() != v1::ChainTensor::SOURCE_NOT_SET;
      if (!valid) continue;  // the descriptor says nothing reliable
      if (!desc->has_value()) {
        if (has_source) {
          p.Add("CHAIN_SOURCE_UNEXPECTED", field,
                absl::StrCat("a source was given for ", name,
                             " but the operator has no ", name, " tensor"));
        }
        continue;
      }
      const uint64_t want = (*desc)->total_tensor_size_in_bytes;
      const uint32_t type = (*desc)->data_type;
      switch (src->source_case()) {
        case v1::ChainTensor::SOURCE_NOT_SET:
          p.Add("CHAIN_SOURCE_MISSING", field,
                absl::StrCat("the ", name, " tensor has no source (data, handle or step)"));
          break;
        case v1::ChainTensor::kData:
          if (src->data().size() != want) {
            p.Add("PAYLOAD_SIZE_MISMATCH", field + ".data",
                  absl::StrCat(src->data().size(), " bytes of ", name, " were sent; its ",
                               "total_tensor_size_in_bytes is ", want));
          } else {
            built.inline_bytes += want;
            *out = ChainSource::Inline(std::move(*src->mutable_data()));
          }
          break;
        case v1::ChainTensor::kHandle: {
          const std::string hf = field + ".handle";
          auto t = Lookup(store, principal, src->handle(), hf, p);
          if (t == nullptr) break;
          if (t->desc.data_type != type) {
            p.Add("HANDLE_TYPE_MISMATCH", hf,
                  absl::StrCat("the resident tensor is of data type ", t->desc.data_type,
                               ", the ", name, " tensor of ", type));
          } else if (t->desc.total_tensor_size_in_bytes != want) {
            p.Add("HANDLE_SIZE_MISMATCH", hf,
                  absl::StrCat("the resident tensor has ", t->desc.total_tensor_size_in_bytes,
                               " bytes, the ", name, " tensor ", want));
          } else {
            *out = ChainSource::Resident(t->buffer);
            input_handles.push_back(src->handle());
          }
          break;
        }
        case v1::ChainTensor::kStep: {
          const std::string sf = field + ".step";
          const uint32_t k = src->step();
          if (k >= static_cast<uint32_t>(i)) {
            p.Add("CHAIN_STEP_FORWARD", sf,
                  absl::StrCat("step ", i, " can only use the output of an earlier step, not ",
                               k));
          } else if (info[k].valid && info[k].output_bytes != want) {
            p.Add("CHAIN_SIZE_MISMATCH", sf,
                  absl::StrCat("step ", k, "'s output range has ", info[k].output_bytes,
                               " bytes, the ", name, " tensor ", want));
          } else if (info[k].valid && info[k].output_type != type) {
            p.Add("CHAIN_TYPE_MISMATCH", sf,
                  absl::StrCat("step ", k, "'s output is of data type ", info[k].output_type,
                               ", the ", name, " tensor of ", type));
          } else {
            *out = ChainSource::Step(k);
          }
          break;
        }
      }
    }

    // Outputs.
    const bool in_place_resident = step.in_place && ws.input().has_handle();
    StepOutput out;
    out.step = static_cast<uint32_t>(i);
    out.returns_bytes = ws.return_output();
    const uint64_t out_bytes = valid ? StepOutputBytes(step) : 0;
    if (ws.keep_output() && !ws.output_handle().empty()) {
      p.Add("OUTPUT_MODE_CONFLICT", sp + ".keep_output",
            "keep_output and output_handle both set: choose one");
    } else if (in_place_resident && (ws.keep_output() || !ws.output_handle().empty())) {
      p.Add("OUTPUT_MODE_CONFLICT", sp + (ws.keep_output() ? ".keep_output" : ".output_handle"),
            "an in-place step on a resident input writes that tensor; it has no other output");
    } else if (!ws.output_handle().empty() && valid) {
      const std::string of = sp + ".output_handle";
      auto t = Lookup(store, principal, ws.output_handle(), of, p);
      if (t != nullptr) {
        if (std::find(input_handles.begin(), input_handles.end(), ws.output_handle()) !=
            input_handles.end()) {
          p.Add("OUTPUT_ALIASES_INPUT", of,
                "the output tensor is also an input of the step; use in_place instead");
        } else if (t->desc.data_type != step.op.output->data_type) {
          p.Add("HANDLE_TYPE_MISMATCH", of,
                absl::StrCat("the resident tensor is of data type ", t->desc.data_type,
                             ", the output of ", step.op.output->data_type));
        } else if (t->desc.total_tensor_size_in_bytes < out_bytes) {
          p.Add("OUTPUT_HANDLE_TOO_SMALL", of,
                absl::StrCat("the resident tensor has ", t->desc.total_tensor_size_in_bytes,
                             " bytes; the output range needs ", out_bytes));
        } else {
          step.output = t->buffer;
          out.handle = ws.output_handle();
        }
      }
    } else if (ws.keep_output()) {
      keeps[i] = &ws;
    }
    if (in_place_resident) out.handle = ws.input().handle();
    if (out.returns_bytes) built.returned_bytes += out_bytes;
    step.return_output = ws.return_output();
    info[i] = {valid, out_bytes, valid ? step.op.output->data_type : 0u};
    if (out.returns_bytes || !out.handle.empty() || keeps[i] != nullptr ||
        !ws.output_handle().empty()) {
      built.outputs.push_back(std::move(out));
    }
    built.request.steps.push_back(std::move(step));
  }
  if (p.not_found) return *p.not_found;
  if (!p.invalid.empty()) {
    return ops::RuleStatus(absl::StatusCode::kInvalidArgument, std::move(p.invalid));
  }
  if (p.exhausted) return *p.exhausted;
  if (built.outputs.empty()) {
    return ops::RuleStatus(absl::StatusCode::kInvalidArgument, "CHAIN_NO_OUTPUT", "steps",
                           "no step returns, keeps or writes its output: nothing would "
                           "come of the chain");
  }
  if (limits.max_returned_bytes != 0 && built.returned_bytes > limits.max_returned_bytes) {
    return ops::RuleStatus(
        absl::StatusCode::kResourceExhausted, "MESSAGE_BYTES_LIMIT", "steps",
        absl::StrCat("the response would carry ", built.returned_bytes,
                     " output bytes, above the server's limit of ",
                     limits.max_returned_bytes, "; keep outputs resident and read them "
                     "with ReadTensor"));
  }
  // Everything checks out: create the kept outputs (pending).
  for (StepOutput& o : built.outputs) {
    const v1::ChainStep* ws = keeps[o.step];
    if (ws == nullptr) continue;
    ChainStep& step = built.request.steps[o.step];
    TensorDesc desc = *step.op.output;
    desc.total_tensor_size_in_bytes = StepOutputBytes(step);
    absl::StatusOr<std::shared_ptr<const ResidentTensor>> t = store.Create(
        principal, desc, absl::Seconds(ws->keep_output_ttl_seconds()), /*pending=*/true);
    if (!t.ok()) {
      built.Settle(store, /*ok=*/false);
      return t.status();
    }
    step.output = (*t)->buffer;
    o.handle = (*t)->handle;
    o.new_tensor = true;
  }
  return built;
}

bool UsesResidentTensors(const v1::ExecuteRequest& r) {
  return !r.input_handle().empty() || !r.scale_handle().empty() ||
         !r.bias_handle().empty() || !r.output_handle().empty() || r.keep_output();
}

absl::StatusOr<v1::ChainRequest> ChainOfExecute(v1::ExecuteRequest& r) {
  for (const auto& [bytes, handle, name] :
       {std::tuple{&r.input(), &r.input_handle(), "input"},
        std::tuple{&r.scale(), &r.scale_handle(), "scale"},
        std::tuple{&r.bias(), &r.bias_handle(), "bias"}}) {
    if (!bytes->empty() && !handle->empty()) {
      return ops::RuleStatus(absl::StatusCode::kInvalidArgument, "HANDLE_AND_BYTES",
                             absl::StrCat(name, "_handle"),
                             absl::StrCat("the ", name, " tensor was given as bytes and as a "
                                          "handle: send one"));
    }
  }
  v1::ChainRequest chain;
  chain.set_request_id(r.request_id());
  chain.set_feature_level(r.feature_level());
  v1::ChainStep& s = *chain.add_steps();
  *s.mutable_operator_() = std::move(*r.mutable_operator_());
  s.set_in_place(r.in_place());
  const std::tuple<std::string*, std::string*, v1::ChainTensor*> slots[] = {
      {r.mutable_input(), r.mutable_input_handle(), s.mutable_input()},
      {r.mutable_scale(), r.mutable_scale_handle(), s.mutable_scale()},
      {r.mutable_bias(), r.mutable_bias_handle(), s.mutable_bias()}};
  for (const auto& [bytes, handle, src] : slots) {
    if (!handle->empty()) {
      src->set_handle(std::move(*handle));
    } else if (!bytes->empty()) {
      src->set_data(std::move(*bytes));
    }
  }
  // An absent tensor and an empty payload look alike on the wire: give the
  // input a source whenever it has no handle, so that a zero-byte input is
  // not reported missing.
  if (!s.input().has_handle() && !s.input().has_data()) s.mutable_input()->set_data("");
  s.set_output_handle(r.output_handle());
  s.set_keep_output(r.keep_output());
  s.set_keep_output_ttl_seconds(r.keep_output_ttl_seconds());
  s.set_return_output(r.output_handle().empty() && !r.keep_output() &&
                      !(r.in_place() && !r.input_handle().empty()));
  return chain;
}

std::string ExecutePath(const std::string& path) {
  constexpr absl::string_view kStep = "steps[0].";
  if (!absl::StartsWith(path, kStep)) return path;
  std::string rest = path.substr(kStep.size());
  for (const char* slot : {"input", "scale", "bias"}) {
    if (rest == absl::StrCat(slot, ".handle")) return absl::StrCat(slot, "_handle");
    if (rest == absl::StrCat(slot, ".data") || rest == slot) return slot;
  }
  return rest;
}

}  // namespace dmls::server
