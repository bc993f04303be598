#include "engine/ops/validator.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "engine/ops/schema.h"

namespace dmls::ops {
namespace {

constexpr uint64_t kUint32Max = 0xFFFFFFFFull;

// Message building. (Debian's abseil has its own string_view, which
// absl::StrCat does not take from std::string_view, so a small local Cat.)
void Append(std::string& s, std::string_view v) { s.append(v); }
void Append(std::string& s, const char* v) { s.append(v); }
void Append(std::string& s, const std::string& v) { s.append(v); }
void Append(std::string& s, float v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.9g", static_cast<double>(v));
  s.append(buf);
}
template <typename T,
          std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>,
                           int> = 0>
void Append(std::string& s, T v) {
  s.append(std::to_string(v));
}
template <typename... A>
std::string Cat(const A&... a) {
  std::string s;
  (Append(s, a), ...);
  return s;
}
template <typename C>
std::string Join(const C& items, std::string_view sep) {
  std::string s;
  for (const auto& item : items) {
    if (!s.empty()) s.append(sep);
    Append(s, item);
  }
  return s;
}
std::string Hex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%" PRIX32, v);
  return buf;
}

// ---------------------------------------------------------------------------
// Tables. The operator tables live in schema.cc; what follows is the little
// extra data the rules need that the schema does not carry.

enum class Scope { kNone, kInOut, kAllPresent };

// What each operator kind checks beyond the common tensor rules (§9 step 7
// and step 9). One row per OpKind, so that no operator gets its own branch.
struct KindTraits {
  OpKind kind;
  bool scale_bias_tensors;        // optional Scale/Bias tensor slots
  Scope type_scope;               // DATATYPE_MISMATCH
  Scope rank_scope;               // DIMCOUNT_MISMATCH
  bool channel_fixed_before_4_0;  // MVN1 §4.3.3: Scale/Bias dim 1 == C
  bool has_axes;                  // MVN1 AxisCount/Axes
  bool has_cross_channel;         // MVN CrossChannel BOOL
};

constexpr KindTraits kKindTraits[] = {
    {OpKind::kUnaryScaleBias, false, Scope::kInOut, Scope::kInOut, false, false,
     false},
    {OpKind::kActivation, false, Scope::kInOut, Scope::kInOut, false, false,
     false},
    {OpKind::kMvn, true, Scope::kAllPresent, Scope::kNone, false, false, true},
    {OpKind::kMvn1, true, Scope::kAllPresent, Scope::kAllPresent, true, true,
     false},
};

const KindTraits& TraitsFor(OpKind kind) {
  for (const KindTraits& t : kKindTraits) {
    if (t.kind == kind) return t;
  }
  return kKindTraits[0];  // unreachable: every OpKind has a row
}

// Value rules of activation parameters (§6 "Parameter rules", §4.2). A check
// returns an empty string when the value is fine, else the message.
using ParamCheck = std::string (*)(float v, std::optional<FeatureLevel> fl);

std::string CheckCeluAlpha(float v, std::optional<FeatureLevel>) {
  if (v == 0.0f || !std::isfinite(v)) {
    return Cat("Alpha ", v,
               " must be finite and non-zero (the formula divides "
               "by Alpha)");
  }
  return "";
}

std::string CheckSoftplusSteepness(float v, std::optional<FeatureLevel> fl) {
  if (!std::isfinite(v)) return Cat("Steepness ", v, " must be finite");
  if (fl &&
      static_cast<uint32_t>(*fl) < static_cast<uint32_t>(FeatureLevel::k6_4) &&
      v < 1.0f) {
    return Cat("Steepness ", v, " < 1 requires FL 6_4");
  }
  if (v == 0.0f)
    return "Steepness must be non-zero (the formula divides by it)";
  return "";
}

struct ParamRule {
  OperatorType type;
  int index;  // into ActivationParams
  std::string_view rule;
  ParamCheck check;
};
constexpr ParamRule kParamRules[] = {
    {OperatorType::kActivationCelu, 0, "CELU_ALPHA_INVALID", &CheckCeluAlpha},
    {OperatorType::kActivationSoftplus, 0, "SOFTPLUS_STEEPNESS_RANGE",
     &CheckSoftplusSteepness},
};

// ---------------------------------------------------------------------------

bool FlBelow(FeatureLevel fl, FeatureLevel limit) {
  return static_cast<uint32_t>(fl) < static_cast<uint32_t>(limit);
}

// "{1,2,3}"; beyond kMaxListedItems, "{0,1,2,3,4,5,6,7, ... and 4992 more}".
std::string Dims(const std::vector<uint64_t>& v) {
  std::string s = "{";
  for (size_t i = 0; i < v.size() && i < kMaxListedItems; ++i) {
    if (i > 0) s += ",";
    Append(s, v[i]);
  }
  if (v.size() > kMaxListedItems) {
    s += Cat(", ... and ", v.size() - kMaxListedItems, " more");
  }
  return s + "}";
}

// One tensor slot of the operator: Input, Scale, Bias or Output.
struct Slot {
  std::string_view name;  // proto field, "input"
  const std::optional<TensorDesc>* desc;
  bool is_output;
  bool ok = false;  // present and structurally valid (§2.7)
  const TensorDesc* t() const { return desc->has_value() ? &**desc : nullptr; }
};

// Collects violations in §9 order for one request.
class Checker {
 public:
  Checker(const OperatorDesc& op, uint32_t raw_fl, bool in_place)
      : op_(op), raw_fl_(raw_fl), in_place_(in_place) {}

