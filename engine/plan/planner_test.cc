#include "engine/plan/planner.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <unordered_set>
#include <vector>

#include "engine/core/tensor_desc.h"
#include "engine/kernels/kernels.h"
#include "engine/kernels/mvn_kernel.h"
#include "engine/plan/mvn_plan.h"
#include "engine/plan/param_convert.h"
#include "engine/plan/plan_util.h"
#include "gtest/gtest.h"

namespace dmls::gpu {
namespace {

OperatorDesc Celu(TensorDesc in, TensorDesc out, float alpha = 1.0f) {
  OperatorDesc op;
  op.type = static_cast<uint32_t>(OperatorType::kActivationCelu);
  op.input = std::move(in);
  op.output = std::move(out);
  op.activation[0] = alpha;
  return op;
}

OperatorDesc Clip(DataType t, std::vector<uint64_t> sizes, float mn, float mx) {
  OperatorDesc op;
  op.type = static_cast<uint32_t>(OperatorType::kElementWiseClip);
  op.input = MakeTensorDesc(t, sizes);
  op.output = MakeTensorDesc(t, sizes);
  op.min = mn;
  op.max = mx;
  return op;
}

// Emulates the strided kernel's addressing on the CPU: the (input, output)
// element offsets every thread of every dispatch touches.
std::vector<std::pair<uint64_t, uint64_t>> StridedOffsets(const DispatchPlan& plan, uint32_t bits) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  const uint64_t per_word = 32 / bits;
  for (const Dispatch& d : plan.dispatches) {
    EXPECT_EQ(d.key.layout, LayoutClass::kStrided);
    const ElementwiseArgs a = DecodeElementwiseArgs(d);
    const uint32_t rank = d.key.variant;
    EXPECT_LE(uint64_t{d.groups[0]} * d.groups[1] * kElementwiseThreads - a.count + 1,
              uint64_t{d.groups[0]} * kElementwiseThreads * 1 + kElementwiseThreads * d.groups[1]);
    for (uint64_t idx = 0; idx < a.count; ++idx) {
      uint64_t rem = idx, in_off = a.in_bias, out_off = a.out_bias;
      for (uint32_t k = rank; k-- > 0;) {
        const uint64_t c = k > 0 ? rem % a.sizes[k] : rem;
        if (k > 0) rem /= a.sizes[k];
        in_off += c * a.in_strides[k];
        out_off += c * a.out_strides[k];
      }
      // Offsets must stay inside the views.
      EXPECT_LT(in_off / per_word, d.srv[0].num_elements);
      EXPECT_LT(out_off / per_word, d.uav[0].num_elements);
      out.emplace_back(d.srv[0].first_element * per_word + in_off,
                       d.uav[0].first_element * per_word + out_off);
    }
  }
  return out;
}

TEST(PlannerTest, ContiguousFloat32SingleDispatch) {
  const uint64_t n = uint64_t{1} << 27;  // 128M elements
  auto plan = PlanExecution(Celu(MakeTensorDesc(DataType::kFloat32, {n}),
                                 MakeTensorDesc(DataType::kFloat32, {n})),
                            false);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->dispatches.size(), 1u);
  const Dispatch& d = plan->dispatches[0];
  EXPECT_EQ(d.key.layout, LayoutClass::kContiguous);
  EXPECT_EQ(d.key.variant, kVariantVec4);
  EXPECT_EQ(d.srv[0].format, ViewFormat::kR32G32B32A32Uint);
  EXPECT_EQ(d.srv[0].num_elements, n / 4);
  EXPECT_EQ(d.uav[0].buffer, BufferSlot::kOutput);
  const ElementwiseArgs a = DecodeElementwiseArgs(d);
  EXPECT_EQ(a.count, n / 4);
  EXPECT_EQ(a.f[kArgP0], 1.0f);
  EXPECT_LE(d.groups[0], kMaxDispatchGroups);
  EXPECT_LE(d.groups[1], kMaxDispatchGroups);
  EXPECT_EQ(a.groups_x, d.groups[0]);
  EXPECT_GE(uint64_t{d.groups[0]} * d.groups[1] * kElementwiseThreads * kTexelsPerThread, n / 4);
}

TEST(PlannerTest, ContiguousSplitsAtViewLimitAndTail) {
  PlannerOptions o;
  o.max_view_texels = 1000;
  o.max_groups = 3;
  const uint64_t n = 4 * 2500 + 3;  // 2500 texels + 3 words
  auto plan = PlanExecution(Celu(MakeTensorDesc(DataType::kFloat32, {n}),
                                 MakeTensorDesc(DataType::kFloat32, {n})),
                            false, o);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->dispatches.size(), 4u);
  uint64_t next = 0;
  for (int i = 0; i < 3; ++i) {
    const Dispatch& d = plan->dispatches[i];
    EXPECT_EQ(d.srv[0].first_element, next);
    EXPECT_LE(d.srv[0].num_elements, 1000u);
    EXPECT_LE(d.groups[0], 3u);
    EXPECT_LE(d.groups[1], 3u);
    EXPECT_GE(uint64_t{d.groups[0]} * d.groups[1] * 512, d.srv[0].num_elements);
    next += d.srv[0].num_elements;
  }
  EXPECT_EQ(next, 2500u);
  const Dispatch& tail = plan->dispatches[3];
  EXPECT_EQ(tail.key.variant, kVariantWord);
  EXPECT_EQ(tail.srv[0].format, ViewFormat::kR32Uint);
  EXPECT_EQ(tail.srv[0].first_element, 10000u);
  EXPECT_EQ(tail.srv[0].num_elements, 3u);
}

TEST(PlannerTest, GroupLimitTooSmallFails) {
  PlannerOptions o;
  o.max_groups = 2;
  const uint64_t n = 4 * 512 * 5;  // 5 groups of 512 texels > 2*2
  auto plan = PlanExecution(Celu(MakeTensorDesc(DataType::kFloat32, {n}),
                                 MakeTensorDesc(DataType::kFloat32, {n})),
                            false, o);
  EXPECT_FALSE(plan.ok());
}

TEST(PlannerTest, Int8ClipParamsConverted) {
  auto plan = PlanExecution(Clip(DataType::kInt8, {2, 3, 5}, -3.7f, 5.9f), false);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->dispatches.size(), 1u);  // 30 bytes -> 8 words -> 2 texels
  const ElementwiseArgs a = DecodeElementwiseArgs(plan->dispatches[0]);
  EXPECT_EQ(a.i[kArgIntMin], -3);
  EXPECT_EQ(a.i[kArgIntMax], 5);
  auto plan2 = PlanExecution(Clip(DataType::kUint8, {5}, -7.9f, 300.0f), false);
  ASSERT_TRUE(plan2.ok());
  // 5 bytes -> 2 words: no full texel, only the word tail.
  ASSERT_EQ(plan2->dispatches.size(), 1u);
  EXPECT_EQ(plan2->dispatches[0].key.variant, kVariantWord);
  const ElementwiseArgs b = DecodeElementwiseArgs(plan2->dispatches[0]);
  EXPECT_EQ(b.i[kArgIntMin], 0);
  EXPECT_EQ(b.i[kArgIntMax], 255);
}

TEST(PlannerTest, Float16ParamsRounded) {
  auto plan = PlanExecution(Clip(DataType::kFloat16, {8}, 0.1f, 70000.0f), false);
  ASSERT_TRUE(plan.ok());
  const ElementwiseArgs a = DecodeElementwiseArgs(plan->dispatches[0]);
  EXPECT_EQ(a.f[kArgMin], RoundToHalf(0.1f));
  EXPECT_NE(a.f[kArgMin], 0.1f);
  EXPECT_TRUE(std::isinf(a.f[kArgMax]));
}

TEST(PlannerTest, ParamConversions) {
  EXPECT_EQ(ConvertToIntParam(300.0f, DataType::kUint8), 255);
  EXPECT_EQ(ConvertToIntParam(-7.9f, DataType::kUint8), 0);
  EXPECT_EQ(ConvertToIntParam(-2.5f, DataType::kInt8), -2);
  EXPECT_EQ(ConvertToIntParam(NAN, DataType::kInt32), 0);
  EXPECT_EQ(ConvertToIntParam(3e9f, DataType::kInt32), INT32_MAX);
  EXPECT_EQ(static_cast<uint32_t>(ConvertToIntParam(1e10f, DataType::kUint32)), UINT32_MAX);
  EXPECT_EQ(RoundToHalf(65519.0f), 65504.0f);
  EXPECT_TRUE(std::isinf(RoundToHalf(65520.0f)));
  EXPECT_EQ(RoundToHalf(1.0f + 0x1p-11f), 1.0f);  // tie to even
  EXPECT_EQ(RoundToHalf(1.0f + 3 * 0x1p-11f), 1.0f + 0x1p-9f);
  EXPECT_EQ(RoundToHalf(0x1p-25f), 0.0f);          // tie to even (0)
  EXPECT_EQ(RoundToHalf(0x1.8p-25f), 0x1p-24f);
}

