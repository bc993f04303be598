#include "tests/robustness/mutator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/core/tensor_desc.h"
#include "engine/core/types.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"

namespace dmls::robustness {
namespace {

using dmlserve::v1::ExecuteRequest;
using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::OneofDescriptor;
using google::protobuf::Reflection;

constexpr uint64_t k4G = uint64_t{1} << 32;
const char* const kTensorFields[] = {"input", "scale", "bias", "output"};

// The member message of a oneof (nullptr when unset).
Message* MutableOneofMember(Message& m, const std::string& oneof_name) {
  const OneofDescriptor* oneof = m.GetDescriptor()->FindOneofByName(oneof_name);
  const FieldDescriptor* f = m.GetReflection()->GetOneofFieldDescriptor(m, oneof);
  if (f == nullptr) return nullptr;
  return m.GetReflection()->MutableMessage(&m, f);
}

Message* OpMessage(ExecuteRequest& request) {
  return MutableOneofMember(*request.mutable_operator_(), "operator");
}

// TensorDesc fields the operator message has (present or not).
std::vector<const FieldDescriptor*> TensorFieldsOf(const Message& m,
                                                   bool present_only) {
  std::vector<const FieldDescriptor*> out;
  for (const char* name : kTensorFields) {
    const FieldDescriptor* f = m.GetDescriptor()->FindFieldByName(name);
    // ActivationShrink has a float named "bias": only TensorDesc fields.
    if (f == nullptr || f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) continue;
    if (present_only && !m.GetReflection()->HasField(m, f)) continue;
    out.push_back(f);
  }
  return out;
}

// Singular float fields of `m` and of its ScaleBias submessage.
void FloatFields(Message& m, std::vector<std::pair<Message*, const FieldDescriptor*>>& out) {
  const Descriptor* d = m.GetDescriptor();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    if (f->is_repeated()) continue;
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_FLOAT) {
      out.push_back({&m, f});
    } else if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE &&
               f->message_type()->name() == "ScaleBias") {
      // Touching it makes it present: that is one of the mutations too.
      FloatFields(*m.GetReflection()->MutableMessage(&m, f), out);
    }
  }
}

// Sets every float field of an activation/operator message to a plausible
// value, so that a freshly swapped-in operator is often valid.
void FillParams(Message& m, std::mt19937_64& rng) {
  const float values[] = {0.5f, 1.0f, 2.0f, -0.5f, 1.5f};
  const Descriptor* d = m.GetDescriptor();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    if (!f->is_repeated() && f->cpp_type() == FieldDescriptor::CPPTYPE_FLOAT) {
      m.GetReflection()->SetFloat(&m, f, values[rng() % std::size(values)]);
    }
  }
}

// The oneof members of `d`'s oneof `oneof_name`.
std::vector<const FieldDescriptor*> Members(const Descriptor* d,
                                            const std::string& oneof_name) {
  const OneofDescriptor* oneof = d->FindOneofByName(oneof_name);
  std::vector<const FieldDescriptor*> out;
  for (int i = 0; i < oneof->field_count(); ++i) out.push_back(oneof->field(i));
  return out;
}

uint32_t RankOf(const dmlserve::v1::TensorDesc& t) {
  return t.has_dimension_count() ? t.dimension_count()
                                 : static_cast<uint32_t>(t.sizes_size());
}

}  // namespace

uint64_t Mutator::InterestingSize() {
  static const uint64_t kSizes[] = {0,   1,   2,   3,   4,         5,
                                    7,   8,   16,  17,  255,       65536,
                                    1u << 31, k4G - 1, k4G, k4G + 1,
                                    uint64_t{1} << 33,
                                    std::numeric_limits<uint64_t>::max()};
  // Mostly small: those lead to valid, executable mutants.
  if (Uniform(2) == 0) return 1 + Uniform(6);
  return kSizes[Uniform(std::size(kSizes))];
}

float Mutator::InterestingFloat() {
  static const float kFloats[] = {
      std::numeric_limits<float>::quiet_NaN(),
      -std::numeric_limits<float>::quiet_NaN(),
      std::numeric_limits<float>::infinity(),
      -std::numeric_limits<float>::infinity(),
      0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 2.0f, 1e-5f, -1e-5f, 1e-40f,
      1e30f, -1e30f, std::numeric_limits<float>::max(),
      std::numeric_limits<float>::lowest(), 65504.0f, 3.0f, 0.999f};
  if (Uniform(4) == 0) {
    return std::uniform_real_distribution<float>(-10.0f, 10.0f)(rng_);
  }
  return kFloats[Uniform(std::size(kFloats))];
}