  std::vector<Violation> Run() {
    if (IsKnownFeatureLevel(raw_fl_)) {
      fl_ = static_cast<FeatureLevel>(raw_fl_);
    } else {
      Add("FL_UNKNOWN", "feature_level",
          Cat("feature level ", FeatureLevelName(raw_fl_),
              " is not a DML_FEATURE_LEVEL value"));
    }
    schema_ = FindOperator(op_.type);
    if (schema_ == nullptr) {
      Add("OP_UNKNOWN", "operator",
          Cat("operator type ", OperatorTypeName(op_.type), " is not served"));
      return std::move(out_);
    }
    traits_ = &TraitsFor(schema_->kind);
    root_ = Cat("operator.", schema_->field);
    if (fl_ && FlBelow(*fl_, schema_->introduced)) {
      Add("OP_NOT_AVAILABLE", root_,
          Cat(schema_->name, " was introduced in FL ",
              FeatureLevelName(static_cast<uint32_t>(schema_->introduced)),
              ", the requested FL is ", FeatureLevelName(raw_fl_)));
    }
    slots_.push_back({"input", &op_.input, false});
    if (traits_->scale_bias_tensors) {
      slots_.push_back({"scale", &op_.scale, false});
      slots_.push_back({"bias", &op_.bias, false});
    }
    slots_.push_back({"output", &op_.output, true});

    CheckTensors();
    CheckSupport();
    CheckCrossTensor();
    CheckOverlap();
    switch (schema_->kind) {
      case OpKind::kUnaryScaleBias:
        CheckUnaryParams();
        break;
      case OpKind::kActivation:
        CheckActivationParams(*schema_, op_.activation, root_, false);
        break;
      case OpKind::kMvn:
      case OpKind::kMvn1:
        CheckMvnParams();
        break;
    }
    CheckInPlace();
    return std::move(out_);
  }

 private:
  void Add(std::string_view rule, std::string field, std::string message) {
    out_.push_back({std::string(rule), std::move(field),
                    BoundedMessage(std::move(message))});
  }
  std::string Path(std::string_view a) const { return Cat(root_, ".", a); }
  const Slot& input() const { return slots_.front(); }
  const Slot& output() const { return slots_.back(); }
  const Slot* SlotNamed(std::string_view name) const {
    for (const Slot& s : slots_) {
      if (s.name == name) return &s;
    }
    return nullptr;
  }

