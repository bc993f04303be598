#include "server/chain_builder.h"

#include <algorithm>
#include <array>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "engine/ops/rule_status.h"
#include "server/mapping/proto_mapping.h"

namespace dmls::server {
namespace {

namespace v1 = dmlserve::v1;

// What the checks of one chain collect.
struct Problems {
  std::vector<ops::Violation> invalid;     // INVALID_ARGUMENT
  std::optional<absl::Status> not_found;   // the first unknown handle
  std::optional<absl::Status> identity;    // the first tensor use without one

  void Add(std::string rule, std::string field, std::string message) {
    invalid.push_back({std::move(rule), std::move(field),
                       ops::BoundedMessage(std::move(message))});
  }
};

// `principal`'s error (TENANT_REQUIRED, say) moved to the tensor `field`
// that needs a principal; other errors (UNAUTHENTICATED) as they are.
absl::Status AtField(const absl::Status& principal, const std::string& field) {
  std::vector<ops::Violation> v = ops::ViolationsOf(principal);
  if (v.empty()) return principal;
  v.front().field = field;
  return ops::RuleStatus(principal.code(), {std::move(v.front())});
}

// Whether the call has a principal for the tensor at `field` (else
// recorded in `p`).
bool HasIdentity(const absl::StatusOr<std::string>& principal, const std::string& field,
                 Problems& p) {
  if (principal.ok()) return true;
  if (!p.identity) p.identity = AtField(principal.status(), field);
  return false;
}

// The resident tensor `handle` names, or nullptr (recorded in `p`).
std::shared_ptr<const store::ResidentTensor> Lookup(store::TensorStore& store,
                                             const absl::StatusOr<std::string>& principal,
                                             const std::string& handle,
                                             const std::string& field, Problems& p) {
  if (!HasIdentity(principal, field, p)) return nullptr;
  absl::StatusOr<std::shared_ptr<const store::ResidentTensor>> t = store.Find(*principal, handle);
  if (t.ok()) return *t;
  if (!p.not_found) {
    // The store's rule (HANDLE_NOT_FOUND or HANDLE_LOST) at this field.
    std::vector<ops::Violation> v = ops::ViolationsOf(t.status());
    if (v.empty()) v.push_back({"HANDLE_NOT_FOUND", "", std::string(t.status().message())});
    v.front().field = field;
    p.not_found = ops::RuleStatus(absl::StatusCode::kNotFound, {std::move(v.front())});
  }
  return nullptr;
}

}  // namespace

absl::Status BuiltChain::CreateKept(store::TensorStore& store,
                                    const absl::StatusOr<std::string>& principal) {
  for (StepOutput& o : outputs) {
    if (!o.keep) continue;
    if (!principal.ok()) {  // BuildChain refused this already
      Settle(store, /*ok=*/false);
      return AtField(principal.status(), o.keep_path);
    }
    ChainStep& step = request.steps[o.step];
    TensorDesc desc = *step.op.output;
    desc.total_tensor_size_in_bytes = StepOutputBytes(step);
    absl::StatusOr<std::shared_ptr<const store::ResidentTensor>> t =
        store.Create(*principal, desc, o.keep_ttl, /*pending=*/true);
    if (!t.ok()) {
      Settle(store, /*ok=*/false);
      return t.status();
    }
    step.output = (*t)->buffer;
    o.handle = (*t)->handle;
    o.new_tensor = true;
  }
  return absl::OkStatus();
}

void BuiltChain::Settle(store::TensorStore& store, bool ok) const {
  for (const StepOutput& o : outputs) {
    if (!o.new_tensor) continue;
    if (ok) {
      store.Publish(o.handle);
    } else {
      store.Abandon(o.handle);
    }
  }
}

namespace {

// One tensor a step reads, as either message gives it.
struct TensorSpec {
  enum class Kind { kNone, kData, kHandle, kStep };
  Kind kind = Kind::kNone;
  std::string* data = nullptr;          // kData: moved out
  const std::string* handle = nullptr;  // kHandle
  uint32_t step = 0;                    // kStep
};

// One step in neither message's terms, and where its fields are reported:
// "steps[1].input.handle" in a chain, "input_handle" in an Execute.
struct StepSpec {
  const v1::OperatorDesc* op = nullptr;
  bool in_place = false;
  TensorSpec input, scale, bias;
  bool return_output = false;
  const std::string* output_handle = nullptr;  // never null
  bool keep_output = false;
  uint64_t keep_output_ttl_seconds = 0;
  std::string prefix;    // "steps[1]." or ""
  bool execute = false;  // an Execute's field names