std::string Mutator::MutateOnce(ExecuteRequest& request) {
  switch (Uniform(12)) {
    case 0: case 1: case 2: case 3: case 4:
      return MutateTensor(request);
    case 5: case 6:
      return MutateParam(request);
    case 7: case 8:
      return MutateMvn(request);
    case 9:
      return MutateFused(request);
    case 10:
      return SwapOperator(request);
    default:
      return MutateTopLevel(request);
  }
}

std::string Mutator::MutateTensor(ExecuteRequest& request) {
  Message* op = OpMessage(request);
  if (op == nullptr) return MutateTopLevel(request);
  std::vector<const FieldDescriptor*> fields = TensorFieldsOf(*op, true);
  if (fields.empty() || Uniform(10) == 0) fields = TensorFieldsOf(*op, false);
  if (fields.empty()) return MutateTopLevel(request);
  const FieldDescriptor* field = fields[Uniform(fields.size())];
  const std::string name = field->name();
  const Reflection* r = op->GetReflection();
  if (!r->HasField(*op, field) && Uniform(2) == 0 &&
      (name == "scale" || name == "bias")) {
    // A scale/bias shaped like the input with some dimensions broadcast.
    auto* t = static_cast<dmlserve::v1::TensorDesc*>(r->MutableMessage(op, field));
    const FieldDescriptor* in = op->GetDescriptor()->FindFieldByName("input");
    *t = static_cast<const dmlserve::v1::TensorDesc&>(r->GetMessage(*op, in));
    t->clear_strides();
    t->clear_flags();
    std::vector<uint64_t> sizes(t->sizes().begin(), t->sizes().end());
    for (uint64_t& s : sizes) {
      if (Uniform(2) == 0) s = 1;
    }
    t->mutable_sizes()->Assign(sizes.begin(), sizes.end());
    const uint64_t bytes = CalcBufferTensorSize(
        static_cast<DataType>(t->data_type()), sizes, std::nullopt);
    t->set_total_tensor_size_in_bytes((bytes + 3) / 4 * 4);
    return absl::StrCat(name, "=broadcast of input");
  }
  auto* t = static_cast<dmlserve::v1::TensorDesc*>(r->MutableMessage(op, field));
  const uint32_t dims = static_cast<uint32_t>(t->sizes_size());
  switch (Uniform(12)) {
    case 0: {
      static const int kTypes[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
                                   12, 13, 14, 15, 99, 1 << 20};
      const int v = Uniform(3) == 0 ? 1 + Uniform(2) : kTypes[Uniform(std::size(kTypes))];
      t->set_data_type(static_cast<dmlserve::v1::DataType>(v));
      return absl::StrCat(name, ".data_type=", v);
    }
    case 1:
    case 2: {
      if (dims == 0) break;
      const uint32_t i = Uniform(dims);
      const uint64_t v = InterestingSize();
      t->set_sizes(i, v);
      return absl::StrCat(name, ".sizes[", i, "]=", v);
    }
    case 3: {
      if (Uniform(2) == 0 || dims == 0) {
        const uint64_t v = 1 + Uniform(3);
        t->add_sizes(v);
        if (t->strides_size() > 0) t->add_strides(1);
        return absl::StrCat(name, ".sizes+=", v);
      }
      t->mutable_sizes()->RemoveLast();
      if (t->strides_size() > 0 && Uniform(4) != 0) t->mutable_strides()->RemoveLast();
      return absl::StrCat(name, ".sizes.pop");
    }
    case 4:
    case 5: {
      std::vector<uint64_t> sizes(t->sizes().begin(), t->sizes().end());
      std::vector<uint64_t> strides(t->strides().begin(), t->strides().end());
      if (strides.size() != sizes.size()) strides = PackedStrides(sizes);
      if (strides.empty()) break;
      const uint32_t i = Uniform(strides.size());
      std::string what;
      switch (Uniform(7)) {
        case 0: t->clear_strides(); return absl::StrCat(name, ".strides=packed");
        case 1: for (uint64_t& s : strides) s *= 2; what = "x2"; break;
        case 2: strides[i] = 0; what = absl::StrCat("[", i, "]=0"); break;
        case 3: strides[i] = k4G; what = absl::StrCat("[", i, "]=2^32"); break;
        case 4: strides[i] = InterestingSize(); what = absl::StrCat("[", i, "]=", strides[i]); break;
        case 5: strides.push_back(1); what = "+=1"; break;
        default:
          std::reverse(strides.begin(), strides.end());  // transposed view
          what = "reversed";
      }
      t->mutable_strides()->Assign(strides.begin(), strides.end());
      return absl::StrCat(name, ".strides", what);
    }
    case 6: {
      if (Uniform(3) == 0) {
        t->clear_dimension_count();
        return absl::StrCat(name, ".dimension_count=absent");
      }
      const uint32_t v = Uniform(11);
      t->set_dimension_count(v);
      return absl::StrCat(name, ".dimension_count=", v);
    }
    case 7: {
      const uint64_t total = t->total_tensor_size_in_bytes();
      const uint64_t values[] = {0, total + 1, total - 1, total + 4, total - 4,
                                 total * 2, k4G, k4G + 4,
                                 std::numeric_limits<uint64_t>::max() - 3};
      const uint64_t v = values[Uniform(std::size(values))];
      t->set_total_tensor_size_in_bytes(v);
      return absl::StrCat(name, ".total_tensor_size_in_bytes=", v);
    }
    case 8: {
      const uint64_t values[] = {0, 1, 2, 3, 4, 8, 16, 17, 256, uint64_t{1} << 40,
                                 std::numeric_limits<uint64_t>::max()};
      const uint64_t v = values[Uniform(std::size(values))];
      t->set_guaranteed_base_offset_alignment(v);
      return absl::StrCat(name, ".guaranteed_base_offset_alignment=", v);
    }
    case 9: {
      const uint32_t values[] = {0, 1, 2, 3, 0x80000000u};
      const uint32_t v = values[Uniform(std::size(values))];
      t->set_flags(v);
      return absl::StrCat(name, ".flags=", v);
    }
    case 10: {
      const int v = static_cast<int>(Uniform(3)) - 0;  // 0 INVALID, 1 BUFFER, 2 unknown
      if (Uniform(4) == 0) {
        t->clear_type();
        return absl::StrCat(name, ".type=absent");
      }
      t->set_type(static_cast<dmlserve::v1::TensorType>(v == 2 ? 7 : v));
      return absl::StrCat(name, ".type=", v == 2 ? 7 : v);
    }
    default:
      break;
  }
  r->ClearField(op, field);
  return absl::StrCat(name, "=absent");
}