  // §9 step 5: TENSOR_MISSING, then the §2.7 rules for each present tensor.
  void CheckTensors() {
    for (const Slot& s : {input(), output()}) {
      if (!s.desc->has_value()) {
        Add("TENSOR_MISSING", Path(s.name), Cat(s.name, " tensor is required"));
      }
    }
    for (Slot& s : slots_) {
      if (s.t() != nullptr)
        s.ok = CheckTensorStruct(*s.t(), s.name, s.is_output);
    }
  }

  // Returns true when valid; reports at most one violation (the later
  // rules depend on the earlier ones).
  bool CheckTensorStruct(const TensorDesc& t, std::string_view name,
                         bool is_output) {
    // The field path of a part, made only for a violation's message.
    auto p = [&](std::string_view part) { return Cat(root_, ".", name, part); };
    if (t.tensor_type != kTensorTypeBuffer) {
      Add("TENSOR_TYPE_INVALID", p(".type"),
          Cat(name, ".type ", t.tensor_type, " is not DML_TENSOR_TYPE_BUFFER"));
      return false;
    }
    if (!IsKnownDataType(t.data_type)) {
      Add("DATATYPE_UNKNOWN", p(".data_type"),
          Cat(name, ".data_type ", t.data_type,
              " is not a valid DML_TENSOR_DATA_TYPE"));
      return false;
    }
    if (t.flags & ~kTensorFlagOwnedByDml) {
      Add("FLAGS_INVALID", p(".flags"),
          Cat(name, ".flags ", Hex(t.flags), " has unknown bits"));
      return false;
    }
    if (is_output && (t.flags & kTensorFlagOwnedByDml)) {
      Add("FLAGS_OWNED_BY_DML_ON_OUTPUT", p(".flags"),
          Cat(name,
              ": DML_TENSOR_FLAG_OWNED_BY_DML is only allowed on "
              "input tensors"));
      return false;
    }
    const uint32_t dc = t.rank();
    if (dc < 1 || dc > kTensorDimensionCountMax1) {
      Add("DIMCOUNT_RANGE", p(".dimension_count"),
          Cat(name, ".dimension_count ", dc, " is outside 1..8"));
      return false;
    }
    if (t.sizes.size() != dc) {
      Add("SIZES_LENGTH_MISMATCH", p(".sizes"),
          Cat(name, ".sizes has ", t.sizes.size(),
              " entries, dimension_count is ", dc));
      return false;
    }
    for (size_t i = 0; i < t.sizes.size(); ++i) {
      if (t.sizes[i] > kUint32Max) {
        Add("SIZE_INVALID", Cat(p(".sizes["), i, "]"),
            Cat(name, ".sizes[", i, "] ", t.sizes[i], " does not fit a UINT"));
        return false;
      }
      if (t.sizes[i] == 0) {
        Add("SIZE_ZERO", Cat(p(".sizes["), i, "]"),
            Cat(name, ".sizes[", i, "] is 0"));
        return false;
      }
    }
    if (t.strides) {
      if (t.strides->size() != dc) {
        Add("STRIDES_LENGTH_MISMATCH", p(".strides"),
            Cat(name, ".strides has ", t.strides->size(),
                " entries, dimension_count is ", dc));
        return false;
      }
      for (size_t i = 0; i < dc; ++i) {
        if ((*t.strides)[i] > kUint32Max) {
          Add("STRIDE_INVALID", Cat(p(".strides["), i, "]"),
              Cat(name, ".strides[", i, "] ", (*t.strides)[i],
                  " does not fit a UINT"));
          return false;
        }
      }
    }
    // §2.4 limits, exact in 64 bits: sizes and strides are < 2^32 here, so
    // a partial product or sum that is still <= 2^32-1 times one more
    // factor (or plus one more term) cannot wrap; stop once over the limit.
    const uint32_t bits = ElementBits(t.type());
    const char* too_large = nullptr;
    uint64_t count = 1;
    for (uint64_t s : t.sizes) {
      count *= s;
      if (count > kUint32Max) {
        too_large = ".sizes";
        break;
      }
    }
    if (too_large == nullptr) {
      const StrideList strides = EffectiveStrideList(t);
      uint64_t last = 0;  // IndexOfLastElement
      for (size_t i = 0; i < dc && too_large == nullptr; ++i) {
        last += (t.sizes[i] - 1) * strides[i];
        if (last >= kUint32Max) too_large = ".strides";  // last + 1 > max
      }
    }
    // TotalTensorSizeInBytes / element size > 2^32-1, i.e.
    // total * 8 > (2^32-1) * bits without the multiplication overflowing.
    if (too_large == nullptr &&
        t.total_tensor_size_in_bytes > kUint32Max * bits / 8) {
      too_large = ".total_tensor_size_in_bytes";
    }
    if (too_large != nullptr) {
      Add("TENSOR_TOO_LARGE", p(too_large),
          Cat(name, " exceeds 2^32-1 elements"));
      return false;
    }
    const uint64_t minimum = CalcBufferTensorSize(t.type(), t.sizes, t.strides);
    if (t.total_tensor_size_in_bytes < minimum) {
      Add("TOTAL_SIZE_TOO_SMALL", p(".total_tensor_size_in_bytes"),
          Cat(name, ".total_tensor_size_in_bytes ",
              t.total_tensor_size_in_bytes,
              " is below the minimum implied size ", minimum));
      return false;
    }
    if (t.total_tensor_size_in_bytes % 4 != 0) {
      Add("TOTAL_SIZE_NOT_DWORD_MULTIPLE", p(".total_tensor_size_in_bytes"),
          Cat(name, ".total_tensor_size_in_bytes ",
              t.total_tensor_size_in_bytes, " is not a multiple of 4"));
      return false;
    }
    const uint64_t align = t.guaranteed_base_offset_alignment;
    // align * 8 < bits, i.e. below the element size (4-bit types: any).
    if (align != 0 && ((align & (align - 1)) != 0 || align < (bits + 7) / 8)) {
      Add("ALIGNMENT_INVALID", p(".guaranteed_base_offset_alignment"),
          Cat(name, ".guaranteed_base_offset_alignment ", align,
              " must be 0 or a power of two >= the element size"));
      return false;
    }
    return true;
  }