TEST(PlannerTest, StridedBroadcastCoversEveryOutputOnce) {
  // Input broadcasts a row of 3 over 4 rows; output NHWC-like padded.
  TensorDesc in = MakeTensorDesc(DataType::kFloat32, {4, 3}, std::vector<uint64_t>{0, 1});
  TensorDesc out = MakeTensorDesc(DataType::kFloat32, {4, 3}, std::vector<uint64_t>{5, 1});
  auto plan = PlanExecution(Celu(in, out), false);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->dispatches.size(), 1u);
  EXPECT_EQ(plan->dispatches[0].key.variant, 2);
  auto offs = StridedOffsets(*plan, 32);
  std::set<uint64_t> outs;
  for (auto [i, o] : offs) {
    EXPECT_EQ(i, o % 5);
    outs.insert(o);
  }
  EXPECT_EQ(outs.size(), 12u);
}

TEST(PlannerTest, StridedCoalescesContiguousDims) {
  // A permuted output: dims 1 and 2 are contiguous in both tensors.
  TensorDesc in = MakeTensorDesc(DataType::kFloat16, {2, 3, 4});
  TensorDesc out = MakeTensorDesc(DataType::kFloat16, {2, 3, 4}, std::vector<uint64_t>{1, 8, 2});
  auto plan = PlanExecution(Celu(in, out), false);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->dispatches.size(), 1u);
  EXPECT_EQ(plan->dispatches[0].key.variant, 2);  // {2, 12}
  auto offs = StridedOffsets(*plan, 16);
  std::set<uint64_t> outs;
  for (auto [i, o] : offs) outs.insert(o);
  EXPECT_EQ(outs.size(), 24u);
}

TEST(PlannerTest, StridedSplitsAtViewLimit) {
  PlannerOptions o;
  o.max_view_texels = 40;  // words
  // INT8 input with padded rows: 10 rows of 30 elements, row stride 64.
  OperatorDesc op = Clip(DataType::kInt8, {10, 30}, 0, 1);
  op.input = MakeTensorDesc(DataType::kInt8, {10, 30}, std::vector<uint64_t>{64, 1});
  auto plan = PlanExecution(op, false, o);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_GT(plan->dispatches.size(), 1u);
  std::map<uint64_t, uint64_t> out_to_in;
  for (auto [i, out] : StridedOffsets(*plan, 8)) {
    EXPECT_TRUE(out_to_in.emplace(out, i).second) << "output written twice";
  }
  ASSERT_EQ(out_to_in.size(), 300u);
  for (auto [out, in] : out_to_in) EXPECT_EQ(in, out / 30 * 64 + out % 30);
  for (const Dispatch& d : plan->dispatches) {
    EXPECT_LE(d.srv[0].num_elements, 40u);
    EXPECT_LE(d.uav[0].num_elements, 40u);
  }
}

TEST(PlannerTest, StridedSplitRecursesIntoInnerDims) {
  PlannerOptions o;
  o.max_view_texels = 8;
  // One row alone (stride 100 between elements) spans far more than 8 words.
  OperatorDesc op = Celu(MakeTensorDesc(DataType::kFloat32, {3, 4, 2},
                                        std::vector<uint64_t>{1, 3, 12}),
                         MakeTensorDesc(DataType::kFloat32, {3, 4, 2}));
  auto plan = PlanExecution(op, false, o);
  ASSERT_TRUE(plan.ok()) << plan.status();
  std::set<uint64_t> outs;
  for (auto [i, out] : StridedOffsets(*plan, 32)) {
    EXPECT_TRUE(outs.insert(out).second);
    const uint64_t a = out / 8, b = out / 2 % 4, c = out % 2;
    EXPECT_EQ(i, a + 3 * b + 12 * c);
  }
  EXPECT_EQ(outs.size(), 24u);
}

TEST(PlannerTest, UnsupportedOperatorIsUnimplemented) {
  OperatorDesc op = Celu(MakeTensorDesc(DataType::kFloat32, {4}), MakeTensorDesc(DataType::kFloat32, {4}));
  op.type = static_cast<uint32_t>(OperatorType::kActivationSoftmax);
  auto plan = PlanExecution(op, false);
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kUnimplemented);
}

TEST(PlannerTest, EveryPlannedKeyIsInAllKernelKeys) {
  std::vector<KernelKey> all = AllKernelKeys();
  auto known = [&](const KernelKey& k) {
    for (const KernelKey& a : all) {
      if (a == k) return true;
    }
    return false;
  };
  for (DataType t : {DataType::kFloat32, DataType::kFloat16, DataType::kInt8, DataType::kUint16,
                     DataType::kInt32}) {
    for (bool strided : {false, true}) {
      OperatorDesc op = Clip(t, {3, 5, 7}, -1, 1);
      op.scale_bias = ScaleBias{2.0f, 0.5f};
      if (strided) op.input = MakeTensorDesc(t, {3, 5, 7}, std::vector<uint64_t>{0, 7, 1});
      auto plan = PlanExecution(op, false);
      ASSERT_TRUE(plan.ok()) << plan.status();
      for (const Dispatch& d : plan->dispatches) EXPECT_TRUE(known(d.key)) << d.key.DebugString();
    }
  }
}

}  // namespace
}  // namespace dmls::gpu