std::string Mutator::MutateParam(ExecuteRequest& request) {
  Message* op = OpMessage(request);
  if (op == nullptr) return MutateTopLevel(request);
  std::vector<std::pair<Message*, const FieldDescriptor*>> floats;
  FloatFields(*op, floats);
  if (const FieldDescriptor* fa = op->GetDescriptor()->FindFieldByName("fused_activation");
      fa != nullptr && op->GetReflection()->HasField(*op, fa)) {
    Message* member = MutableOneofMember(
        *op->GetReflection()->MutableMessage(op, fa), "activation");
    if (member != nullptr) FloatFields(*member, floats);
  }
  if (floats.empty()) return MutateTensor(request);
  auto [m, f] = floats[Uniform(floats.size())];
  if (Uniform(6) == 0) {
    m->GetReflection()->ClearField(m, f);
    return absl::StrCat(f->full_name(), "=absent");
  }
  const float v = InterestingFloat();
  m->GetReflection()->SetFloat(m, f, v);
  return absl::StrCat(f->full_name(), "=", v);
}

std::string Mutator::MutateMvn(ExecuteRequest& request) {
  dmlserve::v1::OperatorDesc& op = *request.mutable_operator_();
  if (op.has_mvn()) {
    auto& mvn = *op.mutable_mvn();
    switch (Uniform(3)) {
      case 0: mvn.set_cross_channel(!mvn.cross_channel()); return "mvn.cross_channel^";
      case 1: mvn.clear_cross_channel(); return "mvn.cross_channel=absent";
      default:
        if (Uniform(2) == 0) {
          mvn.clear_normalize_variance();
          return "mvn.normalize_variance=absent";
        }
        mvn.set_normalize_variance(!mvn.normalize_variance());
        return "mvn.normalize_variance^";
    }
  }
  if (!op.has_mvn1()) return MutateParam(request);
  auto& mvn1 = *op.mutable_mvn1();
  const uint32_t rank = RankOf(mvn1.input());
  switch (Uniform(8)) {
    case 0:
      if (mvn1.axes_size() > 0) {
        mvn1.add_axes(mvn1.axes(Uniform(mvn1.axes_size())));
        return "mvn1.axes+=duplicate";
      }
      [[fallthrough]];
    case 1: {
      const uint32_t values[] = {rank, rank + 1, 8, 1u << 31, 0xFFFFFFFFu};
      const uint32_t v = values[Uniform(std::size(values))];
      mvn1.add_axes(v);
      return absl::StrCat("mvn1.axes+=", v);
    }
    case 2:
      if (mvn1.axes_size() > 0) {
        mvn1.mutable_axes()->RemoveLast();
        return "mvn1.axes.pop";
      }
      [[fallthrough]];
    case 3: {
      // A random non-empty subset of [0, rank): valid axes, new groupings.
      mvn1.clear_axes();
      for (uint32_t a = 0; a < std::min(rank, 8u); ++a) {
        if (Uniform(2) == 0) mvn1.add_axes(a);
      }
      if (mvn1.axes_size() == 0 && rank > 0) mvn1.add_axes(Uniform(std::min(rank, 8u)));
      std::shuffle(mvn1.mutable_axes()->begin(), mvn1.mutable_axes()->end(), rng_);
      mvn1.clear_axis_count();
      return "mvn1.axes=random subset";
    }
    case 4: {
      const uint32_t n = static_cast<uint32_t>(mvn1.axes_size());
      const uint32_t values[] = {0, n + 1, n - 1, 0xFFFFFFFFu, n};
      const uint32_t v = values[Uniform(std::size(values))];
      mvn1.set_axis_count(v);
      return absl::StrCat("mvn1.axis_count=", v);
    }
    case 5:
      mvn1.clear_axes();
      return "mvn1.axes=empty";
    case 6:
      if (Uniform(2) == 0) {
        mvn1.clear_normalize_variance();
        return "mvn1.normalize_variance=absent";
      }
      mvn1.set_normalize_variance(!mvn1.normalize_variance());
      return "mvn1.normalize_variance^";
    default:
      return MutateParam(request);
  }
}