  // §9 step 6: the FL support table (§3) for every valid tensor.
  void CheckSupport() {
    if (!fl_) return;
    const SupportTier* tier = TierFor(*schema_, *fl_);
    if (tier == nullptr) return;  // OP_NOT_AVAILABLE already reported
    for (const Slot& s : slots_) {
      if (!s.ok) continue;
      const TensorDesc& t = *s.t();
      if (t.rank() < tier->min_rank || t.rank() > tier->max_rank) {
        Add("DIMCOUNT_UNSUPPORTED", Path(s.name) + ".dimension_count",
            Cat(s.name, ".dimension_count ", t.rank(), " is not supported by ",
                schema_->name, " at FL ", FeatureLevelName(raw_fl_),
                " (allowed ", tier->min_rank, " to ", tier->max_rank, ")"));
      }
      if ((tier->types & Bit(t.type())) == 0) {
        std::vector<std::string_view> allowed;
        for (uint32_t v = 1; v < kDataTypeCount; ++v) {
          if (tier->types & (DataTypeMask{1} << v)) {
            allowed.push_back(DataTypeName(static_cast<DataType>(v)));
          }
        }
        Add("DATATYPE_UNSUPPORTED", Path(s.name) + ".data_type",
            Cat(s.name, ".data_type ", DataTypeName(t.type()),
                " is not supported by ", schema_->name, " at FL ",
                FeatureLevelName(raw_fl_), " (allowed ", Join(allowed, ", "),
                ")"));
      }
    }
  }