namespace dmls::gpu {
namespace {

OperatorDesc Mvn1(TensorDesc in, std::vector<uint64_t> axes) {
  OperatorDesc op;
  op.type = static_cast<uint32_t>(OperatorType::kMeanVarianceNormalization1);
  op.output = MakeTensorDesc(in.type(), in.sizes);
  op.input = std::move(in);
  op.axes = std::move(axes);
  op.axis_count = op.axes.size();
  op.normalize_variance = 1;
  op.epsilon = 1e-5f;
  return op;
}

// Emulates the MVN kernels' addressing: for every (group, element) the input
// offset, from the apply dispatch's constant block.
std::vector<std::vector<uint64_t>> MvnGroups(const Dispatch& d) {
  const MvnArgs a = DecodeMvnArgs(d);
  const uint32_t r = d.key.variant & kMvnVariantRankMask;
  std::vector<std::vector<uint64_t>> groups(a.group_count);
  for (uint64_t g = 0; g < a.group_count; ++g) {
    uint64_t rem = g, base = 0;
    for (uint32_t k = kMaxRank - r; k-- > 0;) {
      const uint64_t c = k > 0 ? rem % a.sizes[k] : rem;
      if (k > 0) rem /= a.sizes[k];
      base += c * a.in_strides[k];
    }
    for (uint64_t n = 0; n < a.n; ++n) {
      uint64_t nr = n, off = base;
      for (uint32_t k = kMaxRank; k-- > kMaxRank - r;) {
        const uint64_t c = k > kMaxRank - r ? nr % a.sizes[k] : nr;
        if (k > kMaxRank - r) nr /= a.sizes[k];
        off += c * a.in_strides[k];
      }
      groups[g].push_back(off);
    }
  }
  return groups;
}

TEST(MvnPlannerTest, LayerNormShapeTwoPassWhenARowExceedsTheBlock) {
  PlannerOptions o;
  o.mvn_block_bytes = 512 << 10;  // a 1 MiB row does not fit: today's two passes
  o.mvn_combine_min_chunks = 0;   // each normalisation workgroup combines (kMvnApply)
  o.mvn_texel_span_float32 = false;  // partials of words
  auto plan =
      PlanExecution(Mvn1(MakeTensorDesc(DataType::kFloat32, {512, 262143}), {1}), false, o);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->dispatches.size(), 2u);
  const Dispatch& p = plan->dispatches[0];
  const Dispatch& a = plan->dispatches[1];
  EXPECT_EQ(p.key.stage, KernelStage::kMvnPartial);
  EXPECT_EQ(a.key.stage, KernelStage::kMvnApply);
  EXPECT_FALSE(p.barrier_before);
  EXPECT_TRUE(a.barrier_before);
  EXPECT_EQ(p.key.variant, 1);
  const MvnArgs args = DecodeMvnArgs(a);
  EXPECT_EQ(args.n, 262143u);
  EXPECT_EQ(args.group_count, 512u);
  EXPECT_EQ(args.first_group, 0u);
  EXPECT_EQ(args.chunks, (262143u + kMvnChunk - 1) / kMvnChunk);
  EXPECT_EQ(args.sizes[7], 262143u);
  EXPECT_EQ(args.in_strides[7], 1u);
  EXPECT_EQ(args.sizes[6], 512u);
  EXPECT_EQ(args.in_strides[6], 262143u);
  EXPECT_EQ(plan->scratch_bytes, uint64_t{512} * args.chunks * 16);
  EXPECT_EQ(a.uav[1].buffer, BufferSlot::kScratch);
  EXPECT_EQ(a.uav[1].format, ViewFormat::kR32Float);
  EXPECT_EQ(a.srv[0].num_elements, 512u * 262143u);
  EXPECT_EQ(args.epsilon, 1e-5f);
  EXPECT_LE(uint64_t{a.groups[0]} * a.groups[1], uint64_t{65535} * 65535);
  EXPECT_GE(uint64_t{a.groups[0]} * a.groups[1], uint64_t{512} * args.chunks);
}

// From mvn_combine_min_chunks chunks a group (16 by default) a kMvnCombine
// dispatch, one workgroup per group, combines the partials once into the
// group statistics after them in scratch, and kMvnNormalise reads those.
TEST(MvnPlannerTest, CombineDispatchFromEnoughChunks) {
  PlannerOptions o;
  o.mvn_long_span = false;        // kMvnChunk partials (long spans below)
  o.mvn_span_normalise = false;   // word normalisation (texels below)
  const OperatorDesc op = Mvn1(MakeTensorDesc(DataType::kFloat16, {512, 262143}), {1});
  auto plan = PlanExecution(op, false, o);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->mvn_schedule.kind, MvnSchedule::kTwoPass);
  EXPECT_TRUE(plan->mvn_schedule.combine);
  ASSERT_EQ(plan->dispatches.size(), 3u);
  const Dispatch& p = plan->dispatches[0];
  const Dispatch& c = plan->dispatches[1];
  const Dispatch& a = plan->dispatches[2];
  EXPECT_EQ(p.key.stage, KernelStage::kMvnPartial);
  EXPECT_EQ(c.key, MvnCombineKey(true));
  EXPECT_EQ(a.key.stage, KernelStage::kMvnNormalise);
  EXPECT_EQ(a.key.data_type, DataType::kFloat16);
  EXPECT_FALSE(p.barrier_before);
  EXPECT_TRUE(c.barrier_before);
  EXPECT_TRUE(a.barrier_before);
  // Texel-span statistics (kMvnVariantTexelSpan): up to 7 elements of the
  // texel before a group's first take one more chunk.
  EXPECT_EQ(p.key.variant, 1 | kMvnVariantTexelSpan);
  EXPECT_EQ(p.srv[0].format, ViewFormat::kR32G32B32A32Uint);
  EXPECT_EQ(p.srv[0].num_elements, 512u * 262143u * 2 / 16);
  EXPECT_EQ(a.srv[0].format, ViewFormat::kR32Uint);
  const uint32_t chunks = (262143u + 7 + kMvnChunk - 1) / kMvnChunk;
  EXPECT_EQ(chunks, 65u);
  const MvnArgs ca = DecodeMvnArgs(c), aa = DecodeMvnArgs(a);
  EXPECT_EQ(ca.group_count, 512u);
  EXPECT_EQ(ca.chunks, chunks);
  EXPECT_EQ(ca.partials_word, 512u * chunks * 4);
  EXPECT_EQ(aa.partials_word, ca.partials_word);
  EXPECT_EQ(uint64_t{c.groups[0]} * c.groups[1], 512u);  // one workgroup per group
  EXPECT_GE(uint64_t{a.groups[0]} * a.groups[1], uint64_t{512} * chunks);
  EXPECT_EQ(plan->scratch_bytes, (uint64_t{512} * chunks + 512) * 16);
  EXPECT_EQ(c.uav[1].num_elements, (512u * chunks + 512) * 4);
  EXPECT_EQ(a.uav[1].num_elements, c.uav[1].num_elements);
  EXPECT_EQ(c.srv[0].num_elements, 0u);  // reads scratch alone
  {
    // Long spans: the statistics and the combine count 33 partials of
    // kMvnLongSpanChunk; the normalisation keeps its 65 chunks.
    PlannerOptions lo = o;
    lo.mvn_long_span = true;
    absl::StatusOr<DispatchPlan> lp = PlanExecution(op, false, lo);
    ASSERT_TRUE(lp.ok()) << lp.status();
    ASSERT_EQ(lp->dispatches.size(), 3u);
    const uint32_t long_chunks = (262143u + 7 + kMvnLongSpanChunk - 1) / kMvnLongSpanChunk;
    EXPECT_EQ(long_chunks, 33u);
    const Dispatch& lpart = lp->dispatches[0];
    EXPECT_EQ(lpart.key.variant, 1 | kMvnVariantTexelSpan | kMvnVariantLongSpan);
    EXPECT_EQ(DecodeMvnArgs(lpart).chunks, long_chunks);
    EXPECT_GE(uint64_t{lpart.groups[0]} * lpart.groups[1], uint64_t{512} * long_chunks);
    EXPECT_LT(uint64_t{lpart.groups[0]} * lpart.groups[1], uint64_t{512} * chunks);
    EXPECT_EQ(DecodeMvnArgs(lp->dispatches[1]).chunks, long_chunks);
    const MvnArgs la = DecodeMvnArgs(lp->dispatches[2]);
    EXPECT_EQ(la.chunks, chunks);
    EXPECT_EQ(la.partials_word, 512u * long_chunks * 4);
    EXPECT_EQ(DecodeMvnArgs(lp->dispatches[1]).partials_word, la.partials_word);
    EXPECT_EQ(lp->scratch_bytes, (uint64_t{512} * long_chunks + 512) * 16);
    // The normalisation by texels of the tensor: its chunks and grid as
    // by words, its input and output as texel views.
    lo.mvn_span_normalise = true;
    lp = PlanExecution(op, false, lo);
    ASSERT_TRUE(lp.ok()) << lp.status();
    ASSERT_EQ(lp->dispatches.size(), 3u);
    const Dispatch& ln = lp->dispatches[2];
    EXPECT_EQ(ln.key.stage, KernelStage::kMvnNormalise);
    EXPECT_EQ(ln.key.variant, 1 | kMvnVariantTexelSpan);
    EXPECT_EQ(DecodeMvnArgs(ln).chunks, chunks);
    EXPECT_EQ(ln.srv[0].format, ViewFormat::kR32G32B32A32Uint);
    EXPECT_EQ(ln.uav[0].format, ViewFormat::kR32G32B32A32Uint);
    EXPECT_EQ(ln.uav[0].num_elements, 512u * 262143u * 2 / 16);
    // With a Bias too (by element, its word view); not with padded rows.
    OperatorDesc biased = op;
    biased.bias = MakeTensorDesc(DataType::kFloat16, {512, 1});
    lp = PlanExecution(biased, false, lo);
    ASSERT_TRUE(lp.ok()) << lp.status();
    EXPECT_EQ(lp->dispatches.back().key.variant, 1 | kMvnVariantTexelSpan);
    EXPECT_TRUE(lp->dispatches.back().key.has_bias);
    EXPECT_EQ(lp->dispatches.back().srv[2].format, ViewFormat::kR32Uint);
    OperatorDesc padded = op;
    padded.input = MakeTensorDesc(DataType::kFloat16, {512, 262143}, std::vector<uint64_t>{262151, 1});
    lp = PlanExecution(padded, false, lo);
    ASSERT_TRUE(lp.ok()) << lp.status();
    EXPECT_EQ(lp->dispatches.back().key.variant & kMvnVariantTexelSpan, 0);
  }
  // Below the threshold, or with it 0: each normalisation workgroup combines.
  o.mvn_combine_min_chunks = chunks + 1;
  plan = PlanExecution(op, false, o);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_FALSE(plan->mvn_schedule.combine);
  ASSERT_EQ(plan->dispatches.size(), 2u);
  EXPECT_EQ(plan->dispatches[1].key.stage, KernelStage::kMvnApply);
  EXPECT_EQ(plan->scratch_bytes, uint64_t{512} * chunks * 16);
  // Blocked: a triple per block, group statistics at the global group.
  o.mvn_combine_min_chunks = 2;
  o.mvn_block_bytes = 2 * 262143 * 2;
  plan = PlanExecution(op, false, o);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->mvn_schedule.kind, MvnSchedule::kBlocked);
  ASSERT_EQ(plan->dispatches.size(), 3u * 256);
  const MvnArgs last = DecodeMvnArgs(plan->dispatches[3 * 255 + 1]);
  EXPECT_EQ(plan->dispatches[3 * 255 + 1].key.stage, KernelStage::kMvnCombine);
  EXPECT_EQ(last.first_group, 510u);
  EXPECT_EQ(last.group_count, 2u);
  EXPECT_EQ(last.partials_word, 512u * chunks * 4);
  // Without texel spans: 64 chunks, a word per pair.
  o.mvn_texel_span = false;
  plan = PlanExecution(op, false, o);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->dispatches[0].key.variant, 1);
  EXPECT_EQ(DecodeMvnArgs(plan->dispatches[0]).chunks, 64u);
  EXPECT_EQ(plan->dispatches[0].srv[0].format, ViewFormat::kR32Uint);
  // FLOAT32 combines where its statistics take long spans (the default),
  // else only when asked (it lost on the H200 with word statistics).
  const OperatorDesc op32 = Mvn1(MakeTensorDesc(DataType::kFloat32, {512, 262143}), {1});
  o = PlannerOptions();
  plan = PlanExecution(op32, false, o);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(plan->mvn_schedule.combine);
  ASSERT_EQ(plan->dispatches.size(), 3u);
  EXPECT_EQ(plan->dispatches[0].key.variant, 1 | kMvnVariantTexelSpan | kMvnVariantLongSpan);
  o.mvn_long_span = false;
  plan = PlanExecution(op32, false, o);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_FALSE(plan->mvn_schedule.combine);
  EXPECT_EQ(plan->dispatches[0].key.variant, 1 | kMvnVariantTexelSpan);
  o.mvn_texel_span_float32 = false;
  plan = PlanExecution(op32, false, o);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_FALSE(plan->mvn_schedule.combine);
  o.mvn_combine_float32 = true;
  plan = PlanExecution(op32, false, o);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(plan->mvn_schedule.combine);
  ASSERT_EQ(plan->dispatches.size(), 3u);
  EXPECT_EQ(plan->dispatches[2].key.data_type, DataType::kFloat32);
}

