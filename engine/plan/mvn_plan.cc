#include "engine/plan/mvn_plan.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/core/tensor_desc.h"
#include "engine/kernels/activation_emit.h"
#include "engine/kernels/mvn_kernel.h"
#include "engine/plan/plan_util.h"

namespace dmls::gpu {
namespace {

// Strides of `t` (Scale/Bias) seen from the input's index space: a size-1
// dimension broadcasts (stride 0).
std::vector<uint64_t> BroadcastStrides(const TensorDesc& t) {
  std::vector<uint64_t> s = EffectiveStrides(t);
  for (size_t k = 0; k < s.size(); ++k) {
    if (t.sizes[k] == 1) s[k] = 0;
  }
  return s;
}

// Whole-tensor R32_UINT word view of `t`.
absl::StatusOr<View> WholeView(BufferSlot slot, const TensorDesc& t, uint64_t max_words) {
  const uint64_t elements = IndexOfLastElement(t) + 1;
  const uint64_t words = (elements * ElementBits(t.type()) + 31) / 32;
  if (words > max_words) {
    return absl::UnimplementedError(
        absl::StrCat("MVN tensor spans ", words, " words; views hold at most ", max_words));
  }
  return View{slot, ViewFormat::kR32Uint, 0, static_cast<uint32_t>(words)};
}

// The same, as R32G32B32A32_UINT texels (`t` is a run of whole texels).
absl::StatusOr<View> WholeTexelView(BufferSlot slot, const TensorDesc& t, uint64_t max_texels) {
  const uint64_t bytes = (IndexOfLastElement(t) + 1) * ElementBits(t.type()) / 8;
  const uint64_t texels = (bytes + 15) / 16;
  if (texels > max_texels) {
    return absl::UnimplementedError(
        absl::StrCat("MVN tensor spans ", texels, " texels; views hold at most ", max_texels));
  }
  return View{slot, ViewFormat::kR32G32B32A32Uint, 0, static_cast<uint32_t>(texels)};
}

// Whether every group is a run of whole 16-byte texels in each of tensors
// [first, end) (indices into the dimensions' strides): packed over the
// inner dimensions, with N and every outer stride a multiple of 16 bytes
// (the tensors start at 16-byte aligned buffer offsets).
bool GroupsAreTexelRuns(const std::vector<Dim>& outer, const std::vector<Dim>& inner,
                        uint32_t element_bytes, size_t first, size_t end) {
  for (size_t t = first; t < end; ++t) {
    uint64_t packed = 1;
    for (size_t k = inner.size(); k-- > 0;) {
      if (inner[k].strides[t] != packed) return false;
      packed *= inner[k].size;
    }
    if (packed * element_bytes % 16 != 0) return false;
    for (const Dim& d : outer) {
      if (d.strides[t] * element_bytes % 16 != 0) return false;
    }
  }
  return true;
}

// Whether each group is packed in the input: its inner dimensions' strides
// (index 0) are those of a packed tensor, so element n of a group is at
// the group's first element + n.
bool GroupsArePacked(const std::vector<Dim>& inner) {
  uint64_t packed = 1;
  for (size_t k = inner.size(); k-- > 0;) {
    if (inner[k].strides[0] != packed) return false;
    packed *= inner[k].size;
  }
  return true;
}

// Whether the groups follow one another in the input and in the output
// alike (strides 0 and 1): each group's elements packed, group k + 1
// starting right after group k, so that the tensor is the groups back to
// back.
bool GroupsFollowEachOther(const std::vector<Dim>& outer, const std::vector<Dim>& inner) {
  if (outer.size() > 1) return false;
  uint64_t packed = 1;
  for (size_t k = inner.size(); k-- > 0;) {
    if (inner[k].strides[0] != packed || inner[k].strides[1] != packed) return false;
    packed *= inner[k].size;
  }
  return outer.empty() || (outer[0].strides[0] == packed && outer[0].strides[1] == packed);
}

}  // namespace

absl::StatusOr<DispatchPlan> PlanMvn(const OperatorDesc& op, const PlannerOptions& o) {
  if (!op.input || !op.output) return absl::InvalidArgumentError("missing tensor");
  const TensorDesc& in = *op.input;
  const DataType t = in.type();
  if (t != DataType::kFloat32 && t != DataType::kFloat16) {
    return absl::UnimplementedError("MVN runs on FLOAT32/FLOAT16 only");
  }
  const uint32_t rank = static_cast<uint32_t>(in.sizes.size());
  if (rank == 0 || rank > kMaxRank) return absl::InvalidArgumentError("bad MVN rank");
  // Reduced axes.
  std::vector<bool> reduced(rank, false);
  if (op.op() == OperatorType::kMeanVarianceNormalization) {
    if (rank != 4) return absl::InvalidArgumentError("MVN needs 4-D tensors");
    reduced[2] = reduced[3] = true;
    if (op.cross_channel.value_or(0) != 0) reduced[1] = true;
  } else {
    for (uint64_t a : op.axes) {
      if (a >= rank) return absl::InvalidArgumentError("MVN axis out of range");
      reduced[a] = true;
    }
  }
  std::vector<std::vector<uint64_t>> strides = {EffectiveStrides(in), EffectiveStrides(*op.output)};
  const bool has_scale = op.scale.has_value(), has_bias = op.bias.has_value();
  if (has_scale) strides.push_back(BroadcastStrides(*op.scale));
  if (has_bias) strides.push_back(BroadcastStrides(*op.bias));
  // Outer (kept) and inner (reduced) dimensions, each coalesced.
  auto collect = [&](bool want_reduced) {
    std::vector<uint64_t> sizes;
    std::vector<std::vector<uint64_t>> s(strides.size());
    for (uint32_t k = 0; k < rank; ++k) {
      if (reduced[k] != want_reduced) continue;
      sizes.push_back(in.sizes[k]);
      for (size_t i = 0; i < strides.size(); ++i) s[i].push_back(strides[i][k]);
    }
    return CoalesceDims(sizes, s);
  };
  std::vector<Dim> outer = collect(false), inner = collect(true);
  if (outer.size() == 1 && outer[0].size == 1) outer.clear();
  const uint32_t r = static_cast<uint32_t>(inner.size());
  if (r + outer.size() > kMaxRank) return absl::InternalError("MVN dims exceed rank");

  MvnArgs a;
  for (uint32_t k = 0; k < kMaxRank; ++k) a.sizes[k] = 1;
  auto place = [&](uint32_t slot, const Dim& d) {
    a.sizes[slot] = static_cast<uint32_t>(d.size);
    a.in_strides[slot] = static_cast<uint32_t>(d.strides[0]);
    a.out_strides[slot] = static_cast<uint32_t>(d.strides[1]);
    size_t i = 2;
    if (has_scale) a.scale_strides[slot] = static_cast<uint32_t>(d.strides[i++]);
    if (has_bias) a.bias_strides[slot] = static_cast<uint32_t>(d.strides[i++]);
  };
  const uint32_t first_inner = kMaxRank - r;
  for (uint32_t k = 0; k < r; ++k) place(first_inner + k, inner[k]);
  for (size_t k = 0; k < outer.size(); ++k) {
    place(first_inner - static_cast<uint32_t>(outer.size()) + static_cast<uint32_t>(k), outer[k]);
  }
  uint64_t n = 1, groups = 1;
  for (const Dim& d : inner) n *= d.size;
  for (const Dim& d : outer) groups *= d.size;
  uint64_t chunks = (n + kMvnChunk - 1) / kMvnChunk;
  a.group_count = static_cast<uint32_t>(groups);
  a.n = static_cast<uint32_t>(n);
  a.chunks = static_cast<uint32_t>(chunks);
  a.epsilon = op.epsilon.value_or(0.0f);

  KernelKey key;
  key.op = OperatorType::kMeanVarianceNormalization1;
  key.data_type = t;
  key.layout = LayoutClass::kStrided;
  key.variant = static_cast<uint8_t>(r);
  // Partial statistics too: NormalizeVariance FALSE takes exact means.
  key.normalize_variance = op.normalize_variance.value_or(1) != 0;

  KernelKey apply = key;
  apply.stage = KernelStage::kMvnApply;
  apply.has_scale = has_scale;
  apply.has_bias = has_bias;
  if (op.fused_activation && op.fused_activation->type != 0) {
    const auto f = static_cast<OperatorType>(op.fused_activation->type);
    if (!IsSupportedActivation(f)) return absl::UnimplementedError("fused activation not supported");
    apply.fused = f;
    const float p0 = op.fused_activation->params[0].value_or(0.0f);
    const float p1 = op.fused_activation->params[1].value_or(0.0f);
    a.fused_p0 = p0;
    a.fused_p1 = p1;
    if (p0 != 0.0f) a.fused_d0 = 1.0f / p0;
    a.fused_d1 = -p1;
  }

  const uint32_t element_bytes = ElementBits(t) / 8;
  // Input and output (strides 0 and 1), then Scale/Bias (2 and up).
  const bool texel_runs = o.mvn_vec4 && GroupsAreTexelRuns(outer, inner, element_bytes, 0, 2);
  const bool sb_texel_runs = texel_runs && (has_scale || has_bias) && o.mvn_vec4_scale_bias &&
                             GroupsAreTexelRuns(outer, inner, element_bytes, 2, strides.size());
  // Statistics by texels of the whole input, masked to each group, where
  // groups are packed but not whole texels (kMvnVariantTexelSpan), in the
  // two passes or blocks: up to lanes - 1 elements of the texel before a
  // group's first make room for one more chunk.
  const bool span_layout = !texel_runs &&
                           (t == DataType::kFloat16 ? o.mvn_texel_span : o.mvn_texel_span_float32) &&
                           GroupsArePacked(inner) &&
                           (IndexOfLastElement(in) + 1) * element_bytes % 16 == 0;
  MvnSchedule schedule =
      ChooseMvnSchedule(groups, n, element_bytes, o, texel_runs, has_scale || has_bias,
                        sb_texel_runs, span_layout);
  // Texel loads and stores (not in kMvnCoop, nor in its clear).
  const bool vec4 = texel_runs && schedule.kind != MvnSchedule::kCoop;
  const bool sb_vec4 = vec4 && sb_texel_runs;
  if (vec4) {
    key.variant |= kMvnVariantVec4;
    apply.variant |= kMvnVariantVec4;
  }
  if (sb_vec4) apply.variant |= kMvnVariantVec4ScaleBias;
  const bool span = span_layout && (schedule.kind == MvnSchedule::kTwoPass ||
                                    schedule.kind == MvnSchedule::kBlocked);
  // The statistics' chunks per group: the normalisation's, or the long
  // span's where the partials are combined once (kMvnCombine).
  uint64_t partial_chunks = chunks;
  if (span) {
    const uint64_t lead = 16 / element_bytes - 1;  // elements of the first texel before the group
    key.variant |= kMvnVariantTexelSpan;
    chunks = (n + lead + kMvnChunk - 1) / kMvnChunk;
    a.chunks = static_cast<uint32_t>(chunks);
    partial_chunks = chunks;
    // Long spans need the combine (ChooseMvnSchedule decides it).
    if (o.mvn_long_span && schedule.combine) {
      key.variant |= kMvnVariantLongSpan;
      partial_chunks = (n + lead + kMvnLongSpanChunk - 1) / kMvnLongSpanChunk;
    }
  }
  // The normalisation by texels of the tensor (kMvnNormalise with
  // kMvnVariantTexelSpan): groups back to back in the input and output,
  // every group's statistic combined before it runs (the two passes, not
  // blocks); Scale and Bias by element.
  const bool span_normalise = span && o.mvn_span_normalise && schedule.combine &&
                              schedule.kind == MvnSchedule::kTwoPass &&
                              n >= 16 / element_bytes && GroupsFollowEachOther(outer, inner);
  const uint64_t work_groups = groups * partial_chunks;
  auto io_view = vec4 ? WholeTexelView : WholeView;
  auto sb_view = sb_vec4 ? WholeTexelView : WholeView;
  absl::StatusOr<View> vin = io_view(BufferSlot::kInput, in, o.max_view_texels);
  if (!vin.ok()) return vin.status();
  View vin_partial = *vin;
  if (span) {
    absl::StatusOr<View> v = WholeTexelView(BufferSlot::kInput, in, o.max_view_texels);
    if (!v.ok()) return v.status();
    vin_partial = *v;
  }
  absl::StatusOr<View> vout = io_view(BufferSlot::kOutput, *op.output, o.max_view_texels);
  if (!vout.ok()) return vout.status();
  View vout_normalise = *vout;
  if (span_normalise) {
    absl::StatusOr<View> v = WholeTexelView(BufferSlot::kOutput, *op.output, o.max_view_texels);
    if (!v.ok()) return v.status();
    vout_normalise = *v;
  }
  View vscale, vbias;
  if (has_scale) {
    absl::StatusOr<View> v = sb_view(BufferSlot::kScale, *op.scale, o.max_view_texels);
    if (!v.ok()) return v.status();
    vscale = *v;
  }
  if (has_bias) {
    absl::StatusOr<View> v = sb_view(BufferSlot::kBias, *op.bias, o.max_view_texels);
    if (!v.ok()) return v.status();
    vbias = *v;
  }
  const uint64_t partial_words = (work_groups + (schedule.combine ? groups : 0)) * 4;
  const View scratch{BufferSlot::kScratch, ViewFormat::kR32Float, 0,
                     static_cast<uint32_t>(std::min<uint64_t>(partial_words, o.max_view_texels))};

  // kMvnCoop's scratch: the ticket and one counter per group, then the
  // partials, then the group statistics (kernel_abi.h).
  const uint64_t counters = groups + 1, partials_word = (counters + 3) / 4 * 4;
  const uint64_t coop_words = partials_word + (work_groups + groups) * 4;
  const View coop_scratch{BufferSlot::kScratch, ViewFormat::kR32Uint, 0,
                          static_cast<uint32_t>(std::min<uint64_t>(coop_words, o.max_view_texels))};
  // One dispatch of `stage` over groups [first, first + count).
  auto make = [&](KernelStage stage, uint64_t first, uint64_t count) -> absl::StatusOr<Dispatch> {
    Dispatch d;
    d.key = stage == KernelStage::kMvnPartial   ? key
            : stage == KernelStage::kMvnCombine ? MvnCombineKey(key.normalize_variance)
                                                : apply;
    d.key.stage = stage;
    if (stage == KernelStage::kMvnRow) d.key.variant |= schedule.row_bits;
    const uint64_t per_group =
        stage == KernelStage::kMvnRow || stage == KernelStage::kMvnCombine ? 1
        : stage == KernelStage::kMvnCoop                                    ? 2 * chunks  // two tasks
        : stage == KernelStage::kMvnPartial                                 ? partial_chunks
                                                                            : chunks;
    absl::StatusOr<std::array<uint32_t, 3>> grid = GridFor(count * per_group, o.max_groups);
    if (!grid.ok()) return grid.status();
    MvnArgs da = a;
    da.first_group = static_cast<uint32_t>(first);
    da.group_count = static_cast<uint32_t>(count);
    da.groups_x = (*grid)[0];
    if (stage == KernelStage::kMvnRow) da.chunks = 1;  // the whole group is one chunk
    if (stage == KernelStage::kMvnPartial || stage == KernelStage::kMvnCombine) {
      da.chunks = static_cast<uint32_t>(partial_chunks);  // the partials of a group
    }
    if (stage == KernelStage::kMvnCombine || stage == KernelStage::kMvnNormalise) {
      da.partials_word = static_cast<uint32_t>(work_groups * 4);  // the group statistics
    }
    if (stage == KernelStage::kMvnCoop) {
      da.spin_limit = o.mvn_coop_spin_limit;
      da.partials_word = static_cast<uint32_t>(partials_word);
      da.lag = static_cast<uint32_t>(schedule.block_groups);
    }
    d.args = EncodeArgs(da);
    d.groups = *grid;
    if (stage == KernelStage::kMvnCombine) {
      d.uav[1] = scratch;
      d.barrier_before = true;  // after the partials
      return d;
    }
    d.srv[0] = stage == KernelStage::kMvnPartial ? vin_partial : *vin;
    if (stage == KernelStage::kMvnPartial) {
      d.uav[1] = scratch;
      return d;
    }
    if (has_scale) d.srv[1] = vscale;
    if (has_bias) d.srv[2] = vbias;
    d.uav[0] = *vout;
    if (stage == KernelStage::kMvnNormalise && span_normalise) {
      d.key.variant |= kMvnVariantTexelSpan;
      d.srv[0] = vin_partial;
      d.uav[0] = vout_normalise;
    }
    if (stage != KernelStage::kMvnRow) {
      d.uav[1] = stage == KernelStage::kMvnCoop ? coop_scratch : scratch;
      d.barrier_before = true;  // after the partials, their combine, or the clear
    }
    return d;
  };

  DispatchPlan plan;
  plan.mvn_schedule = schedule;
  if (schedule.kind == MvnSchedule::kRow) {
    absl::StatusOr<Dispatch> d = make(KernelStage::kMvnRow, 0, groups);
    if (!d.ok()) return d.status();
    plan.dispatches.push_back(*std::move(d));
    return plan;
  }
  if (schedule.kind == MvnSchedule::kCoop) {
    if (coop_words > o.max_view_texels) {
      return absl::UnimplementedError("MVN partials exceed one scratch view");
    }
    plan.scratch_bytes = coop_words * 4;
    absl::StatusOr<std::array<uint32_t, 3>> grid =
        GridFor((counters + kMvnClearThreads - 1) / kMvnClearThreads, o.max_groups);
    if (!grid.ok()) return grid.status();
    Dispatch clear;
    clear.key = MvnClearKey();
    MvnArgs ca;
    ca.group_count = static_cast<uint32_t>(counters);  // words to zero
    ca.groups_x = (*grid)[0];
    clear.args = EncodeArgs(ca);
    clear.groups = *grid;
    clear.uav[1] = coop_scratch;
    plan.dispatches.push_back(std::move(clear));
    absl::StatusOr<Dispatch> d = make(KernelStage::kMvnCoop, 0, groups);
    if (!d.ok()) return d.status();
    plan.dispatches.push_back(*std::move(d));
    return plan;
  }
  // With kMvnCombine the group statistics follow the partials.
  const uint64_t scratch_words = (work_groups + (schedule.combine ? groups : 0)) * 4;
  if (scratch_words > o.max_view_texels) {
    return absl::UnimplementedError("MVN partials exceed one scratch view");
  }
  plan.scratch_bytes = scratch_words * 4;
  const uint64_t block = schedule.block_groups;
  const uint64_t per_block = schedule.combine ? 3 : 2;
  if ((groups + block - 1) / block * per_block > o.max_dispatches) {
    return absl::UnimplementedError("MVN plan exceeds the dispatch limit");
  }
  std::vector<KernelStage> stages = {KernelStage::kMvnPartial, KernelStage::kMvnApply};
  if (schedule.combine) {
    stages = {KernelStage::kMvnPartial, KernelStage::kMvnCombine, KernelStage::kMvnNormalise};
  }
  // Statistics of block k+1 run beside the normalisation of block k (same
  // barrier level); the normalisation of a block follows its statistics
  // closely enough that its reread comes from the cache.
  for (uint64_t first = 0; first < groups; first += block) {
    const uint64_t count = std::min(block, groups - first);
    for (KernelStage stage : stages) {
      absl::StatusOr<Dispatch> d = make(stage, first, count);
      if (!d.ok()) return d.status();
      plan.dispatches.push_back(*std::move(d));
    }
  }
  return plan;
}

bool FillsWideRow(uint64_t n, uint32_t element_bytes) {
  // More than 31/32 (FLOAT16) or 7/8 (FLOAT32) of the kernel's elements.
  return element_bytes == 2 ? n * 32 > uint64_t{kMvnWideRowChunk} * 31
                            : n * 8 > uint64_t{kMvnWideRowChunk} * 7;
}

MvnSchedule ChooseMvnSchedule(uint64_t groups, uint64_t n, uint32_t element_bytes,
                              const PlannerOptions& o, bool texel_runs, bool scale_or_bias,
                              bool scale_bias_texels, bool texel_span) {
  MvnSchedule s;
  const bool wide =
      o.mvn_wide_row ||
      (texel_runs && (!scale_or_bias || (scale_bias_texels && element_bytes == 2)) &&
       FillsWideRow(n, element_bytes));
  const uint64_t chunks = (n + kMvnChunk - 1) / kMvnChunk;
  const bool coop = chunks >= 2 && chunks <= std::min(o.mvn_coop_max_chunks, kMvnCoopMaxChunks);
  // The 512-thread row where groups take texel loads (with a Scale or Bias,
  // texels of those too): by words it lost to the two passes (mvn_plan.h).
  const bool medium = o.mvn_medium_row && !o.mvn_wide_row && !coop && n <= kMvnMediumRowChunk &&
                      texel_runs && (!scale_or_bias || scale_bias_texels);
  if (o.mvn_row && (n <= kMvnChunk || medium || (wide && n <= kMvnWideRowChunk))) {
    s.kind = MvnSchedule::kRow;
    s.row_bits = n <= kMvnSmallRowChunk ? kMvnVariantSmallRow
                 : n <= kMvnChunk       ? 0
                 : medium               ? kMvnVariantMediumRow
                                        : kMvnVariantWideRow;
    return s;
  }
  const uint64_t cache = o.cache_bytes != 0 ? o.cache_bytes : kAssumedCacheBytes;
  const uint64_t group_bytes = n * element_bytes;
  if (coop) {
    // The lag: groups read between a chunk's statistics and its reread,
    // with their outputs, in half the cache.
    s.kind = MvnSchedule::kCoop;
    s.block_groups = std::clamp<uint64_t>(cache / 4 / group_bytes, 1, groups);
    return s;
  }
  s.kind = MvnSchedule::kTwoPass;
  s.block_groups = groups;
  // The combine: FLOAT16 (FLOAT32 with mvn_combine_float32) from enough
  // chunks; texel-span statistics also from enough of their chunks, which
  // start up to a texel before the group, in FLOAT32 too (494 against 517
  // us at 512 x 262,143 on the H200, where FLOAT32 without long spans lost
  // with it: PlannerOptions::mvn_long_span).
  const uint64_t min = o.mvn_combine_min_chunks;
  const uint64_t span_chunks = (n + 16 / element_bytes - 1 + kMvnChunk - 1) / kMvnChunk;
  s.combine = min != 0 && ((chunks >= min && (element_bytes == 2 || o.mvn_combine_float32)) ||
                           (texel_span && o.mvn_long_span && span_chunks >= min));
  if (!o.mvn_blocked && o.mvn_block_bytes == 0) return s;
  const uint64_t budget = o.mvn_block_bytes != 0 ? o.mvn_block_bytes : cache / 4;
  if (group_bytes > budget) return s;  // a single group overflows the cache
  const uint64_t fit = budget / group_bytes;
  if (fit >= groups) return s;  // the whole tensor is one block
  s.kind = MvnSchedule::kBlocked;
  s.block_groups = fit;
  return s;
}

}  // namespace dmls::gpu