  // The valid tensors a cross-tensor rule of `scope` compares with Input.
  absl::InlinedVector<const Slot*, 4> Others(Scope scope) const {
    absl::InlinedVector<const Slot*, 4> v;
    if (scope == Scope::kNone) return v;
    for (size_t i = 1; i < slots_.size(); ++i) {
      const Slot& s = slots_[i];
      if (!s.ok) continue;
      if (scope == Scope::kInOut && !s.is_output) continue;
      v.push_back(&s);
    }
    return v;
  }

  // §9 step 7: DATATYPE_MISMATCH, DIMCOUNT_MISMATCH, SIZES_MISMATCH.
  void CheckCrossTensor() {
    if (!input().ok) return;
    const TensorDesc& in = *input().t();
    for (const Slot* s : Others(traits_->type_scope)) {
      if (s->t()->data_type != in.data_type) {
        Add("DATATYPE_MISMATCH", Path(s->name) + ".data_type",
            Cat(s->name, ".data_type ", DataTypeName(s->t()->type()),
                " differs from input.data_type ", DataTypeName(in.type())));
      }
    }
    bool rank_ok = true;
    for (const Slot* s : Others(traits_->rank_scope)) {
      if (s->t()->sizes.size() != in.sizes.size()) {
        if (s->is_output) rank_ok = false;
        Add("DIMCOUNT_MISMATCH", Path(s->name) + ".dimension_count",
            Cat(s->name, ".dimension_count ", s->t()->sizes.size(),
                " differs from input.dimension_count ", in.sizes.size()));
      }
    }
    if (output().ok && rank_ok && output().t()->sizes != in.sizes) {
      Add("SIZES_MISMATCH", Path("output.sizes"),
          Cat("output.sizes ", Dims(output().t()->sizes),
              " differ from input.sizes ", Dims(in.sizes)));
    }
  }

  // §9 step 8.
  void CheckOverlap() {
    if (output().ok && HasSelfOverlap(*output().t())) {
      Add("OUTPUT_OVERLAP", Path("output.strides"),
          Cat("output strides ", Dims(EffectiveStrides(*output().t())),
              " map two elements of sizes ", Dims(output().t()->sizes),
              " to one offset"));
    }
  }

  // §9 step 9, THRESHOLD/CLIP: Min (Max), ScaleBias.
  void CheckUnaryParams() {
    const std::optional<float> given[] = {op_.min, op_.max};
    for (size_t i = 0; i < schema_->params.size(); ++i) {
      const std::string_view name = schema_->params[i];
      if (!name.empty() && !given[i]) {
        Add("PARAM_MISSING", Path(name), Cat("field ", name, " is missing"));
      }
    }
    if (!op_.scale_bias) return;
    if (!op_.scale_bias->scale) {
      Add("PARAM_INVALID", Path("scale_bias.scale"),
          "scale_bias needs a FLOAT scale");
    } else if (!op_.scale_bias->bias) {
      Add("PARAM_INVALID", Path("scale_bias.bias"),
          "scale_bias needs a FLOAT bias");
    }
    if (input().ok && (Bit(input().t()->type()) & kInt64Types)) {
      Add("SCALEBIAS_64BIT_UNSUPPORTED", Path("scale_bias"),
          Cat("scale_bias is not supported for 64-bit integer "
              "tensors (input is ",
              DataTypeName(input().t()->type()), ")"));
    }
  }

  // Activation parameters, standalone (`root` = "operator.celu") or fused
  // (`root` = "operator.mvn1.fused_activation.celu"). In a fused desc every
  // rule but PARAM_MISSING becomes FUSED_PARAM_INVALID (§5.2).
  void CheckActivationParams(const OperatorSchema& act,
                             const ActivationParams& params,
                             const std::string& root, bool fused) {
    for (int i = 0; i < 2; ++i) {
      if (!act.params[i].empty() && !params[i]) {
        Add("PARAM_MISSING", Cat(root, ".", act.params[i]),
            Cat(act.name, ": field ", act.params[i], " is missing"));
      }
    }
    for (const ParamRule& rule : kParamRules) {
      if (rule.type != act.type || !params[rule.index]) continue;
      std::string msg = rule.check(*params[rule.index], fl_);
      if (msg.empty()) continue;
      Add(fused ? "FUSED_PARAM_INVALID" : rule.rule,
          Cat(root, ".", act.params[rule.index]), Cat(act.name, ": ", msg));
    }
  }

