#include "server/chain_builder.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
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
      return AtField(principal.status(), absl::StrCat("steps[", o.step, "].keep_output"));
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

absl::StatusOr<BuiltChain> BuildChain(v1::ChainRequest& request,
                                      const absl::StatusOr<std::string>& principal,
                                      store::TensorStore& store, FeatureLevel highest_feature_level) {
  using Source = sched::WorkSource::Kind;
  Problems p;
  const int n = request.steps_size();
  if (n == 0) {
    return ops::RuleStatus(absl::StatusCode::kInvalidArgument, "CHAIN_EMPTY", "steps",
                           "a chain needs at least one step");
  }
  const uint32_t level =
      FeatureLevelFromProto(request.feature_level(), highest_feature_level);
  BuiltChain built;
  built.request.feature_level = static_cast<FeatureLevel>(level);
  built.work.kind = sched::Work::Kind::kChain;
  built.work.feature_level = built.request.feature_level;

  for (int i = 0; i < n; ++i) {
    v1::ChainStep& ws = *request.mutable_steps(i);
    const std::string sp = absl::StrCat("steps[", i, "]");
    ChainStep step;
    step.op = OperatorFromProto(ws.operator_());
    step.in_place = ws.in_place();
    sched::WorkStep& work = built.work.steps.emplace_back();
    work.op = step.op;
    work.in_place = step.in_place;
    if (absl::StatusOr<absl::Duration> ttl = store::RequestedTtl(
            ws.keep_output_ttl_seconds(), absl::StrCat(sp, ".keep_output_ttl_seconds"));
        !ttl.ok()) {
      for (ops::Violation& x : ops::ViolationsOf(ttl.status())) p.invalid.push_back(std::move(x));
    }

    // Sources.
    std::vector<std::string> input_handles;
    const std::tuple<const char*, v1::ChainTensor*, bool, ChainSource*, sched::WorkSource*>
        slots[] = {{"input", ws.mutable_input(), step.op.input.has_value(), &step.input,
                    &work.input},
                   {"scale", ws.mutable_scale(), step.op.scale.has_value(), &step.scale,
                    &work.scale},
                   {"bias", ws.mutable_bias(), step.op.bias.has_value(), &step.bias,
                    &work.bias}};
    for (const auto& [name, src, wanted, out, checked] : slots) {
      switch (src->source_case()) {
        case v1::ChainTensor::SOURCE_NOT_SET:
          break;
        case v1::ChainTensor::kData:
          *checked = {Source::kInline, src->data().size()};
          *out = ChainSource::Inline(std::move(*src->mutable_data()));
          break;
        case v1::ChainTensor::kHandle: {
          // A source for a tensor the operator lacks is wrong whatever the
          // handle names (admission says so).
          if (!wanted) {
            checked->kind = Source::kResident;
            break;
          }
          auto t = Lookup(store, principal, src->handle(),
                          absl::StrCat(sp, ".", name, ".handle"), p);
          if (t == nullptr) break;
          *checked = {Source::kResident, t->desc.total_tensor_size_in_bytes, t->desc.data_type};
          *out = ChainSource::Resident(t->buffer);
          input_handles.push_back(src->handle());
          break;
        }
        case v1::ChainTensor::kStep:
          checked->kind = Source::kStep;
          checked->step = src->step();
          *out = ChainSource::Step(src->step());
          break;
      }
    }

    // Outputs.
    const bool in_place_resident = step.in_place && ws.input().has_handle();
    StepOutput out;
    out.step = static_cast<uint32_t>(i);
    out.returns_bytes = ws.return_output();
    if (ws.keep_output() && !ws.output_handle().empty()) {
      p.Add("OUTPUT_MODE_CONFLICT", sp + ".keep_output",
            "keep_output and output_handle both set: choose one");
    } else if (in_place_resident && (ws.keep_output() || !ws.output_handle().empty())) {
      p.Add("OUTPUT_MODE_CONFLICT", sp + (ws.keep_output() ? ".keep_output" : ".output_handle"),
            "an in-place step on a resident input writes that tensor; it has no other output");
    } else if (!ws.output_handle().empty()) {
      const std::string of = sp + ".output_handle";
      auto t = Lookup(store, principal, ws.output_handle(), of, p);
      if (t != nullptr) {
        if (std::find(input_handles.begin(), input_handles.end(), ws.output_handle()) !=
            input_handles.end()) {
          p.Add("OUTPUT_ALIASES_INPUT", of,
                "the output tensor is also an input of the step; use in_place instead");
        } else {
          work.target = sched::WorkTarget{t->desc.total_tensor_size_in_bytes,
                                          t->desc.data_type};
          step.output = t->buffer;
          out.handle = ws.output_handle();
        }
      }
    } else if (ws.keep_output()) {
      HasIdentity(principal, sp + ".keep_output", p);
      out.keep = true;
      out.keep_ttl = absl::Seconds(static_cast<int64_t>(ws.keep_output_ttl_seconds()));
    }
    if (in_place_resident) out.handle = ws.input().handle();
    step.return_output = ws.return_output();
    work.returns_output = ws.return_output();
    if (out.returns_bytes || !out.handle.empty() || out.keep || !ws.output_handle().empty()) {
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