// Blocked plan: (partial, apply) pairs over consecutive row blocks that
// cover every group once, or (partial, combine, normalise) triples where the
// schedule combines; each apply, combine and normalise follows a barrier,
// each partial does not (it runs beside the previous block's apply).
void ExpectBlocked(const DispatchPlan& plan, uint32_t groups, uint32_t block) {
  const bool combine = plan.mvn_schedule.combine;
  const size_t per = combine ? 3 : 2;
  ASSERT_EQ(plan.dispatches.size(), per * ((groups + block - 1) / block));
  uint32_t next = 0;
  for (size_t i = 0; i < plan.dispatches.size(); i += per) {
    const Dispatch& p = plan.dispatches[i];
    const Dispatch& a = plan.dispatches[i + per - 1];
    EXPECT_EQ(p.key.stage, KernelStage::kMvnPartial);
    EXPECT_EQ(a.key.stage, combine ? KernelStage::kMvnNormalise : KernelStage::kMvnApply);
    EXPECT_FALSE(p.barrier_before);
    EXPECT_TRUE(a.barrier_before);
    const MvnArgs pa = DecodeMvnArgs(p), aa = DecodeMvnArgs(a);
    if (combine) {
      const Dispatch& c = plan.dispatches[i + 1];
      EXPECT_EQ(c.key.stage, KernelStage::kMvnCombine);
      EXPECT_TRUE(c.barrier_before);
      const MvnArgs ca = DecodeMvnArgs(c);
      EXPECT_EQ(ca.first_group, next);
      EXPECT_EQ(ca.group_count, pa.group_count);
      EXPECT_EQ(ca.partials_word, groups * pa.chunks * 4);
    }
    EXPECT_EQ(pa.first_group, next);
    EXPECT_EQ(aa.first_group, next);
    EXPECT_EQ(pa.group_count, std::min(block, groups - next));
    EXPECT_EQ(aa.group_count, pa.group_count);
    EXPECT_GE(uint64_t{p.groups[0]} * p.groups[1], uint64_t{pa.group_count} * pa.chunks);
    EXPECT_LT(uint64_t{p.groups[0]} * (p.groups[1] - 1), uint64_t{pa.group_count} * pa.chunks);
    // Global scratch: every partial, then (combining) every group statistic.
    EXPECT_EQ(p.uav[1].num_elements, (uint64_t{groups} * pa.chunks + (combine ? groups : 0)) * 4);
    next += pa.group_count;
  }
  EXPECT_EQ(next, groups);
}

TEST(MvnPlannerTest, LayerNormShapeBlockedByCache) {
  const OperatorDesc op = Mvn1(MakeTensorDesc(DataType::kFloat32, {512, 262143}), {1});
  PlannerOptions o;
  // By default: the two passes (blocked was slower on the H100).
  auto plan = PlanExecution(op, false, o);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ExpectBlocked(*plan, 512, 512);
  o.mvn_blocked = true;  // cache unknown: kAssumedCacheBytes, blocks of a quarter
  plan = PlanExecution(op, false, o);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ExpectBlocked(*plan, 512, static_cast<uint32_t>(kAssumedCacheBytes / 4 / (262143 * 4)));
  // Long-span partials (up to 3 elements of the texel before a group's
  // first take one more), then the group statistics.
  const uint64_t long_chunks = (262143 + 3 + kMvnLongSpanChunk - 1) / kMvnLongSpanChunk;
  EXPECT_EQ(plan->scratch_bytes, (uint64_t{512} * long_chunks + 512) * 16);
  o.cache_bytes = 50ull << 20;  // H100
  plan = PlanExecution(op, false, o);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ExpectBlocked(*plan, 512, 12);
  o.mvn_block_bytes = 5ull << 19;  // explicit block budget (2.5 MiB): 2 rows
  plan = PlanExecution(op, false, o);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ExpectBlocked(*plan, 512, 2);
  // A tensor within one block: one pair (two-pass).
  o.mvn_block_bytes = 1ull << 30;
  plan = PlanExecution(op, false, o);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ExpectBlocked(*plan, 512, 512);
}

TEST(MvnPlannerTest, DefaultsAreTheFastestOnTheH100) {
  // Measured on the H100 (docs/PERFORMANCE.md): the wide row kernel and the
  // blocked schedule lost to the two passes, the smaller row kernels won.
  PlannerOptions o;
  o.cache_bytes = 50ull << 20;
  EXPECT_EQ(ChooseMvnSchedule(4096, 32768, 4, o).kind, MvnSchedule::kTwoPass);
  EXPECT_EQ(ChooseMvnSchedule(512, 262143, 4, o).kind, MvnSchedule::kTwoPass);
  EXPECT_EQ(ChooseMvnSchedule(4096, 65536, 2, o).kind, MvnSchedule::kTwoPass);
  EXPECT_EQ(ChooseMvnSchedule(65536, 1024, 4, o).kind, MvnSchedule::kRow);
  EXPECT_EQ(ChooseMvnSchedule(65536, kMvnChunk, 4, o).kind, MvnSchedule::kRow);
  EXPECT_EQ(ChooseMvnSchedule(65536, kMvnChunk + 1, 4, o).kind, MvnSchedule::kTwoPass);
  // Groups that take texel loads: the wide row kernel up to 32,768.
  EXPECT_EQ(ChooseMvnSchedule(4096, 32768, 4, o, true).kind, MvnSchedule::kRow);
  EXPECT_EQ(ChooseMvnSchedule(4096, 32768, 2, o, true).row_bits, kMvnVariantWideRow);
  EXPECT_EQ(ChooseMvnSchedule(64, kMvnWideRowChunk + 4, 4, o, true).kind, MvnSchedule::kTwoPass);
  // With a Scale or Bias by words the wide row lost to the two passes, and
  // the 64-thread row still won at 65,536 x 1,024 (run 15; the 256-thread
  // row was not measured with them and keeps its place).
  EXPECT_EQ(ChooseMvnSchedule(4096, 32768, 4, o, true, true).kind, MvnSchedule::kTwoPass);
  EXPECT_EQ(ChooseMvnSchedule(4096, 32768, 2, o, true, true).kind, MvnSchedule::kTwoPass);
  EXPECT_EQ(ChooseMvnSchedule(65536, 1024, 2, o, true, true).row_bits, kMvnVariantSmallRow);
  EXPECT_EQ(ChooseMvnSchedule(65536, kMvnChunk, 4, o, true, true).kind, MvnSchedule::kRow);
  // With Scale/Bias texels the wide row won for FLOAT16 only (run 21).
  EXPECT_EQ(ChooseMvnSchedule(4096, 32768, 2, o, true, true, true).row_bits, kMvnVariantWideRow);
  EXPECT_EQ(ChooseMvnSchedule(4096, 32768, 4, o, true, true, true).kind, MvnSchedule::kTwoPass);
  EXPECT_EQ(ChooseMvnSchedule(16384, 4096, 4, o, true, true, true).row_bits, 0);
}

TEST(MvnPlannerTest, CombineDecidedByTheScheduleAlone) {
  // FLOAT16 combines from 16 chunks; FLOAT32 only with texel-span
  // statistics and long spans, counting the chunks from a texel before
  // the group (16 of them from 61,438 elements: 3 lead + 61,438 > 15 x
  // 4,096).
  PlannerOptions o;
  o.cache_bytes = 50ull << 20;
  EXPECT_TRUE(ChooseMvnSchedule(512, 262143, 2, o).combine);
  EXPECT_FALSE(ChooseMvnSchedule(512, 262143, 4, o).combine);
  EXPECT_TRUE(ChooseMvnSchedule(512, 262143, 4, o, false, false, false, true).combine);
  EXPECT_FALSE(ChooseMvnSchedule(512, 61437, 4, o, false, false, false, true).combine);
  EXPECT_TRUE(ChooseMvnSchedule(512, 61438, 4, o, false, false, false, true).combine);
  EXPECT_FALSE(ChooseMvnSchedule(512, 61438, 4, o).combine);
  PlannerOptions no_long = o;
  no_long.mvn_long_span = false;
  EXPECT_FALSE(ChooseMvnSchedule(512, 262143, 4, no_long, false, false, false, true).combine);
  EXPECT_TRUE(ChooseMvnSchedule(512, 262143, 2, no_long, false, false, false, true).combine);
  PlannerOptions never = o;
  never.mvn_combine_min_chunks = 0;
  EXPECT_FALSE(ChooseMvnSchedule(512, 262143, 2, never, false, false, false, true).combine);
}