  // §9 step 9, MVN and MVN1.
  void CheckMvnParams() {
    CheckScaleBiasTensors();
    if (traits_->has_axes) CheckAxes();
    if (traits_->has_cross_channel)
      CheckBool(op_.cross_channel, "cross_channel");
    CheckBool(op_.normalize_variance, "normalize_variance");
    if (!op_.epsilon) {
      Add("PARAM_MISSING", Path("epsilon"), "field epsilon is missing");
    } else if (!std::isfinite(*op_.epsilon) || *op_.epsilon < 0) {
      Add("MVN_EPSILON_INVALID", Path("epsilon"),
          Cat("epsilon ", *op_.epsilon, " must be finite and >= 0"));
    }
    CheckFused();
  }

  // §4.3.3: pairing before 5_2, broadcast shapes.
  void CheckScaleBiasTensors() {
    const Slot* scale = SlotNamed("scale");
    const Slot* bias = SlotNamed("bias");
    const bool has_scale = scale->desc->has_value();
    const bool has_bias = bias->desc->has_value();
    if (fl_ && FlBelow(*fl_, FeatureLevel::k5_2) && has_scale != has_bias) {
      Add("MVN_SCALE_BIAS_PAIRING", Path(has_scale ? "bias" : "scale"),
          "scale and bias must be both present or both absent before FL 5_2");
    }
    if (!input().ok) return;
    const std::vector<uint64_t>& in = input().t()->sizes;
    for (const Slot* s : {scale, bias}) {
      if (!s->ok) continue;
      const std::vector<uint64_t>& sz = s->t()->sizes;
      bool reported = false;
      for (size_t i = 0; i < sz.size() && i < in.size(); ++i) {
        if (sz[i] != in[i] && sz[i] != 1) {
          Add("MVN_SCALE_BIAS_BROADCAST", Cat(Path(s->name), ".sizes[", i, "]"),
              Cat(s->name, ".sizes[", i, "]=", sz[i],
                  " must be 1 or equal input.sizes[", i, "]=", in[i]));
          reported = true;
          break;
        }
      }
      if (!reported && traits_->channel_fixed_before_4_0 && fl_ &&
          FlBelow(*fl_, FeatureLevel::k4_0) && sz.size() >= 2 &&
          in.size() >= 2 && sz[1] != in[1]) {
        Add("MVN_SCALE_BIAS_BROADCAST", Cat(Path(s->name), ".sizes[1]"),
            Cat(s->name, ".sizes[1]=", sz[1],
                " (channel) must equal input.sizes[1]=", in[1],
                " before FL 4_0"));
      }
    }
  }

  // §4.3.2: AxisCount and Axes.
  void CheckAxes() {
    const std::vector<uint64_t>& axes = op_.axes;
    if (!op_.axis_count) {
      Add("PARAM_MISSING", Path("axis_count"), "field axis_count is missing");
    } else if (*op_.axis_count != axes.size()) {
      Add("MVN_AXIS_COUNT_MISMATCH", Path("axis_count"),
          Cat("axis_count ", *op_.axis_count, " != number of axes ",
              axes.size()));
    } else if (*op_.axis_count == 0) {
      Add("MVN_AXES_EMPTY", Path("axis_count"),
          "axis_count must be at least 1");
    }
    if (input().ok) {
      const size_t dc = input().t()->sizes.size();
      for (size_t i = 0; i < axes.size(); ++i) {
        if (axes[i] >= dc) {
          Add("MVN_AXIS_OUT_OF_RANGE", Cat(Path("axes"), "[", i, "]"),
              Cat("axis ", axes[i], " is not in [0, ", dc - 1, "]"));
          break;
        }
      }
    }
    std::set<uint64_t> seen;
    for (size_t i = 0; i < axes.size(); ++i) {
      if (!seen.insert(axes[i]).second) {
        Add("MVN_AXES_DUPLICATE", Cat(Path("axes"), "[", i, "]"),
            Cat("axes ", Dims(axes), " contain ", axes[i], " twice"));
        break;
      }
    }
  }