std::string Mutator::MutateFused(ExecuteRequest& request) {
  Message* op = OpMessage(request);
  const FieldDescriptor* fa =
      op ? op->GetDescriptor()->FindFieldByName("fused_activation") : nullptr;
  if (fa == nullptr) return MutateParam(request);
  const Reflection* r = op->GetReflection();
  switch (Uniform(4)) {
    case 0:
      r->ClearField(op, fa);
      return "fused_activation=absent";
    case 1: {
      r->MutableMessage(op, fa)->Clear();
      return "fused_activation=empty";
    }
    default: {
      Message* fused = r->MutableMessage(op, fa);
      const auto members = Members(fused->GetDescriptor(), "activation");
      const FieldDescriptor* f = members[Uniform(members.size())];
      Message* act = fused->GetReflection()->MutableMessage(fused, f);
      act->Clear();
      FillParams(*act, rng_);
      if (Uniform(5) == 0) {
        // A fused activation must not carry tensors (FUSED_TENSORS_NOT_NULL).
        const FieldDescriptor* in = act->GetDescriptor()->FindFieldByName("input");
        act->GetReflection()->MutableMessage(act, in);
        return absl::StrCat("fused_activation=", f->name(), " with input");
      }
      return absl::StrCat("fused_activation=", f->name());
    }
  }
}

std::string Mutator::SwapOperator(ExecuteRequest& request) {
  dmlserve::v1::OperatorDesc& op = *request.mutable_operator_();
  Message* old_member = OpMessage(request);
  std::optional<dmlserve::v1::TensorDesc> input, output;
  if (old_member != nullptr) {
    for (const FieldDescriptor* f : TensorFieldsOf(*old_member, true)) {
      const auto& t = static_cast<const dmlserve::v1::TensorDesc&>(
          old_member->GetReflection()->GetMessage(*old_member, f));
      if (f->name() == "input") input = t;
      if (f->name() == "output") output = t;
    }
  }
  const auto members = Members(op.GetDescriptor(), "operator");
  const FieldDescriptor* f = members[Uniform(members.size())];
  if (Uniform(20) == 0) {
    op.Clear();  // no operator at all
    return "operator=unset";
  }
  Message* m = op.GetReflection()->MutableMessage(&op, f);  // clears the old member
  m->Clear();
  FillParams(*m, rng_);
  const Descriptor* d = m->GetDescriptor();
  if (input) {
    *static_cast<dmlserve::v1::TensorDesc*>(
        m->GetReflection()->MutableMessage(m, d->FindFieldByName("input"))) = *input;
  }
  if (output) {
    *static_cast<dmlserve::v1::TensorDesc*>(
        m->GetReflection()->MutableMessage(m, d->FindFieldByName("output"))) = *output;
  }
  if (op.has_clip()) {
    op.mutable_clip()->set_min(-1.0f);
    op.mutable_clip()->set_max(1.0f);
  } else if (op.has_softplus()) {
    op.mutable_softplus()->set_steepness(1.0f);
  } else if (op.has_mvn1()) {
    const uint32_t rank = input ? RankOf(*input) : 1;
    op.mutable_mvn1()->add_axes(rank > 0 ? std::min(rank, 8u) - 1 : 0);
    op.mutable_mvn1()->set_epsilon(1e-5f);
    op.mutable_mvn1()->set_normalize_variance(Uniform(2) == 0);
  } else if (op.has_mvn()) {
    op.mutable_mvn()->set_epsilon(1e-5f);
    op.mutable_mvn()->set_cross_channel(Uniform(2) == 0);
    op.mutable_mvn()->set_normalize_variance(Uniform(2) == 0);
  }
  return absl::StrCat("operator=", f->name());
}

