#include "engine/dxbc/planner.h"

#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "engine/core/tensor_desc.h"
#include "engine/dxbc/kernels.h"
#include "engine/dxbc/param_convert.h"
#include "engine/dxbc/plan_util.h"
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