  void CheckBool(const std::optional<uint32_t>& v, std::string_view name) {
    if (!v) {
      Add("PARAM_MISSING", Path(name), Cat("field ", name, " is missing"));
    } else if (*v > 1) {
      Add("PARAM_INVALID", Path(name),
          Cat(name, " ", *v, " must be a BOOL (0 or 1)"));
    }
  }

  // §5: the FusedActivation of MVN/MVN1.
  void CheckFused() {
    if (!op_.fused_activation) return;
    const FusedActivationDesc& fa = *op_.fused_activation;
    const std::string base = Path("fused_activation");
    const OperatorSchema* act = FindOperator(fa.type);
    if (act == nullptr || act->kind != OpKind::kActivation ||
        !act->fusable_from) {
      Add("FUSED_NOT_FUSABLE", base,
          Cat(fa.type == 0 ? std::string("no type") : OperatorTypeName(fa.type),
              " is not an activation that can be fused into ", schema_->name));
      return;
    }
    const std::string root = Cat(base, ".", act->field);
    if (fl_ && FlBelow(*fl_, *act->fusable_from)) {
      Add("FUSED_NOT_AVAILABLE", root,
          Cat(act->name, " can be fused from FL ",
              FeatureLevelName(static_cast<uint32_t>(*act->fusable_from)),
              ", the requested FL is ", FeatureLevelName(raw_fl_)));
    }
    if (fa.has_tensors) {
      Add("FUSED_TENSORS_NOT_NULL", root,
          "the input/output tensors of a fused activation must be absent");
    }
    CheckActivationParams(*act, fa.params, root, true);
  }

  // §10.
  void CheckInPlace() {
    if (!in_place_) return;
    if (!schema_->in_place) {
      Add("INPLACE_NOT_SUPPORTED", "in_place",
          Cat(schema_->name, " does not support in-place execution"));
      return;
    }
    if (!input().ok || !output().ok) return;
    const TensorDesc& in = *input().t();
    const TensorDesc& out = *output().t();
    if (in.data_type != out.data_type || in.sizes != out.sizes ||
        EffectiveStrideList(in) != EffectiveStrideList(out)) {
      Add("INPLACE_LAYOUT_MISMATCH", "in_place",
          "in-place requires identical data_type, sizes and effective "
          "strides for input and output");
    }
  }

  const OperatorDesc& op_;
  const uint32_t raw_fl_;
  const bool in_place_;
  std::optional<FeatureLevel> fl_;
  const OperatorSchema* schema_ = nullptr;
  const KindTraits* traits_ = nullptr;
  std::string root_;
  absl::InlinedVector<Slot, 4> slots_;  // no allocation per request
  std::vector<Violation> out_;
};

}  // namespace

std::string BoundedMessage(std::string message) {
  if (message.size() <= kMaxMessageBytes) return message;
  size_t end = kMaxMessageBytes - 3;
  while (end > 0 && (static_cast<unsigned char>(message[end]) & 0xC0) == 0x80) {
    --end;  // not inside a multi-byte character
  }
  message.resize(end);
  return message + "...";
}

std::vector<Violation> ValidateAll(const OperatorDesc& op,
                                   uint32_t feature_level, bool in_place) {
  return Checker(op, feature_level, in_place).Run();
}

absl::Status Validate(const OperatorDesc& op, uint32_t feature_level,
                      bool in_place) {
  std::vector<Violation> v = ValidateAll(op, feature_level, in_place);
  if (v.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(v.front().Description());
}

}  // namespace dmls::ops