TEST(MvnPlannerTest, MediumRowForTexelGroupsUpTo8192) {
  // The 512-thread row won over the two passes with texel loads (and
  // Scale/Bias texels) and lost by words (mvn_plan.h, ChooseMvnSchedule).
  PlannerOptions o;
  o.cache_bytes = 50ull << 20;
  for (uint32_t bytes : {2u, 4u}) {
    for (uint64_t n : {kMvnChunk + 8, 6144u, kMvnMediumRowChunk}) {
      EXPECT_EQ(ChooseMvnSchedule(4096, n, bytes, o, true).row_bits, kMvnVariantMediumRow) << n;
      EXPECT_EQ(ChooseMvnSchedule(4096, n, bytes, o, true, true, true).row_bits,
                kMvnVariantMediumRow)
          << n;
      // Words, or a Scale/Bias by words: the two passes.
      EXPECT_EQ(ChooseMvnSchedule(4096, n, bytes, o).kind, MvnSchedule::kTwoPass) << n;
      EXPECT_EQ(ChooseMvnSchedule(4096, n, bytes, o, true, true).kind, MvnSchedule::kTwoPass)
          << n;
    }
    EXPECT_EQ(ChooseMvnSchedule(4096, kMvnChunk, bytes, o, true).row_bits, 0);
    EXPECT_EQ(ChooseMvnSchedule(4096, kMvnMediumRowChunk + 8, bytes, o, true).kind,
              MvnSchedule::kTwoPass);
  }
  // Off, the cooperative schedule asked for, or the wide row forced.
  PlannerOptions off = o;
  off.mvn_medium_row = false;
  EXPECT_EQ(ChooseMvnSchedule(4096, 8192, 2, off, true).kind, MvnSchedule::kTwoPass);
  PlannerOptions coop = o;
  coop.mvn_coop_max_chunks = 2;
  EXPECT_EQ(ChooseMvnSchedule(4096, 8192, 2, coop, true).kind, MvnSchedule::kCoop);
  PlannerOptions wide = o;
  wide.mvn_wide_row = true;
  EXPECT_EQ(ChooseMvnSchedule(4096, 8192, 2, wide, true).row_bits, kMvnVariantWideRow);
}

TEST(MvnPlannerTest, WideRowOnlyWhereItsGroupsFillIt) {
  // The wide row lost to the two passes below 31/32 (FLOAT16) or 7/8
  // (FLOAT32) of its 32,768 elements on the H200 (FillsWideRow).
  PlannerOptions o;
  o.cache_bytes = 50ull << 20;
  for (uint64_t n : {8192u + 8, 16384u, 24576u + 8, 28672u, 31744u}) {
    EXPECT_EQ(ChooseMvnSchedule(4096, n, 2, o, true).kind, MvnSchedule::kTwoPass) << n;
  }
  EXPECT_EQ(ChooseMvnSchedule(4096, 31744 + 8, 2, o, true).row_bits, kMvnVariantWideRow);
  EXPECT_EQ(ChooseMvnSchedule(4096, 32768, 2, o, true).row_bits, kMvnVariantWideRow);
  EXPECT_EQ(ChooseMvnSchedule(4096, 32768, 2, o, true, true, true).row_bits,
            kMvnVariantWideRow);
  EXPECT_EQ(ChooseMvnSchedule(4096, 32768, 2, o, true, true, false).kind,
            MvnSchedule::kTwoPass);
  for (uint64_t n : {8192u + 4, 24576u, 28672u}) {
    EXPECT_EQ(ChooseMvnSchedule(4096, n, 4, o, true).kind, MvnSchedule::kTwoPass) << n;
  }
  EXPECT_EQ(ChooseMvnSchedule(4096, 28672 + 4, 4, o, true).row_bits, kMvnVariantWideRow);
  // PlannerOptions::mvn_wide_row still forces it.
  o.mvn_wide_row = true;
  EXPECT_EQ(ChooseMvnSchedule(4096, 8192, 2, o, true).row_bits, kMvnVariantWideRow);
  EXPECT_EQ(ChooseMvnSchedule(4096, kMvnChunk + 1, 4, o).row_bits, kMvnVariantWideRow);
}

TEST(MvnPlannerTest, BenchmarkShapesChooseTheirSchedules) {
  PlannerOptions h100;
  h100.cache_bytes = 50ull << 20;
  h100.mvn_wide_row = true;  // the schedules that are off by default
  h100.mvn_blocked = true;
  // 4,096 x 32,768: one 1,024-thread workgroup per row, row in registers.
  EXPECT_EQ(ChooseMvnSchedule(4096, 32768, 4, h100).kind, MvnSchedule::kRow);
  // 4,096 x 65,536: 256 KiB rows, blocks of 50 rows.
  EXPECT_EQ(ChooseMvnSchedule(4096, 65536, 4, h100).kind, MvnSchedule::kBlocked);
  EXPECT_EQ(ChooseMvnSchedule(4096, 65536, 4, h100).block_groups, 50u);
  EXPECT_EQ(ChooseMvnSchedule(4096, 65536, 2, h100).block_groups, 100u);
  // 65,536 x 1,024: one workgroup per row.
  EXPECT_EQ(ChooseMvnSchedule(65536, 1024, 4, h100).kind, MvnSchedule::kRow);
  EXPECT_EQ(ChooseMvnSchedule(65536, 1024, 4, h100).row_bits, kMvnVariantSmallRow);
  EXPECT_EQ(ChooseMvnSchedule(65536, kMvnSmallRowChunk + 1, 4, h100).row_bits, 0);
  EXPECT_EQ(ChooseMvnSchedule(65536, kMvnChunk + 1, 4, h100).row_bits, kMvnVariantWideRow);
  EXPECT_EQ(ChooseMvnSchedule(4096, 32768, 4, h100).row_bits, kMvnVariantWideRow);
  EXPECT_EQ(ChooseMvnSchedule(1, kMvnChunk, 4, h100).kind, MvnSchedule::kRow);
  EXPECT_EQ(ChooseMvnSchedule(1, kMvnWideRowChunk, 4, h100).kind, MvnSchedule::kRow);
  PlannerOptions no_row = h100;
  no_row.mvn_row = false;
  EXPECT_EQ(ChooseMvnSchedule(1, 1000, 4, no_row).kind, MvnSchedule::kTwoPass);
  EXPECT_EQ(ChooseMvnSchedule(4096, 32768, 4, no_row).kind, MvnSchedule::kBlocked);
  EXPECT_NE(ChooseMvnSchedule(1, kMvnWideRowChunk + 1, 4, h100).kind, MvnSchedule::kRow);
  // One huge group: two passes.
  EXPECT_EQ(ChooseMvnSchedule(1, 1u << 27, 4, h100).kind, MvnSchedule::kTwoPass);
  auto plan = PlanExecution(Mvn1(MakeTensorDesc(DataType::kFloat32, {65536, 1024}), {1}), false,
                            h100);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->dispatches.size(), 1u);
  const Dispatch& d = plan->dispatches[0];
  EXPECT_EQ(d.key.stage, KernelStage::kMvnRow);
  EXPECT_EQ(d.key.variant, 1 | kMvnVariantSmallRow | kMvnVariantVec4);
  EXPECT_EQ(plan->scratch_bytes, 0u);
  EXPECT_EQ(d.uav[1].buffer, BufferSlot::kNone);
  EXPECT_EQ(d.uav[0].buffer, BufferSlot::kOutput);
  EXPECT_EQ(uint64_t{d.groups[0]} * d.groups[1], 65536u);
  EXPECT_EQ(DecodeMvnArgs(d).group_count, 65536u);
  plan = PlanExecution(Mvn1(MakeTensorDesc(DataType::kFloat32, {4096, 32768}), {1}), false, h100);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->dispatches.size(), 1u);
  EXPECT_EQ(plan->dispatches[0].key.variant, 1 | kMvnVariantWideRow | kMvnVariantVec4);
  EXPECT_EQ(DecodeMvnArgs(plan->dispatches[0]).chunks, 1u);
  EXPECT_EQ(uint64_t{plan->dispatches[0].groups[0]} * plan->dispatches[0].groups[1], 4096u);
  plan = PlanExecution(Mvn1(MakeTensorDesc(DataType::kFloat32, {2048, 65536}), {1}), false, h100);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ExpectBlocked(*plan, 2048, 50);
}