  std::string Path(absl::string_view field) const { return absl::StrCat(prefix, field); }
  std::string HandlePath(absl::string_view tensor) const {
    return execute ? absl::StrCat(tensor, "_handle") : absl::StrCat(prefix, tensor, ".handle");
  }
};

absl::StatusOr<BuiltChain> BuildSteps(absl::Span<StepSpec> specs, sched::Work::Kind kind,
                                      uint32_t level,
                                      const absl::StatusOr<std::string>& principal,
                                      store::TensorStore& store) {
  using Source = sched::WorkSource::Kind;
  Problems p;
  BuiltChain built;
  built.request.feature_level = static_cast<FeatureLevel>(level);
  built.work.kind = kind;
  built.work.feature_level = built.request.feature_level;

  for (size_t i = 0; i < specs.size(); ++i) {
    StepSpec& ws = specs[i];
    ChainStep step;
    step.op = OperatorFromProto(*ws.op);
    step.in_place = ws.in_place;
    sched::WorkStep& work = built.work.steps.emplace_back();
    work.op = step.op;
    work.in_place = step.in_place;
    if (absl::StatusOr<absl::Duration> ttl =
            store::RequestedTtl(ws.keep_output_ttl_seconds, ws.Path("keep_output_ttl_seconds"));
        !ttl.ok()) {
      for (ops::Violation& x : ops::ViolationsOf(ttl.status())) p.invalid.push_back(std::move(x));
    }

    // Sources.
    std::vector<std::string> input_handles;
    const std::tuple<const char*, TensorSpec*, bool, ChainSource*, sched::WorkSource*> slots[] = {
        {"input", &ws.input, step.op.input.has_value(), &step.input, &work.input},
        {"scale", &ws.scale, step.op.scale.has_value(), &step.scale, &work.scale},
        {"bias", &ws.bias, step.op.bias.has_value(), &step.bias, &work.bias}};
    for (const auto& [name, src, wanted, out, checked] : slots) {
      switch (src->kind) {
        case TensorSpec::Kind::kNone:
          break;
        case TensorSpec::Kind::kData:
          *checked = {Source::kInline, src->data->size()};
          // An Execute's empty payload for a tensor the operator lacks is
          // no tensor at all (admission checks a payload that is not empty).
          if (wanted || !src->data->empty()) *out = ChainSource::Inline(std::move(*src->data));
          break;
        case TensorSpec::Kind::kHandle: {
          // A source for a tensor the operator lacks is wrong whatever the
          // handle names (admission says so).
          if (!wanted) {
            checked->kind = Source::kResident;
            break;
          }
          auto t = Lookup(store, principal, *src->handle, ws.HandlePath(name), p);
          if (t == nullptr) break;
          *checked = {Source::kResident, t->desc.total_tensor_size_in_bytes, t->desc.data_type};
          *out = ChainSource::Resident(t->buffer);
          input_handles.push_back(*src->handle);
          break;
        }
        case TensorSpec::Kind::kStep:
          checked->kind = Source::kStep;
          checked->step = src->step;
          *out = ChainSource::Step(src->step);
          break;
      }
    }

    // Outputs.
    const std::string& output_handle = *ws.output_handle;
    const bool in_place_resident = step.in_place && ws.input.kind == TensorSpec::Kind::kHandle;
    StepOutput out;
    out.step = static_cast<uint32_t>(i);
    out.returns_bytes = ws.return_output;
    if (ws.keep_output && !output_handle.empty()) {
      p.Add("OUTPUT_MODE_CONFLICT", ws.Path("keep_output"),
            "keep_output and output_handle both set: choose one");
    } else if (in_place_resident && (ws.keep_output || !output_handle.empty())) {
      p.Add("OUTPUT_MODE_CONFLICT", ws.Path(ws.keep_output ? "keep_output" : "output_handle"),
            "an in-place step on a resident input writes that tensor; it has no other output");
    } else if (!output_handle.empty()) {
      const std::string of = ws.Path("output_handle");
      auto t = Lookup(store, principal, output_handle, of, p);
      if (t != nullptr) {
        if (std::find(input_handles.begin(), input_handles.end(), output_handle) !=
            input_handles.end()) {
          p.Add("OUTPUT_ALIASES_INPUT", of,
                "the output tensor is also an input of the step; use in_place instead");
        } else {
          work.target = sched::WorkTarget{t->desc.total_tensor_size_in_bytes,
                                          t->desc.data_type};
          step.output = t->buffer;
          out.handle = output_handle;
        }
      }
    } else if (ws.keep_output) {
      HasIdentity(principal, ws.Path("keep_output"), p);
      out.keep = true;
      out.keep_ttl = absl::Seconds(static_cast<int64_t>(ws.keep_output_ttl_seconds));
      out.keep_path = ws.Path("keep_output");
    }
    if (in_place_resident) out.handle = *ws.input.handle;
    step.return_output = ws.return_output;
    work.returns_output = ws.return_output;
    if (out.returns_bytes || !out.handle.empty() || out.keep || !output_handle.empty()) {
      built.outputs.push_back(std::move(out));
    }
    built.request.steps.push_back(std::move(step));
  }
  if (p.identity) return *p.identity;
  if (p.not_found) return *p.not_found;
  if (!p.invalid.empty()) {
    return ops::RuleStatus(absl::StatusCode::kInvalidArgument, std::move(p.invalid));
  }
  if (built.outputs.empty()) {
    return ops::RuleStatus(absl::StatusCode::kInvalidArgument, "CHAIN_NO_OUTPUT", "steps",
                           "no step returns, keeps or writes its output: nothing would "
                           "come of the chain");
  }
  return built;
}

TensorSpec SpecOf(v1::ChainTensor& t) {
  TensorSpec s;
  switch (t.source_case()) {
    case v1::ChainTensor::SOURCE_NOT_SET:
      break;
    case v1::ChainTensor::kData:
      s.kind = TensorSpec::Kind::kData;
      s.data = t.mutable_data();
      break;
    case v1::ChainTensor::kHandle:
      s.kind = TensorSpec::Kind::kHandle;
      s.handle = &t.handle();
      break;
    case v1::ChainTensor::kStep:
      s.kind = TensorSpec::Kind::kStep;
      s.step = t.step();
      break;
  }
  return s;
}

}  // namespace

absl::StatusOr<BuiltChain> BuildChain(v1::ChainRequest& request,
                                      const absl::StatusOr<std::string>& principal,
                                      store::TensorStore& store, FeatureLevel highest_feature_level) {
  const int n = request.steps_size();
  if (n == 0) {
    return ops::RuleStatus(absl::StatusCode::kInvalidArgument, "CHAIN_EMPTY", "steps",
                           "a chain needs at least one step");
  }
  std::vector<StepSpec> specs(n);
  for (int i = 0; i < n; ++i) {
    v1::ChainStep& ws = *request.mutable_steps(i);
    StepSpec& s = specs[i];
    s.op = &ws.operator_();
    s.in_place = ws.in_place();
    s.input = SpecOf(*ws.mutable_input());
    s.scale = SpecOf(*ws.mutable_scale());
    s.bias = SpecOf(*ws.mutable_bias());
    s.return_output = ws.return_output();
    s.output_handle = &ws.output_handle();
    s.keep_output = ws.keep_output();
    s.keep_output_ttl_seconds = ws.keep_output_ttl_seconds();
    s.prefix = absl::StrCat("steps[", i, "].");
  }
  return BuildSteps(absl::MakeSpan(specs), sched::Work::Kind::kChain,
                    FeatureLevelFromProto(request.feature_level(), highest_feature_level),
                    principal, store);
}

absl::Status CheckEachTensorOnce(const v1::ExecuteRequest& request,
                                 const std::array<std::string, 3>& payloads) {
  const std::pair<const char*, const std::string*> handles[] = {
      {"input", &request.input_handle()},
      {"scale", &request.scale_handle()},
      {"bias", &request.bias_handle()}};
  for (size_t i = 0; i < 3; ++i) {
    const auto& [name, handle] = handles[i];
    if (!handle->empty() && !payloads[i].empty()) {
      return ops::RuleStatus(absl::StatusCode::kInvalidArgument, "HANDLE_AND_BYTES",
                             absl::StrCat(name, "_handle"),
                             absl::StrCat("the ", name, " tensor was given as bytes and as a "
                                          "handle: send one"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<BuiltChain> BuildExecute(v1::ExecuteRequest& request,
                                        std::array<std::string, 3>& payloads,
                                        const absl::StatusOr<std::string>& principal,
                                        store::TensorStore& store,
                                        FeatureLevel highest_feature_level) {
  if (absl::Status once = CheckEachTensorOnce(request, payloads); !once.ok()) return once;
  StepSpec s;
  s.execute = true;
  s.op = &request.operator_();
  s.in_place = request.in_place();
  const std::tuple<const std::string*, TensorSpec*> slots[] = {
      {&request.input_handle(), &s.input},
      {&request.scale_handle(), &s.scale},
      {&request.bias_handle(), &s.bias}};
  for (size_t i = 0; i < 3; ++i) {
    const auto& [handle, spec] = slots[i];
    // An absent tensor and an empty payload look alike on the wire: a
    // tensor without a handle is its payload, however short.
    if (!handle->empty()) {
      spec->kind = TensorSpec::Kind::kHandle;
      spec->handle = handle;
    } else {
      spec->kind = TensorSpec::Kind::kData;
      spec->data = &payloads[i];
    }
  }
  s.output_handle = &request.output_handle();
  s.keep_output = request.keep_output();
  s.keep_output_ttl_seconds = request.keep_output_ttl_seconds();
  s.return_output = request.output_handle().empty() && !request.keep_output() &&
                    !(request.in_place() && !request.input_handle().empty());
  return BuildSteps(absl::MakeSpan(&s, 1), sched::Work::Kind::kExecute,
                    FeatureLevelFromProto(request.feature_level(), highest_feature_level),
                    principal, store);
}

bool UsesResidentTensors(const v1::ExecuteRequest& r) {
  return !r.input_handle().empty() || !r.scale_handle().empty() ||
         !r.bias_handle().empty() || !r.output_handle().empty() || r.keep_output();
}

}  // namespace dmls::server
