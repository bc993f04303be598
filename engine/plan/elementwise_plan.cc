#include "engine/plan/elementwise_plan.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/core/tensor_desc.h"
#include "engine/kernels/activation_emit.h"
#include "engine/kernels/kernels.h"
#include "engine/plan/param_convert.h"
#include "engine/plan/plan_util.h"

namespace dmls::gpu {
namespace {

uint64_t CeilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// Float and integer parameters of an element-wise operator.
absl::Status FillElementwiseParams(const OperatorDesc& op, DataType t, KernelKey& key,
                                   ElementwiseArgs& a) {
  const bool is_float = IsFloat(t);
  auto to_tensor_float = [&](float v) { return t == DataType::kFloat16 ? RoundToHalf(v) : v; };
  switch (op.op()) {
    case OperatorType::kElementWiseThreshold:
    case OperatorType::kElementWiseClip: {
      const bool clip = op.op() == OperatorType::kElementWiseClip;
      if (!op.min || (clip && !op.max)) return absl::InvalidArgumentError("missing Min/Max");
      a.f[kArgMin] = to_tensor_float(*op.min);
      if (clip) a.f[kArgMax] = to_tensor_float(*op.max);
      if (ElementBits(t) == 64) {
        if (!clip || op.scale_bias) {
          return absl::InvalidArgumentError("64-bit tensors: CLIP without ScaleBias only");
        }
        const uint64_t mn = ConvertToInt64Param(*op.min, t);
        const uint64_t mx = ConvertToInt64Param(*op.max, t);
        std::memcpy(&a.i[kArgIntMin], &mn, 8);
        std::memcpy(&a.f[kArgP0], &mx, 8);
        return absl::OkStatus();
      }
      if (!is_float) {
        a.i[kArgIntMin] = ConvertToIntParam(*op.min, t);
        if (clip) a.i[kArgIntMax] = ConvertToIntParam(*op.max, t);
      }
      if (op.scale_bias) {
        if (!op.scale_bias->scale || !op.scale_bias->bias) {
          return absl::InvalidArgumentError("incomplete ScaleBias");
        }
        key.scale_bias = true;
        a.f[kArgScale] = *op.scale_bias->scale;
        a.f[kArgBias] = *op.scale_bias->bias;

      }
      return absl::OkStatus();
    }
    default:
      break;
  }
  const float p0 = op.activation[0].value_or(0.0f);
  const float p1 = op.activation[1].value_or(0.0f);
  a.f[kArgP0] = p0;
  a.f[kArgP1] = p1;
  if (op.op() == OperatorType::kActivationShrink) {
    a.f[kArgD1] = -p1;
    if (!is_float) {
      a.i[kArgIntMin] = ConvertToIntParam(p0, t);
      a.i[kArgIntMax] = ConvertToIntParam(p1, t);
      a.i[kArgIntAux] = ConvertToIntParam(-p1, t);
    }
  }
  if (p0 != 0.0f) a.f[kArgD0] = 1.0f / p0;
  return absl::OkStatus();
}

}  // namespace

absl::Status PlanContiguous(const KernelKey& base_key, const ElementwiseArgs& base_args,
                            uint64_t elements, DataType t, const PlannerOptions& o,
                            DispatchPlan& plan) {
  const uint64_t words = CeilDiv(elements * ElementBits(t), 32);
  const uint64_t texels = words / 4;
  const uint64_t per_group = uint64_t{kElementwiseThreads} * kTexelsPerThread;
  auto add = [&](uint8_t variant, ViewFormat fmt, uint64_t first, uint64_t count) -> absl::Status {
    KernelKey key = base_key;
    key.variant = variant;
    ElementwiseArgs a = base_args;
    a.count = static_cast<uint32_t>(count);
    Dispatch d;
    d.key = key;
    absl::StatusOr<std::array<uint32_t, 3>> groups = GridFor(CeilDiv(count, per_group), o.max_groups);
    if (!groups.ok()) return groups.status();
    d.groups = *groups;
    a.groups_x = d.groups[0];
    d.srv[0] = View{BufferSlot::kInput, fmt, first, static_cast<uint32_t>(count)};
    d.uav[0] = View{BufferSlot::kOutput, fmt, first, static_cast<uint32_t>(count)};
    d.args = EncodeArgs(a);
    plan.dispatches.push_back(std::move(d));
    return absl::OkStatus();
  };
  for (uint64_t first = 0; first < texels; first += o.max_view_texels) {
    const uint64_t count = std::min<uint64_t>(o.max_view_texels, texels - first);
    absl::Status s = add(kVariantVec4, ViewFormat::kR32G32B32A32Uint, first, count);
    if (!s.ok()) return s;
  }
  if (words % 4 != 0 && ElementBits(t) == 64) {
    // The odd last 64-bit element: a rank-1 strided dispatch over its words.
    KernelKey key = base_key;
    key.layout = LayoutClass::kStrided;
    key.variant = 1;
    ElementwiseArgs a = base_args;
    a.count = 1;
    a.groups_x = 1;
    a.sizes[0] = 1;
    Dispatch d;
    d.key = key;
    d.srv[0] = View{BufferSlot::kInput, ViewFormat::kR32Uint, texels * 4, 2};
    d.uav[0] = View{BufferSlot::kOutput, ViewFormat::kR32Uint, texels * 4, 2};
    d.args = EncodeArgs(a);
    plan.dispatches.push_back(std::move(d));
  } else if (words % 4 != 0) {
    absl::Status s = add(kVariantWord, ViewFormat::kR32Uint, texels * 4, words % 4);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

namespace {

absl::Status PlanStrided(const KernelKey& base_key, const ElementwiseArgs& base_args,
                         const TensorDesc& in, const TensorDesc& out, DataType t,
                         const PlannerOptions& o, DispatchPlan& plan) {
  std::vector<Dim> dims = CoalesceDims(in.sizes, {EffectiveStrides(in), EffectiveStrides(out)});
  const bool wide = ElementBits(t) == 64;
  if (wide) {
    // 64-bit elements as word pairs: strides in words, plus an innermost
    // pair dimension so that views cover both words (the splitter never cuts
    // it: one element always fits); the kernel loads both words itself.
    for (Dim& d : dims) {
      for (uint64_t& s : d.strides) s *= 2;
    }
    dims.push_back(Dim{2, {1, 1}});
  }
  absl::StatusOr<std::vector<Chunk>> chunks =
      SplitForViews(dims, wide ? 32 : ElementBits(t), o.max_view_texels, o.max_dispatches);
  if (!chunks.ok()) return chunks.status();
  for (Chunk& c : *chunks) {
    if (wide) {
      if (c.dims.size() < 2 || c.dims.back().size != 2) {
        return absl::InternalError("64-bit pair dimension was split");
      }
      c.dims.pop_back();
    }
    KernelKey key = base_key;
    key.layout = LayoutClass::kStrided;
    key.variant = static_cast<uint8_t>(c.dims.size());
    ElementwiseArgs a = base_args;
    uint64_t count = 1;
    for (size_t k = 0; k < c.dims.size(); ++k) {
      a.sizes[k] = static_cast<uint32_t>(c.dims[k].size);
      a.in_strides[k] = static_cast<uint32_t>(c.dims[k].strides[0]);
      a.out_strides[k] = static_cast<uint32_t>(c.dims[k].strides[1]);
      count *= c.dims[k].size;
    }
    a.count = static_cast<uint32_t>(count);
    a.in_bias = c.views[0].bias;
    a.out_bias = c.views[1].bias;
    Dispatch d;
    d.key = key;
    absl::StatusOr<std::array<uint32_t, 3>> groups =
        GridFor(CeilDiv(count, kElementwiseThreads), o.max_groups);
    if (!groups.ok()) return groups.status();
    d.groups = *groups;
    a.groups_x = d.groups[0];
    d.srv[0] = View{BufferSlot::kInput, ViewFormat::kR32Uint, c.views[0].first_word,
                    c.views[0].words};
    d.uav[0] = View{BufferSlot::kOutput, ViewFormat::kR32Uint, c.views[1].first_word,
                    c.views[1].words};
    d.args = EncodeArgs(a);
    plan.dispatches.push_back(std::move(d));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<DispatchPlan> PlanElementwise(const OperatorDesc& op, const PlannerOptions& o) {
  if (!op.input || !op.output) return absl::InvalidArgumentError("missing tensor");
  const TensorDesc& in = *op.input;
  const TensorDesc& out = *op.output;
  const DataType t = in.type();
  const std::vector<DataType> types = ElementwiseTypes(op.op());
  if (std::find(types.begin(), types.end(), t) == types.end()) {
    return absl::UnimplementedError(
        absl::StrCat("no GPU kernel for operator ", op.type, " on ", std::string(DataTypeName(t))));
  }
  KernelKey key;
  key.stage = KernelStage::kElementwise;
  key.op = op.op();
  key.data_type = t;
  ElementwiseArgs args;
  absl::Status s = FillElementwiseParams(op, t, key, args);
  if (!s.ok()) return s;
  DispatchPlan plan;
  const uint64_t n = ElementCount(in.sizes);
  if (IsPacked(in) && IsPacked(out) && in.sizes == out.sizes) {
    key.layout = LayoutClass::kContiguous;
    s = PlanContiguous(key, args, n, t, o, plan);
  } else {
    s = PlanStrided(key, args, in, out, t, o, plan);
  }
  if (!s.ok()) return s;
  if (plan.dispatches.size() > o.max_dispatches) {
    return absl::UnimplementedError("tensor layout needs too many dispatches");
  }
  return plan;
}

}  // namespace dmls::gpu