// Whether every dispatch of `plan` loads whole texels (kMvnVariantVec4),
// with R32G32B32A32_UINT views of the input and output, and none otherwise;
// Scale/Bias views are texels exactly where kMvnVariantVec4ScaleBias says.
bool AllVec4(const DispatchPlan& plan) {
  bool all = true;
  for (const Dispatch& d : plan.dispatches) {
    const bool v = (d.key.variant & kMvnVariantVec4) != 0;
    if (d.key.stage == KernelStage::kMvnClear) {
      all = false;
      continue;
    }
    if (d.key.stage == KernelStage::kMvnCombine) continue;  // scratch alone
    // kMvnVariantTexelSpan: statistics from texels of the whole input, and
    // the normalisation by texels of the tensor.
    const bool span = (d.key.stage == KernelStage::kMvnPartial ||
                       d.key.stage == KernelStage::kMvnNormalise) &&
                      (d.key.variant & kMvnVariantTexelSpan) != 0;
    EXPECT_EQ(d.srv[0].format,
              v || span ? ViewFormat::kR32G32B32A32Uint : ViewFormat::kR32Uint);
    if (d.uav[0].buffer != BufferSlot::kNone) {
      EXPECT_EQ(d.uav[0].format,
                v || span ? ViewFormat::kR32G32B32A32Uint : ViewFormat::kR32Uint);
    }
    const ViewFormat sb = (d.key.variant & kMvnVariantVec4ScaleBias) != 0
                              ? ViewFormat::kR32G32B32A32Uint
                              : ViewFormat::kR32Uint;
    for (size_t i : {1, 2}) {
      EXPECT_EQ(d.srv[i].format, d.srv[i].buffer == BufferSlot::kNone ? ViewFormat::kUnknown : sb);
    }
    all = all && v;
  }
  return all;
}

TEST(MvnPlannerTest, Vec4WhereGroupsAreWholeTexels) {
  const std::vector<KernelKey> keys = AllKernelKeys();
  PlannerOptions wide;
  wide.mvn_wide_row = true;
  struct Case {
    DataType t;
    std::vector<uint64_t> sizes;
    PlannerOptions o;
    KernelStage stage;
    uint32_t view_texels;
  };
  const Case cases[] = {
      {DataType::kFloat32, {65536, 1024}, {}, KernelStage::kMvnRow, 65536 * 1024 / 4},
      {DataType::kFloat16, {65536, 1024}, {}, KernelStage::kMvnRow, 65536 * 1024 / 8},
      // Texel loads take the wide row kernel by default, with a Scale only
      // FLOAT16 (MvnPlannerTest.DefaultsAreTheFastestOnTheH100).
      {DataType::kFloat16, {4096, 32768}, {}, KernelStage::kMvnRow, 4096 * 32768 / 8},
      {DataType::kFloat32, {4096, 32768}, {}, KernelStage::kMvnPartial, 4096 * 32768 / 4},
      {DataType::kFloat16, {64, 65536}, {}, KernelStage::kMvnPartial, 64 * 65536 / 8},
      {DataType::kFloat32, {4096, 32768}, wide, KernelStage::kMvnRow, 4096 * 32768 / 4},
      {DataType::kFloat32, {5, 1000}, {}, KernelStage::kMvnRow, 1250},  // not whole runs of 16
      {DataType::kFloat16, {3, 8}, {}, KernelStage::kMvnRow, 3},        // one texel a group
  };
  for (const Case& c : cases) {
    OperatorDesc op = Mvn1(MakeTensorDesc(c.t, c.sizes), {1});
    op.scale = MakeTensorDesc(c.t, {1, c.sizes[1]});  // Scale texels too
    auto plan = PlanExecution(op, false, c.o);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_TRUE(AllVec4(*plan)) << c.sizes[1];
    EXPECT_EQ(plan->dispatches[0].key.stage, c.stage);
    EXPECT_EQ(plan->dispatches[0].srv[0].num_elements, c.view_texels);
    EXPECT_EQ(plan->dispatches.back().uav[0].num_elements, c.view_texels);
    for (const Dispatch& d : plan->dispatches) {
      EXPECT_NE(std::find(keys.begin(), keys.end(), d.key), keys.end()) << d.key.DebugString();
      EXPECT_TRUE(BuildKernel(d.key).ok()) << d.key.DebugString();
    }
    PlannerOptions off = c.o;
    off.mvn_vec4 = false;  // today's kernels
    plan = PlanExecution(op, false, off);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_FALSE(AllVec4(*plan));
  }
  // Blocked: every block's pair of dispatches.
  PlannerOptions blocked;
  blocked.mvn_block_bytes = 320000;  // two groups of 40,000 FLOAT32
  auto plan = PlanExecution(Mvn1(MakeTensorDesc(DataType::kFloat32, {9, 40000}), {1}), false,
                            blocked);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->dispatches.size(), 10u);
  EXPECT_TRUE(AllVec4(*plan));
  // Padded groups whose starts stay 16-byte aligned (stride 1,004 FLOAT32).
  OperatorDesc op = Mvn1(MakeTensorDesc(DataType::kFloat32, {4, 1000}), {1});
  op.output = MakeTensorDesc(DataType::kFloat32, {4, 1000}, std::vector<uint64_t>{1004, 1});
  plan = PlanExecution(op, false);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(AllVec4(*plan));
  EXPECT_EQ(plan->dispatches[0].uav[0].num_elements, (3 * 1004 + 1000) / 4);
}

// kMvnVariantVec4ScaleBias: where every Scale/Bias present is packed over
// the reduced dimensions and its groups start at whole texels, in the
// normalising kernels (not the statistics, which read neither).
TEST(MvnPlannerTest, ScaleAndBiasTexelsWherePackedLikeTheInput) {
  const std::vector<KernelKey> keys = AllKernelKeys();
  auto sb_texels = [&](const OperatorDesc& op, const PlannerOptions& o = {}) {
    auto plan = PlanExecution(op, false, o);
    EXPECT_TRUE(plan.ok()) << plan.status();
    if (!plan.ok()) return false;
    AllVec4(*plan);  // views against the key bits
    bool any = false;
    for (const Dispatch& d : plan->dispatches) {
      const bool sb = (d.key.variant & kMvnVariantVec4ScaleBias) != 0;
      EXPECT_TRUE(!sb || d.key.stage != KernelStage::kMvnPartial) << d.key.DebugString();
      EXPECT_NE(std::find(keys.begin(), keys.end(), d.key), keys.end()) << d.key.DebugString();
      any = any || sb;
    }
    return any;
  };
  auto mvn1 = [](DataType t, const std::vector<uint64_t>& sizes,
                 std::optional<std::vector<uint64_t>> scale,
                 std::optional<std::vector<uint64_t>> bias) {
    OperatorDesc op = Mvn1(MakeTensorDesc(t, sizes), {1});
    if (scale) op.scale = MakeTensorDesc(t, *scale);
    if (bias) op.bias = MakeTensorDesc(t, *bias);
    return op;
  };
  const DataType f32 = DataType::kFloat32, f16 = DataType::kFloat16;
  // A layer norm's weight and bias, per row, scale or bias alone; row,
  // two-pass and (forced) wide row schedules.
  EXPECT_TRUE(sb_texels(mvn1(f32, {4096, 1024}, {{1, 1024}}, {{1, 1024}})));
  EXPECT_TRUE(sb_texels(mvn1(f16, {4096, 32768}, {{1, 32768}}, {{1, 32768}})));
  EXPECT_TRUE(sb_texels(mvn1(f32, {6, 40000}, {{6, 40000}}, std::nullopt)));
  EXPECT_TRUE(sb_texels(mvn1(f16, {6, 1000}, std::nullopt, {{1, 1000}})));
  PlannerOptions wide;
  wide.mvn_wide_row = true;
  EXPECT_TRUE(sb_texels(mvn1(f32, {64, 30000}, {{1, 30000}}, {{1, 30000}}), wide));
  // Not: a Bias per row (broadcast over the group), Scale per row of a
  // padded stride that breaks the texels (1,002 FLOAT32), groups not whole
  // texels, the option off, or word loads for the input.
  EXPECT_FALSE(sb_texels(mvn1(f32, {8, 1024}, {{1, 1024}}, {{8, 1}})));
  OperatorDesc padded = mvn1(f32, {8, 1000}, {{8, 1000}}, std::nullopt);
  padded.scale = MakeTensorDesc(f32, {8, 1000}, std::vector<uint64_t>{1002, 1});
  EXPECT_FALSE(sb_texels(padded));
  padded.scale = MakeTensorDesc(f32, {8, 1000}, std::vector<uint64_t>{1004, 1});
  EXPECT_TRUE(sb_texels(padded));
  EXPECT_FALSE(sb_texels(mvn1(f16, {8, 1004}, {{1, 1004}}, {{1, 1004}})));
  PlannerOptions off;
  off.mvn_vec4_scale_bias = false;
  EXPECT_FALSE(sb_texels(mvn1(f32, {4096, 1024}, {{1, 1024}}, {{1, 1024}}), off));
  off = {};
  off.mvn_vec4 = false;
  EXPECT_FALSE(sb_texels(mvn1(f32, {4096, 1024}, {{1, 1024}}, {{1, 1024}}), off));
  // A key with the bit but nothing it can apply to is not a kernel.
  KernelKey k;
  k.op = OperatorType::kMeanVarianceNormalization1;
  k.data_type = f32;
  k.layout = LayoutClass::kStrided;
  k.stage = KernelStage::kMvnApply;
  k.variant = 1 | kMvnVariantVec4 | kMvnVariantVec4ScaleBias;
  EXPECT_FALSE(BuildKernel(k).ok());  // no Scale or Bias
  k.has_scale = true;
  EXPECT_TRUE(BuildKernel(k).ok());
  k.variant = 1 | kMvnVariantVec4ScaleBias;
  EXPECT_FALSE(BuildKernel(k).ok());  // no texel loads of the input
}