std::string Mutator::MutateTopLevel(ExecuteRequest& request) {
  switch (Uniform(3)) {
    case 0:
      request.set_in_place(!request.in_place());
      return absl::StrCat("in_place=", request.in_place());
    case 1: {
      static const int kLevels[] = {0,      0x1000, 0x2000, 0x2100, 0x3000,
                                    0x3100, 0x4000, 0x4100, 0x5000, 0x5100,
                                    0x5200, 0x6000, 0x6100, 0x6200, 0x6300,
                                    0x6400, 1,      0x1001, 0x6500, 0x7000,
                                    0xFFFF, 0x7FFFFFFF, -1};
      const int v = kLevels[Uniform(std::size(kLevels))];
      request.set_feature_level(static_cast<dmlserve::v1::FeatureLevel>(v));
      return absl::StrCat("feature_level=", v);
    }
    default: {
      // Payload lengths off by one (the test resizes the payloads of valid
      // mutants, so this mostly exercises the mapping of odd payloads).
      std::string* p = Uniform(3) == 0   ? request.mutable_scale()
                       : Uniform(2) == 0 ? request.mutable_bias()
                                         : request.mutable_input();
      if (!p->empty() && Uniform(2) == 0) {
        p->pop_back();
        return "payload-1";
      }
      p->push_back('\x7f');
      return "payload+1";
    }
  }
}

void Mutator::MaybeRepair(ExecuteRequest& request) {
  Message* op = OpMessage(request);
  if (op == nullptr) return;
  const Reflection* r = op->GetReflection();
  const Descriptor* d = op->GetDescriptor();
  const FieldDescriptor* in_f = d->FindFieldByName("input");
  const FieldDescriptor* out_f = d->FindFieldByName("output");
  if (Uniform(2) == 0 && r->HasField(*op, in_f)) {
    auto* out = static_cast<dmlserve::v1::TensorDesc*>(r->MutableMessage(op, out_f));
    *out = static_cast<const dmlserve::v1::TensorDesc&>(r->GetMessage(*op, in_f));
    out->clear_flags();  // OWNED_BY_DML is input-only
    if (std::count(out->strides().begin(), out->strides().end(), 0) > 0) {
      out->clear_strides();  // a broadcast output overlaps itself
    }
  }
  if (Uniform(2) == 0) return;
  for (const FieldDescriptor* f : TensorFieldsOf(*op, true)) {
    auto* t = static_cast<dmlserve::v1::TensorDesc*>(r->MutableMessage(op, f));
    std::vector<uint64_t> sizes(t->sizes().begin(), t->sizes().end());
    std::optional<std::vector<uint64_t>> strides;
    if (t->strides_size() > 0) strides.emplace(t->strides().begin(), t->strides().end());
    // CalcBufferTensorSize is exact for UINT-ranged values of matching
    // lengths; leave anything else for the validator to reject.
    bool sane = sizes.size() <= 8 && (!strides || strides->size() == sizes.size());
    for (uint64_t s : sizes) sane = sane && s < k4G;
    if (strides) {
      for (uint64_t s : *strides) sane = sane && s < k4G;
    }
    if (!sane) continue;
    const uint64_t bytes =
        CalcBufferTensorSize(static_cast<DataType>(t->data_type()), sizes, strides);
    if (bytes > 0) t->set_total_tensor_size_in_bytes((bytes + 3) / 4 * 4);
  }
}

}  // namespace dmls::robustness