TEST(MvnPlannerTest, OneWordPerElementWhereGroupsAreNotWholeTexels) {
  auto words = [](const OperatorDesc& op, const PlannerOptions& o = {}) {
    auto plan = PlanExecution(op, false, o);
    EXPECT_TRUE(plan.ok()) << plan.status();
    return plan.ok() && !AllVec4(*plan) &&
           std::none_of(plan->dispatches.begin(), plan->dispatches.end(), [](const Dispatch& d) {
             return (d.key.variant & kMvnVariantVec4) != 0;
           });
  };
  // N * element bytes not a multiple of 16.
  EXPECT_TRUE(words(Mvn1(MakeTensorDesc(DataType::kFloat32, {512, 262143}), {1})));
  EXPECT_TRUE(words(Mvn1(MakeTensorDesc(DataType::kFloat16, {4, 1004}), {1})));
  EXPECT_TRUE(words(Mvn1(MakeTensorDesc(DataType::kFloat32, {4, 1002}), {1})));
  // Packed groups, misaligned starts: input stride 1,002 or output stride 1,006.
  OperatorDesc op = Mvn1(MakeTensorDesc(DataType::kFloat32, {4, 1000}), {1});
  op.input = MakeTensorDesc(DataType::kFloat32, {4, 1000}, std::vector<uint64_t>{1002, 1});
  EXPECT_TRUE(words(op));
  op = Mvn1(MakeTensorDesc(DataType::kFloat16, {4, 1000}), {1});
  op.output = MakeTensorDesc(DataType::kFloat16, {4, 1000}, std::vector<uint64_t>{1004, 1});
  EXPECT_TRUE(words(op));
  // Strided groups: transposed input, or a transposed output alone.
  op = Mvn1(MakeTensorDesc(DataType::kFloat32, {8, 1000}), {1});
  op.input = MakeTensorDesc(DataType::kFloat32, {8, 1000}, std::vector<uint64_t>{1, 8});
  EXPECT_TRUE(words(op));
  op = Mvn1(MakeTensorDesc(DataType::kFloat32, {8, 1000}), {1});
  op.output = MakeTensorDesc(DataType::kFloat32, {8, 1000}, std::vector<uint64_t>{1, 8});
  EXPECT_TRUE(words(op));
  // The cooperative schedule keeps its word loads.
  PlannerOptions coop;
  coop.mvn_coop_max_chunks = kMvnCoopMaxChunks;
  EXPECT_TRUE(words(Mvn1(MakeTensorDesc(DataType::kFloat32, {7, 40000}), {1}), coop));
}

TEST(MvnPlannerTest, Vec4KeysOfOtherStagesAreRejected) {
  KernelKey k;
  k.op = OperatorType::kMeanVarianceNormalization1;
  k.layout = LayoutClass::kStrided;
  k.variant = 1 | kMvnVariantVec4;
  for (KernelStage s : {KernelStage::kMvnPartial, KernelStage::kMvnApply, KernelStage::kMvnRow}) {
    k.stage = s;
    EXPECT_TRUE(BuildKernel(k).ok()) << k.DebugString();
  }
  k.stage = KernelStage::kMvnCoop;
  EXPECT_FALSE(BuildKernel(k).ok());
}

TEST(MvnPlannerTest, GroupsMatchReducedAxes) {
  // Axes {0, 2} of a padded 3-D input: each group fixes axis 1.
  TensorDesc in = MakeTensorDesc(DataType::kFloat16, {3, 4, 5}, std::vector<uint64_t>{40, 10, 1});
  auto plan = PlanExecution(Mvn1(in, {2, 0}), false);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->dispatches.size(), 1u);
  EXPECT_EQ(plan->dispatches[0].key.stage, KernelStage::kMvnRow);
  const auto groups = MvnGroups(plan->dispatches[0]);
  ASSERT_EQ(groups.size(), 4u);
  std::set<uint64_t> all;
  for (const auto& g : groups) {
    ASSERT_EQ(g.size(), 15u);
    const uint64_t axis1 = g[0] % 40 / 10;
    for (uint64_t off : g) {
      EXPECT_EQ(off % 40 / 10, axis1);
      EXPECT_LT(off % 10, 5u);
      EXPECT_TRUE(all.insert(off).second);
    }
  }
  EXPECT_EQ(all.size(), 60u);
}

TEST(MvnPlannerTest, MvnCrossChannelAndScaleBroadcast) {
  OperatorDesc op = Mvn1(MakeTensorDesc(DataType::kFloat32, {2, 3, 4, 5}), {});
  op.type = static_cast<uint32_t>(OperatorType::kMeanVarianceNormalization);
  op.axes.clear();
  op.axis_count.reset();
  op.cross_channel = 0;
  op.scale = MakeTensorDesc(DataType::kFloat32, {1, 3, 1, 1});
  op.bias = MakeTensorDesc(DataType::kFloat32, {1, 3, 1, 1});
  FusedActivationDesc f;
  f.type = static_cast<uint32_t>(OperatorType::kActivationShrink);
  f.params = {0.25f, 0.5f};
  op.fused_activation = f;
  auto plan = PlanExecution(op, false);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const Dispatch& a = plan->dispatches.back();
  EXPECT_TRUE(a.key.has_scale);
  EXPECT_TRUE(a.key.has_bias);
  EXPECT_EQ(a.key.fused, OperatorType::kActivationShrink);
  // {H, W} coalesce into 20 (80 bytes: whole texels).
  EXPECT_EQ(a.key.variant, 1 | kMvnVariantSmallRow | kMvnVariantVec4);
  const MvnArgs args = DecodeMvnArgs(a);
  EXPECT_EQ(args.n, 20u);
  EXPECT_EQ(args.group_count, 6u);
  EXPECT_EQ(args.sizes[6], 3u);  // {N, C} would coalesce for input and output,
  EXPECT_EQ(args.sizes[5], 2u);
  EXPECT_EQ(args.fused_p0, 0.25f);
  EXPECT_EQ(args.fused_d1, -0.5f);
  EXPECT_EQ(a.srv[1].buffer, BufferSlot::kScale);
  EXPECT_EQ(a.srv[1].num_elements, 3u);
  // ... but not for the per-channel scale, so they stay 2 dims: check the
  // scale offset of every group through the strides.
  bool found_channel_stride = false;
  for (uint32_t k = 0; k < kMaxRank; ++k) found_channel_stride |= args.scale_strides[k] == 1;
  EXPECT_TRUE(found_channel_stride);
  op.cross_channel = 1;
  auto plan2 = PlanExecution(op, false);
  ASSERT_TRUE(plan2.ok());
  EXPECT_EQ(DecodeMvnArgs(plan2->dispatches.back()).n, 60u);
}

TEST(MvnPlannerTest, CooperativeWhereEnabledAndTheChunksFit) {
  PlannerOptions o;
  EXPECT_EQ(ChooseMvnSchedule(512, 262143, 4, o).kind, MvnSchedule::kTwoPass);  // off by default
  o.mvn_coop_max_chunks = 64;
  EXPECT_EQ(ChooseMvnSchedule(512, 262143, 4, o).kind, MvnSchedule::kCoop);  // 64 chunks
  EXPECT_EQ(ChooseMvnSchedule(512, 262145, 4, o).kind, MvnSchedule::kTwoPass);  // 65
  EXPECT_EQ(ChooseMvnSchedule(4096, 32768, 2, o).kind, MvnSchedule::kCoop);
  EXPECT_EQ(ChooseMvnSchedule(65536, 1024, 4, o).kind, MvnSchedule::kRow);  // one chunk
  o.mvn_coop_max_chunks = 100000;  // capped at one partial per combining thread
  EXPECT_EQ(ChooseMvnSchedule(1, kMvnChunk * kMvnCoopMaxChunks, 4, o).kind, MvnSchedule::kCoop);
  EXPECT_EQ(ChooseMvnSchedule(1, kMvnChunk * kMvnCoopMaxChunks + 1, 4, o).kind,
            MvnSchedule::kTwoPass);

  // The plan: a clear of the ticket and the 512 counters, then one
  // dispatch of a workgroup per chunk after a barrier.
  o.mvn_coop_max_chunks = 64;
  o.mvn_coop_spin_limit = 777;
  OperatorDesc op = Mvn1(MakeTensorDesc(DataType::kFloat32, {512, 262143}), {1});
  op.fused_activation = FusedActivationDesc{};
  op.fused_activation->type = static_cast<uint32_t>(OperatorType::kActivationRelu);
  auto plan = PlanExecution(op, false, o);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->dispatches.size(), 2u);
  const Dispatch& clear = plan->dispatches[0];
  const Dispatch& coop = plan->dispatches[1];
  EXPECT_EQ(clear.key, MvnClearKey());
  EXPECT_FALSE(clear.barrier_before);
  EXPECT_EQ(DecodeMvnArgs(clear).group_count, 513u);  // words to zero
  EXPECT_EQ(uint64_t{clear.groups[0]} * clear.groups[1] * kMvnClearThreads, 576u);
  EXPECT_EQ(clear.uav[1].format, ViewFormat::kR32Uint);
  EXPECT_EQ(coop.key.stage, KernelStage::kMvnCoop);
  EXPECT_EQ(coop.key.fused, OperatorType::kActivationRelu);
  EXPECT_TRUE(coop.barrier_before);
  const MvnArgs a = DecodeMvnArgs(coop);
  EXPECT_EQ(a.chunks, 64u);
  EXPECT_EQ(a.group_count, 512u);
  EXPECT_EQ(a.spin_limit, 777u);
  EXPECT_EQ(a.partials_word, 516u);  // 513 counter words, rounded up to 4
  EXPECT_EQ(a.lag, 8u);  // rows of 1 MiB in a quarter of the assumed 32 MiB cache
  EXPECT_EQ(uint64_t{coop.groups[0]} * coop.groups[1], 512u * 64 * 2);  // two tasks a chunk
  EXPECT_EQ(coop.uav[1].buffer, BufferSlot::kScratch);
  EXPECT_EQ(coop.uav[1].format, ViewFormat::kR32Uint);
  // Counters, partials, then one statistic per group.
  EXPECT_EQ(coop.uav[1].num_elements, 516u + (512 * 64 + 512) * 4);
  EXPECT_EQ(plan->scratch_bytes, (516u + (512 * 64 + 512) * 4) * 4);
  o.cache_bytes = 1ull << 30;  // the lag never exceeds the groups
  plan = PlanExecution(op, false, o);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(DecodeMvnArgs(plan->dispatches[1]).lag, 256u);
  o.cache_bytes = 1ull << 20;  // nor goes below 1
  plan = PlanExecution(op, false, o);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(DecodeMvnArgs(plan->dispatches[1]).lag, 1u);
  const std::vector<KernelKey> all = AllKernelKeys();
  for (const Dispatch& d : plan->dispatches) {
    EXPECT_NE(std::find(all.begin(), all.end(), d.key), all.end()) << d.key.DebugString();
  }
}

TEST(MvnPlannerTest, InPlaceRejectedAndEveryKeyKnown) {
  OperatorDesc op = Mvn1(MakeTensorDesc(DataType::kFloat32, {4, 8}), {1});
  EXPECT_FALSE(PlanExecution(op, true).ok());
  const std::vector<KernelKey> all = AllKernelKeys();
  for (uint32_t nv : {0u, 1u}) {
    op.normalize_variance = nv;
    op.scale = MakeTensorDesc(DataType::kFloat32, {1, 8});
    auto plan = PlanExecution(op, false);
    ASSERT_TRUE(plan.ok());
    for (const Dispatch& d : plan->dispatches) {
      EXPECT_NE(std::find(all.begin(), all.end(), d.key), all.end()) << d.key.DebugString();
    }
  }
}

TEST(PlannerTest, Int64ClipTailAndParams) {
  auto plan = PlanExecution(Clip(DataType::kInt64, {5}, -3.5f, 1e18f), false);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->dispatches.size(), 2u);
  EXPECT_EQ(plan->dispatches[0].key.variant, kVariantVec4);
  EXPECT_EQ(plan->dispatches[0].srv[0].num_elements, 2u);  // 4 elements
  const Dispatch& tail = plan->dispatches[1];
  EXPECT_EQ(tail.key.layout, LayoutClass::kStrided);
  EXPECT_EQ(tail.srv[0].first_element, 8u);
  EXPECT_EQ(tail.srv[0].num_elements, 2u);
  const ElementwiseArgs a = DecodeElementwiseArgs(plan->dispatches[0]);
  int64_t mn, mx;
  std::memcpy(&mn, &a.i[kArgIntMin], 8);
  std::memcpy(&mx, &a.f[kArgP0], 8);
  EXPECT_EQ(mn, -3);
  EXPECT_EQ(mx, 999999984306749440);
  EXPECT_EQ(ConvertToInt64Param(-1.0f, DataType::kUint64), 0u);
  EXPECT_EQ(ConvertToInt64Param(1e30f, DataType::kInt64), static_cast<uint64_t>(INT64_MAX));
}

TEST(PlannerTest, Int64StridedUsesWordStrides) {
  OperatorDesc op = Clip(DataType::kUint64, {3, 4}, 0, 9);
  op.input = MakeTensorDesc(DataType::kUint64, {3, 4}, std::vector<uint64_t>{1, 3});
  auto plan = PlanExecution(op, false);
  ASSERT_TRUE(plan.ok()) << plan.status();
  std::set<uint64_t> in_words;
  for (auto [i, o] : StridedOffsets(*plan, 32)) {
    EXPECT_EQ(o % 2, 0u);
    const uint64_t e = o / 2;  // output element (packed)
    EXPECT_EQ(i, 2 * (e / 4 + 3 * (e % 4)));
    in_words.insert(i);
  }
  EXPECT_EQ(in_words.size(), 12u);
}

}  // namespace
}  // namespace dmls::gpu

namespace dmls::gpu {
namespace {

// Property: whatever validated descriptor the planner sees, every key it
// emits is one the test suite compiles (AllKernelKeys), because vkd3d-shader
// aborts the process on a malformed shader instead of failing.
TEST(PlannerPropertyTest, PlannedKeysAreAlwaysCompiledKeys) {
  const std::vector<KernelKey> all_vec = AllKernelKeys();
  std::unordered_set<KernelKey, KernelKeyHash> all(all_vec.begin(), all_vec.end());
  uint32_t seed = 12345;
  auto rnd = [&](uint32_t n) {
    seed = seed * 1664525u + 1013904223u;
    return (seed >> 8) % n;
  };
  const OperatorType elementwise[] = {
      OperatorType::kElementWiseThreshold, OperatorType::kElementWiseClip,
      OperatorType::kActivationRelu,       OperatorType::kActivationShrink,
      OperatorType::kActivationCelu,       OperatorType::kActivationGelu,
      OperatorType::kActivationSoftsign,   OperatorType::kActivationLinear};
  int planned = 0;
  for (int iter = 0; iter < 400; ++iter) {
    const uint32_t rank = 1 + rnd(kMaxRank);
    std::vector<uint64_t> sizes(rank);
    for (auto& s : sizes) s = 1 + rnd(4);
    std::vector<uint64_t> strides = PackedStrides(sizes);
    const uint32_t layout = rnd(3);  // packed, padded, broadcast
    if (layout == 1) {
      for (auto& s : strides) s *= 2;
    } else if (layout == 2) {
      strides[rnd(rank)] = 0;
    }
    OperatorDesc op;
    if (iter % 4 == 3) {  // MVN1
      op.type = static_cast<uint32_t>(OperatorType::kMeanVarianceNormalization1);
      const DataType t = rnd(2) ? DataType::kFloat32 : DataType::kFloat16;
      op.input = MakeTensorDesc(t, sizes, strides);
      op.output = MakeTensorDesc(t, sizes);
      for (uint32_t a = 0; a < rank; ++a) {
        if (rnd(2)) op.axes.push_back(a);
      }
      if (op.axes.empty()) op.axes.push_back(rnd(rank));
      op.normalize_variance = rnd(2);
      op.epsilon = 1e-5f;
      std::vector<uint64_t> ss = sizes;
      for (auto& s : ss) {
        if (rnd(2)) s = 1;
      }
      if (rnd(2)) op.scale = MakeTensorDesc(t, ss);
      if (rnd(2)) op.bias = MakeTensorDesc(t, ss);
      if (rnd(2)) {
        FusedActivationDesc f;
        f.type = static_cast<uint32_t>(rnd(2) ? OperatorType::kActivationElu
                                              : OperatorType::kActivationHardSigmoid);
        f.params = {0.5f, 0.25f};
        op.fused_activation = f;
      }
    } else {
      const OperatorType type = elementwise[rnd(std::size(elementwise))];
      const std::vector<DataType> types = ElementwiseTypes(type);
      const DataType t = types[rnd(types.size())];
      op.type = static_cast<uint32_t>(type);
      op.input = MakeTensorDesc(t, sizes, strides);
      op.output = MakeTensorDesc(t, sizes);
      op.min = -1.5f;
      op.max = 2.5f;
      op.activation = {0.5f, 0.25f};
      if (TakesScaleBias(type) && ElementBits(t) != 64 && rnd(2)) {
        op.scale_bias = ScaleBias{1.5f, -0.5f};
      }
    }
    auto plan = PlanExecution(op, false);
    ASSERT_TRUE(plan.ok()) << plan.status() << " iter " << iter;
    for (const Dispatch& d : plan->dispatches) {
      EXPECT_TRUE(all.count(d.key)) << d.key.DebugString();
      EXPECT_LE(d.args.size(), 256u);
      for (uint32_t g : d.groups) EXPECT_LE(g, kMaxDispatchGroups);
      ++planned;
    }
  }
  EXPECT_GT(planned, 400);
}

}  // namespace
}  // namespace dmls::gpu
