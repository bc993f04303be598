// Every MVN schedule of the planner (mvn_plan.h) on the Direct3D 12 engine
// against the CPU engine: the row kernels (one workgroup of 64, 256 or
// 1,024 threads per group), the
// blocked plan (statistics + normalisation per block of rows, with a block
// budget shrunk so that small tensors need many blocks, odd last blocks
// included) and the two-pass fallback; packed, padded, broadcast and
// transposed layouts, Scale/Bias broadcast, fused activations, FLOAT16,
// NormalizeVariance FALSE, and the MVN (type 73) operator; the cooperative
// schedule with and without waiting; 16-byte texel loads and stores
// (kMvnVariantVec4) where groups are runs of whole texels, in the row,
// two-pass and blocked schedules, and one word per element where they are
// not; Scale/Bias texels (kMvnVariantVec4ScaleBias) where they are packed
// like the input. Each test first checks that the planner picked the schedule it is
// about.
#include <algorithm>
#include <memory>
#include <vector>

#include "engine/kernels/kernel_key.h"
#include "engine/plan/mvn_plan.h"
#include "engine/plan/planner.h"
#include "gtest/gtest.h"
#include "tests/mvn/mvn_gpu_test_util.h"

namespace dmls::mvn_testing {
namespace {

using gpu::KernelStage;
using gpu::MvnSchedule;

// Planner options of each schedule under test (the row schedule is chosen
// by N alone; the others by the block budget).
gpu::PlannerOptions BlockBudget(uint64_t bytes) {
  gpu::PlannerOptions o;
  o.mvn_block_bytes = bytes;
  return o;
}

// Whether every dispatch of `op`'s plan loads whole texels (and none does
// otherwise).
::testing::AssertionResult TakesVec4(const OperatorDesc& op, const gpu::PlannerOptions& o,
                                     bool want) {
  absl::StatusOr<gpu::DispatchPlan> plan = gpu::PlanExecution(op, false, o);
  if (!plan.ok()) return ::testing::AssertionFailure() << plan.status();
  for (const gpu::Dispatch& d : plan->dispatches) {
    if (((d.key.variant & gpu::kMvnVariantVec4) != 0) != want) {
      return ::testing::AssertionFailure() << d.key.DebugString();
    }
  }
  return ::testing::AssertionSuccess();
}

class MvnScheduleTest : public ::testing::Test {
 protected:
  // Plans `op` with `o`, checks the schedule, then runs it on an engine
  // with the same options and compares with the CPU engine.
  void Run(const OperatorDesc& op, const gpu::PlannerOptions& o, MvnSchedule::Kind want,
           uint32_t seed = 1, double amplitude = 3.0, double offset = 0.0,
           bool with_scale_bias_payloads = true) {
    absl::StatusOr<gpu::DispatchPlan> plan = gpu::PlanExecution(op, false, o);
    ASSERT_TRUE(plan.ok()) << plan.status();
    ASSERT_FALSE(plan->dispatches.empty());
    const KernelStage first = plan->dispatches[0].key.stage;
    // kMvnCombine between the statistics and the normalisation of a block.
    const size_t per_block = plan->mvn_schedule.combine ? 3 : 2;
    ASSERT_TRUE(!plan->mvn_schedule.combine || want == MvnSchedule::kTwoPass ||
                want == MvnSchedule::kBlocked);
    const bool passes = want == MvnSchedule::kTwoPass || want == MvnSchedule::kBlocked;
    for (size_t i = 0; passes && i < plan->dispatches.size(); ++i) {
      const KernelStage want_stage = i % per_block == 0 ? KernelStage::kMvnPartial
                                     : per_block == 2   ? KernelStage::kMvnApply
                                     : i % per_block == 1 ? KernelStage::kMvnCombine
                                                          : KernelStage::kMvnNormalise;
      ASSERT_EQ(plan->dispatches[i].key.stage, want_stage) << "dispatch " << i;
    }
    switch (want) {
      case MvnSchedule::kRow:
        ASSERT_EQ(plan->dispatches.size(), 1u);
        ASSERT_EQ(first, KernelStage::kMvnRow);
        break;
      case MvnSchedule::kBlocked:
        ASSERT_GT(plan->dispatches.size(), per_block);
        ASSERT_EQ(first, KernelStage::kMvnPartial);
        break;
      case MvnSchedule::kTwoPass:
        ASSERT_EQ(plan->dispatches.size(), per_block);
        ASSERT_EQ(first, KernelStage::kMvnPartial);
        break;
      case MvnSchedule::kCoop:
        ASSERT_EQ(plan->dispatches.size(), 2u);
        ASSERT_EQ(first, KernelStage::kMvnClear);
        ASSERT_EQ(plan->dispatches[1].key.stage, KernelStage::kMvnCoop);
        break;
    }
    absl::StatusOr<std::unique_ptr<d3d12::GpuEngine>> engine = MakeEngine(o);
    ASSERT_TRUE(engine.ok()) << engine.status();
    ExecuteRequest r;
    r.op = op;
    r.input = Payload(*op.input, RandomValues(ElementCount(op.input->sizes), seed, amplitude,
                                              offset));
    if (with_scale_bias_payloads && op.scale) {
      r.scale = Payload(*op.scale, RandomValues(ElementCount(op.scale->sizes), seed + 1, 2.0));
    }
    if (with_scale_bias_payloads && op.bias) {
      r.bias = Payload(*op.bias, RandomValues(ElementCount(op.bias->sizes), seed + 2, 1.0));
    }
    EXPECT_TRUE(MatchesCpu(**engine, r));
  }
  // Run, after checking that the plan loads whole 16-byte texels (or not).
  void RunTexels(const OperatorDesc& op, const gpu::PlannerOptions& o, bool vec4,
                 MvnSchedule::Kind want, uint32_t seed, double amplitude = 3.0,
                 double offset = 0.0) {
    ASSERT_TRUE(TakesVec4(op, o, vec4));
    Run(op, o, want, seed, amplitude, offset);
  }
};

FusedActivationDesc Fused(OperatorType t, float p0 = 0, float p1 = 0) {
  FusedActivationDesc f;
  f.type = static_cast<uint32_t>(t);
  f.params = {p0, p1};
  return f;
}

// MVN (type 73) FLOAT32 over {H, W} (or {C, H, W} with `cross`), with
// Scale/Bias per channel and a fused RELU.
OperatorDesc MvnPerChannel(const std::vector<uint64_t>& sizes, uint32_t cross) {
  OperatorDesc op = Mvn1(DataType::kFloat32, sizes, {});
  op.type = static_cast<uint32_t>(OperatorType::kMeanVarianceNormalization);
  op.axes.clear();
  op.axis_count.reset();
  op.cross_channel = cross;
  op.scale = MakeTensorDesc(DataType::kFloat32, {1, sizes[1], 1, 1});
  op.bias = MakeTensorDesc(DataType::kFloat32, {1, sizes[1], 1, 1});
  op.fused_activation = Fused(OperatorType::kActivationRelu);
  return op;
}

// ---- row: one workgroup per group, read once ----

TEST_F(MvnScheduleTest, RowOddSizesFloat32) {
  const gpu::PlannerOptions o;
  Run(Mvn1(DataType::kFloat32, {5, 1000}, {1}), o, MvnSchedule::kRow, 1);
  Run(Mvn1(DataType::kFloat32, {3, 4095}, {1}), o, MvnSchedule::kRow, 2);
  Run(Mvn1(DataType::kFloat32, {2, gpu::kMvnChunk}, {1}), o, MvnSchedule::kRow, 3);
  Run(Mvn1(DataType::kFloat32, {7, 1}, {1}), o, MvnSchedule::kRow, 4);  // out = Bias = 0
  Run(Mvn1(DataType::kFloat32, {1, 3, 17}, {0, 1, 2}), o, MvnSchedule::kRow, 5);
  // A large common offset (OPERATORS.md §7.6): the mean must not be rounded
  // to the data's magnitude (found by this test: Mesa reassociated it).
  Run(Mvn1(DataType::kFloat32, {5, 901}, {1}), o, MvnSchedule::kRow, 6, 0.05, 1e4);
}

TEST_F(MvnScheduleTest, RowFloat16WithScaleBiasAndFusedActivation) {
  OperatorDesc op = Mvn1(DataType::kFloat16, {6, 333}, {1});
  op.scale = MakeTensorDesc(DataType::kFloat16, {1, 333});
  op.bias = MakeTensorDesc(DataType::kFloat16, {6, 1});
  op.fused_activation = Fused(OperatorType::kActivationElu, 0.7f);
  Run(op, {}, MvnSchedule::kRow, 7);  // odd rows start mid-word: per-element stores
  op = Mvn1(DataType::kFloat16, {4, 1000}, {1});
  Run(op, {}, MvnSchedule::kRow, 25);  // every pair of elements is one output word
  op.output = MakeTensorDesc(DataType::kFloat16, {4, 1000}, std::vector<uint64_t>{1, 4});
  Run(op, {}, MvnSchedule::kRow, 26);  // transposed output: no pair shares a word
}

TEST_F(MvnScheduleTest, RowPaddedTransposedAndBroadcastLayouts) {
  // Axes {0, 2} of a padded input: groups are not contiguous.
  OperatorDesc op = Mvn1(DataType::kFloat32, {3, 4, 5}, {2, 0});
  op.input = MakeTensorDesc(DataType::kFloat32, {3, 4, 5}, std::vector<uint64_t>{40, 10, 1});
  Run(op, {}, MvnSchedule::kRow, 8);
  // Transposed input, strided output.
  op = Mvn1(DataType::kFloat16, {9, 31}, {1});
  op.input = MakeTensorDesc(DataType::kFloat16, {9, 31}, std::vector<uint64_t>{1, 9});
  op.output = MakeTensorDesc(DataType::kFloat16, {9, 31}, std::vector<uint64_t>{32, 1});
  Run(op, {}, MvnSchedule::kRow, 9);
  // A zero-stride (broadcast) input dimension inside the group.
  op = Mvn1(DataType::kFloat32, {4, 8, 50}, {1, 2});
  op.input = MakeTensorDesc(DataType::kFloat32, {4, 8, 50}, std::vector<uint64_t>{50, 0, 1});
  Run(op, {}, MvnSchedule::kRow, 10);
}

TEST_F(MvnScheduleTest, RowNoNormalizeVarianceAndMvnCrossChannel) {
  OperatorDesc op = Mvn1(DataType::kFloat32, {4, 777}, {1}, /*normalize_variance=*/false);
  op.fused_activation = Fused(OperatorType::kActivationShrink, 0.25f, 0.5f);
  Run(op, {}, MvnSchedule::kRow, 11, 2.0, 1000.0);
  for (uint32_t cross : {0u, 1u}) {
    // 7 x 9 = 63 elements: not whole texels.
    Run(MvnPerChannel({2, 3, 7, 9}, cross), {}, MvnSchedule::kRow, 12 + cross);
  }
}

TEST_F(MvnScheduleTest, RowWithTwoDimensionalGrid) {
  gpu::PlannerOptions o;
  o.max_groups = 4;  // 13 groups: a 4 x 4 grid with 3 idle workgroups
  Run(Mvn1(DataType::kFloat32, {13, 100}, {1}), o, MvnSchedule::kRow, 14);
}

TEST_F(MvnScheduleTest, WideRowsInRegisters) {
  // 1,024 threads x 32 elements: up to 32,768 per group, read once (off by
  // default: slower than the two passes on the H100).
  gpu::PlannerOptions o;
  o.mvn_wide_row = true;
  Run(Mvn1(DataType::kFloat32, {3, gpu::kMvnWideRowChunk}, {1}), o, MvnSchedule::kRow, 29);
  Run(Mvn1(DataType::kFloat32, {2, gpu::kMvnChunk + 1}, {1}), o, MvnSchedule::kRow, 30);
  Run(Mvn1(DataType::kFloat32, {5, 20001}, {1}, false), o, MvnSchedule::kRow, 31, 1.0, 1e4);
  OperatorDesc op = Mvn1(DataType::kFloat16, {3, 30001}, {1});
  op.scale = MakeTensorDesc(DataType::kFloat16, {1, 30001});
  op.bias = MakeTensorDesc(DataType::kFloat16, {3, 1});
  op.fused_activation = Fused(OperatorType::kActivationLeakyRelu, 0.1f);
  Run(op, o, MvnSchedule::kRow, 32);
  // Axes {0, 2} of a padded input: 4 groups of 3 x 5,000.
  op = Mvn1(DataType::kFloat32, {3, 4, 5000}, {0, 2});
  op.input =
      MakeTensorDesc(DataType::kFloat32, {3, 4, 5000}, std::vector<uint64_t>{20100, 5020, 1});
  Run(op, o, MvnSchedule::kRow, 33);
}

// ---- cooperative: statistics and normalisation tasks in one dispatch ----

// Cooperative options: on for up to `max_chunks` chunks, with the test's
// poll limit (the software adapter keeps few workgroups running at once,
// so that its normalisation tasks may stop waiting; `spin_limit` 0: one
// poll, then the fallback). llvmpipe ends every loop of an invocation once they
// have run 65,535 iterations together, so a limit near that would cut the
// fallback's loop short there.
// Word loads: texel runs would take the wide row kernel first (up to
// 32,768 elements), and kMvnCoop loads words anyway.
gpu::PlannerOptions Coop(uint32_t spin_limit = 4096, uint32_t max_chunks = gpu::kMvnCoopMaxChunks) {
  gpu::PlannerOptions o;
  o.mvn_coop_max_chunks = max_chunks;
  o.mvn_coop_spin_limit = spin_limit;
  o.mvn_vec4 = false;
  return o;
}

TEST_F(MvnScheduleTest, CoopOddSizesFloat32) {
  // 7 groups of 40,000 (10 chunks, the last one partial), each group's
  // statistics right before its normalisation (the lag is the number of
  // groups that fit a quarter of the cache: all 7 by default), 2 groups
  // before it, and 1.
  gpu::PlannerOptions o = Coop();
  Run(Mvn1(DataType::kFloat32, {7, 40000}, {1}), o, MvnSchedule::kCoop, 41);
  o.cache_bytes = 4 * 2 * 40000 * 4;
  Run(Mvn1(DataType::kFloat32, {7, 40000}, {1}), o, MvnSchedule::kCoop, 51);
  o.cache_bytes = 1;
  Run(Mvn1(DataType::kFloat32, {7, 40000}, {1}), o, MvnSchedule::kCoop, 52);
  Run(Mvn1(DataType::kFloat32, {3, gpu::kMvnChunk + 1}, {1}), Coop(), MvnSchedule::kCoop, 42);
  // Two chunks: the software adapter's two threads can run them together.
  Run(Mvn1(DataType::kFloat32, {4, 2 * gpu::kMvnChunk}, {1}), Coop(), MvnSchedule::kCoop, 43);
  // A large common offset (OPERATORS.md §7.6).
  Run(Mvn1(DataType::kFloat32, {5, 20001}, {1}), Coop(), MvnSchedule::kCoop, 44, 0.05, 1e4);
}

TEST_F(MvnScheduleTest, CoopFloat16ScaleBiasFusedAndNoWaiting) {
  OperatorDesc op = Mvn1(DataType::kFloat16, {5, 40001}, {1});
  op.scale = MakeTensorDesc(DataType::kFloat16, {1, 40001});
  op.bias = MakeTensorDesc(DataType::kFloat16, {5, 1});
  op.fused_activation = Fused(OperatorType::kActivationCelu, 1.5f);
  Run(op, Coop(), MvnSchedule::kCoop, 45);
  Run(op, Coop(0), MvnSchedule::kCoop, 46);  // the fallback, mixed with waiting
  op = Mvn1(DataType::kFloat32, {6, 33000}, {1}, /*normalize_variance=*/false);
  op.bias = MakeTensorDesc(DataType::kFloat32, {6, 1});
  Run(op, Coop(0), MvnSchedule::kCoop, 47, 2.0, 1000.0);
}

TEST_F(MvnScheduleTest, CoopStridedGroupsAndTwoDimensionalGrid) {
  // Axes {0, 2}: 4 groups of 3 x 12,000 (9 chunks), each spread over the
  // tensor; then a 2-D grid for the 36 workgroups.
  OperatorDesc op = Mvn1(DataType::kFloat32, {3, 4, 12000}, {0, 2});
  op.input =
      MakeTensorDesc(DataType::kFloat32, {3, 4, 12000}, std::vector<uint64_t>{48100, 12020, 1});
  gpu::PlannerOptions o = Coop();
  Run(op, o, MvnSchedule::kCoop, 48);
  o.max_groups = 10;  // 72 tasks: a 10 x 8 grid, 8 workgroups idle
  Run(op, o, MvnSchedule::kCoop, 49);
  // Above the chunk limit: the two passes.
  Run(op, Coop(4096, 8), MvnSchedule::kTwoPass, 50);
}

// ---- blocked: partial + apply per block of rows ----

TEST_F(MvnScheduleTest, BlockedOddBlocksFloat32) {
  // 7 groups of 40,000 (10 chunks, the last one partial) in blocks of 2.
  const OperatorDesc op = Mvn1(DataType::kFloat32, {7, 40000}, {1});
  Run(op, BlockBudget(2 * 40000 * 4), MvnSchedule::kBlocked, 15);
  Run(op, BlockBudget(3 * 40000 * 4 + 17), MvnSchedule::kBlocked, 16);  // blocks 3, 3, 1
}

TEST_F(MvnScheduleTest, BlockedFloat16ScaleBiasFusedAndOffset) {
  OperatorDesc op = Mvn1(DataType::kFloat16, {5, 40001}, {1});
  op.scale = MakeTensorDesc(DataType::kFloat16, {1, 40001});
  op.bias = MakeTensorDesc(DataType::kFloat16, {1, 40001});
  op.fused_activation = Fused(OperatorType::kActivationCelu, 1.5f);
  Run(op, BlockBudget(2 * 40001 * 2), MvnSchedule::kBlocked, 17);
  op = Mvn1(DataType::kFloat32, {5, 40001}, {1});
  Run(op, BlockBudget(40001 * 4), MvnSchedule::kBlocked, 18, 0.05, 1e4);  // large common offset
}

TEST_F(MvnScheduleTest, BlockedStridedGroupsAndTwoDimensionalGrid) {
  // Axes {0, 2}: 4 groups of 3 x 12,000, each spread over the tensor.
  OperatorDesc op = Mvn1(DataType::kFloat32, {3, 4, 12000}, {0, 2});
  op.input =
      MakeTensorDesc(DataType::kFloat32, {3, 4, 12000}, std::vector<uint64_t>{48100, 12020, 1});
  gpu::PlannerOptions o = BlockBudget(36000 * 4);  // one group per block
  Run(op, o, MvnSchedule::kBlocked, 19);
  o.max_groups = 6;  // blocks of 3 groups x 9 chunks: a 6 x 5 grid
  o.mvn_block_bytes = 3 * 36000 * 4;
  Run(op, o, MvnSchedule::kBlocked, 20);
}

TEST_F(MvnScheduleTest, BlockedNoNormalizeVariance) {
  OperatorDesc op = Mvn1(DataType::kFloat32, {6, 33000}, {1}, /*normalize_variance=*/false);
  op.bias = MakeTensorDesc(DataType::kFloat32, {6, 1});
  Run(op, BlockBudget(33000 * 4), MvnSchedule::kBlocked, 21);
}

// ---- two-pass fallback ----

TEST_F(MvnScheduleTest, TwoPassWhenARowExceedsTheBlockBudget) {
  OperatorDesc op = Mvn1(DataType::kFloat32, {3, 33333}, {1});
  op.scale = MakeTensorDesc(DataType::kFloat32, {3, 33333});
  op.fused_activation = Fused(OperatorType::kActivationSigmoid);
  Run(op, BlockBudget(1000), MvnSchedule::kTwoPass, 22);
  Run(Mvn1(DataType::kFloat16, {2, 40961}, {1}), BlockBudget(1000), MvnSchedule::kTwoPass, 23);
}

TEST_F(MvnScheduleTest, TwoPassWhenTheTensorFitsOneBlock) {
  Run(Mvn1(DataType::kFloat32, {4, 33000}, {1}), {}, MvnSchedule::kTwoPass, 24);
}

TEST_F(MvnScheduleTest, MoreChunksThanThreads) {
  // 293 chunks: apply threads combine two partials each, every reduction
  // level runs (the levels past the chunk count are skipped otherwise).
  const uint64_t n = 293 * gpu::kMvnChunk - 7;
  Run(Mvn1(DataType::kFloat32, {1, n}, {1}), {}, MvnSchedule::kTwoPass, 27, 2.0, 3.0);
  Run(Mvn1(DataType::kFloat32, {2, 257 * gpu::kMvnChunk}, {1}), BlockBudget(257 * gpu::kMvnChunk * 4),
      MvnSchedule::kBlocked, 28);
}

// kMvnCombine: each group's partials combined once, in a dispatch of their
// own, then read by every normalisation workgroup (kMvnNormalise), give the
// same bits as each normalisation workgroup combining them itself
// (kMvnApply; the same order of combination), and both match the CPU:
// two-pass and blocked, FLOAT16 odd N with Scale/Bias and a fused
// activation, texels, NormalizeVariance FALSE, strided groups on a 2-D
// grid, more chunks than threads.
TEST_F(MvnScheduleTest, CombinedOnceMatchesCombinedPerWorkgroup) {
  gpu::PlannerOptions per_workgroup = BlockBudget(1000);  // two-pass
  per_workgroup.mvn_row = false;  // not the wide row kernel for 5 chunks of texels
  per_workgroup.mvn_combine_min_chunks = 0;
  gpu::PlannerOptions once = per_workgroup;
  once.mvn_combine_min_chunks = 2;
  once.mvn_combine_float32 = true;
  auto same = [&](const OperatorDesc& op, const gpu::PlannerOptions& a,
                  const gpu::PlannerOptions& b, MvnSchedule::Kind want, uint32_t seed) {
    absl::StatusOr<gpu::DispatchPlan> pa = gpu::PlanExecution(op, false, a);
    absl::StatusOr<gpu::DispatchPlan> pb = gpu::PlanExecution(op, false, b);
    ASSERT_TRUE(pa.ok() && pb.ok());
    ASSERT_FALSE(pa->mvn_schedule.combine);
    ASSERT_TRUE(pb->mvn_schedule.combine);
    Run(op, b, want, seed);
    ExecuteRequest r;
    r.op = op;
    r.input = Payload(*op.input, RandomValues(ElementCount(op.input->sizes), seed, 3.0, 0.5));
    if (op.scale) r.scale = Payload(*op.scale, RandomValues(ElementCount(op.scale->sizes), 7, 2.0));
    if (op.bias) r.bias = Payload(*op.bias, RandomValues(ElementCount(op.bias->sizes), 8, 1.0));
    std::vector<std::vector<double>> out;
    for (const gpu::PlannerOptions* o : {&a, &b}) {
      absl::StatusOr<std::unique_ptr<d3d12::GpuEngine>> engine = MakeEngine(*o);
      ASSERT_TRUE(engine.ok()) << engine.status();
      absl::StatusOr<std::vector<double>> got = RunGpu(**engine, r);
      ASSERT_TRUE(got.ok()) << got.status();
      out.push_back(*std::move(got));
    }
    ASSERT_EQ(out[0].size(), out[1].size());
    for (size_t i = 0; i < out[0].size(); ++i) {
      ASSERT_TRUE(out[0][i] == out[1][i] || (out[0][i] != out[0][i] && out[1][i] != out[1][i]))
          << "element " << i << ": " << out[0][i] << " per workgroup, " << out[1][i] << " once";
    }
  };
  OperatorDesc op = Mvn1(DataType::kFloat16, {5, 3 * gpu::kMvnChunk + 1}, {1});
  op.scale = MakeTensorDesc(DataType::kFloat16, {1, 3 * gpu::kMvnChunk + 1});
  op.bias = MakeTensorDesc(DataType::kFloat16, {5, 1});
  op.fused_activation = Fused(OperatorType::kActivationCelu, 1.5f);
  same(op, per_workgroup, once, MvnSchedule::kTwoPass, 71);
  same(Mvn1(DataType::kFloat32, {4, 5 * gpu::kMvnChunk}, {1}), per_workgroup, once,
       MvnSchedule::kTwoPass, 72);  // texels
  same(Mvn1(DataType::kFloat16, {3, 2 * gpu::kMvnChunk - 3}, {1}, false), per_workgroup, once,
       MvnSchedule::kTwoPass, 73);
  // Blocked: blocks of 2, 2, 1 groups on a 2-D grid, strided groups.
  OperatorDesc strided = Mvn1(DataType::kFloat32, {3, 5, 12000}, {0, 2});
  strided.input =
      MakeTensorDesc(DataType::kFloat32, {3, 5, 12000}, std::vector<uint64_t>{60100, 12020, 1});
  gpu::PlannerOptions a = BlockBudget(2 * 36000 * 4), b = a;
  a.mvn_combine_min_chunks = 0;
  b.mvn_combine_min_chunks = 2;
  b.mvn_combine_float32 = true;
  a.max_groups = b.max_groups = 6;
  same(strided, a, b, MvnSchedule::kBlocked, 74);
  // 293 chunks: each combining thread takes two partials.
  same(Mvn1(DataType::kFloat32, {1, 293 * gpu::kMvnChunk - 7}, {1}), per_workgroup, once,
       MvnSchedule::kTwoPass, 75);
}

// Statistics from texels of the whole input, masked to each group
// (kMvnVariantTexelSpan), where groups are packed but not whole texels:
// group starts at every lane of a texel (odd N, padded rows), FLOAT32 too,
// NormalizeVariance FALSE, blocked, combined once, long spans.
TEST_F(MvnScheduleTest, TexelSpanStatistics) {
  auto spans = [](const OperatorDesc& op, const gpu::PlannerOptions& o,
                  uint8_t bits = gpu::kMvnVariantTexelSpan) {
    absl::StatusOr<gpu::DispatchPlan> plan = gpu::PlanExecution(op, false, o);
    if (!plan.ok()) return false;
    bool any = false;
    for (const gpu::Dispatch& d : plan->dispatches) {
      if (d.key.stage == KernelStage::kMvnPartial) {
        any = (d.key.variant & bits) == bits;
        if (!any) return false;
      }
    }
    return any;
  };
  constexpr uint8_t kLong = gpu::kMvnVariantTexelSpan | gpu::kMvnVariantLongSpan;
  gpu::PlannerOptions o = BlockBudget(1000);  // two-pass
  o.mvn_row = false;
  OperatorDesc op = Mvn1(DataType::kFloat16, {8, 3 * gpu::kMvnChunk + 1}, {1});
  op.bias = MakeTensorDesc(DataType::kFloat16, {8, 1});
  ASSERT_TRUE(spans(op, o));
  Run(op, o, MvnSchedule::kTwoPass, 91);
  gpu::PlannerOptions off = o;
  off.mvn_texel_span = false;
  ASSERT_FALSE(spans(op, off));
  // Padded rows: starts 8,203 elements apart.
  op = Mvn1(DataType::kFloat16, {8, 8195}, {1});
  op.input = MakeTensorDesc(DataType::kFloat16, {8, 8195}, std::vector<uint64_t>{8203, 1});
  ASSERT_TRUE(spans(op, o));
  Run(op, o, MvnSchedule::kTwoPass, 92, 2.0, 1e3);
  // Long spans (kMvnVariantLongSpan) where the partials are combined once:
  // 3 statistics chunks of kMvnLongSpanChunk against 6 normalisation
  // chunks, a group start at every lane; padded rows; not without the
  // combine.
  gpu::PlannerOptions long_span = o;
  long_span.mvn_long_span = true;
  long_span.mvn_combine_min_chunks = 2;
  op = Mvn1(DataType::kFloat16, {8, 5 * gpu::kMvnChunk + 1}, {1});
  op.bias = MakeTensorDesc(DataType::kFloat16, {8, 1});
  op.fused_activation = Fused(OperatorType::kActivationCelu, 1.5f);
  ASSERT_TRUE(spans(op, long_span, kLong));
  Run(op, long_span, MvnSchedule::kTwoPass, 95);
  op = Mvn1(DataType::kFloat16, {8, 2 * gpu::kMvnLongSpanChunk + 3}, {1});
  op.input = MakeTensorDesc(DataType::kFloat16, {8, 2 * gpu::kMvnLongSpanChunk + 3},
                            std::vector<uint64_t>{2 * gpu::kMvnLongSpanChunk + 11, 1});
  ASSERT_TRUE(spans(op, long_span, kLong));
  Run(op, long_span, MvnSchedule::kTwoPass, 96, 2.0, 1e3);
  // Chunks wholly inside their group take the statistics without masks.
  // N = 2 long chunks less half a texel: row 0's first chunk is inside,
  // its second not; row 1 starts mid-texel (its first chunk is masked) and
  // its second chunk ends exactly on its last element (inside).
  for (DataType t : {DataType::kFloat16, DataType::kFloat32}) {
    const uint32_t half_texel = t == DataType::kFloat16 ? 4 : 2;
    OperatorDesc whole = Mvn1(t, {4, 2 * gpu::kMvnLongSpanChunk - half_texel}, {1});
    ASSERT_TRUE(spans(whole, long_span, kLong));
    Run(whole, long_span, MvnSchedule::kTwoPass, 99, 2.0, 1e3);
  }
  gpu::PlannerOptions long_apart = long_span;
  long_apart.mvn_combine_min_chunks = 0;
  ASSERT_TRUE(spans(op, long_apart));
  ASSERT_FALSE(spans(op, long_apart, kLong));
  // The normalisation by texels of the tensor too (kMvnNormalise with
  // kMvnVariantTexelSpan): groups back to back, starting at every lane of
  // a texel, a fused activation, NormalizeVariance FALSE, FLOAT32, a Bias
  // per group, a Scale per column with a Bias per group; not padded rows.
  auto span_normalises = [](const OperatorDesc& op, const gpu::PlannerOptions& o) {
    absl::StatusOr<gpu::DispatchPlan> plan = gpu::PlanExecution(op, false, o);
    if (!plan.ok() || plan->dispatches.size() != 3) return false;
    const gpu::Dispatch& d = plan->dispatches[2];
    return d.key.stage == KernelStage::kMvnNormalise &&
           (d.key.variant & gpu::kMvnVariantTexelSpan) != 0;
  };
  gpu::PlannerOptions texels = long_span, no_texels = long_span;
  texels.mvn_span_normalise = true;
  no_texels.mvn_span_normalise = false;
  ASSERT_FALSE(span_normalises(op, texels));  // padded rows
  op = Mvn1(DataType::kFloat16, {8, 2 * gpu::kMvnChunk + 3}, {1});
  op.fused_activation = Fused(OperatorType::kActivationCelu, 1.5f);
  ASSERT_TRUE(span_normalises(op, texels));
  ASSERT_FALSE(span_normalises(op, no_texels));
  Run(op, texels, MvnSchedule::kTwoPass, 97);
  op = Mvn1(DataType::kFloat16, {16, 3 * gpu::kMvnChunk - 1}, {1}, /*normalize_variance=*/false);
  ASSERT_TRUE(span_normalises(op, texels));
  Run(op, texels, MvnSchedule::kTwoPass, 98, 2.0, 1e3);
  op = Mvn1(DataType::kFloat32, {4, 2 * gpu::kMvnChunk + 1}, {1});
  ASSERT_TRUE(span_normalises(op, texels));
  Run(op, texels, MvnSchedule::kTwoPass, 99);
  op.bias = MakeTensorDesc(DataType::kFloat32, {4, 1});
  ASSERT_TRUE(span_normalises(op, texels));
  Run(op, texels, MvnSchedule::kTwoPass, 100);
  op = Mvn1(DataType::kFloat16, {8, 2 * gpu::kMvnChunk + 5}, {1});
  op.scale = MakeTensorDesc(DataType::kFloat16, {1, 2 * gpu::kMvnChunk + 5});
  op.bias = MakeTensorDesc(DataType::kFloat16, {8, 1});
  op.fused_activation = Fused(OperatorType::kActivationCelu, 1.5f);
  ASSERT_TRUE(span_normalises(op, texels));
  Run(op, texels, MvnSchedule::kTwoPass, 101);
  // FLOAT32 (when asked), NormalizeVariance FALSE, blocked, combined once.
  o.mvn_texel_span_float32 = true;
  op = Mvn1(DataType::kFloat32, {4, 2 * gpu::kMvnChunk + 3}, {1});
  ASSERT_TRUE(spans(op, o));
  Run(op, o, MvnSchedule::kTwoPass, 93);
  op = Mvn1(DataType::kFloat16, {8, gpu::kMvnChunk + 5}, {1}, /*normalize_variance=*/false);
  op.bias = MakeTensorDesc(DataType::kFloat16, {8, 1});
  gpu::PlannerOptions blocked = BlockBudget(3 * (gpu::kMvnChunk + 5) * 2);
  blocked.mvn_row = false;
  blocked.mvn_combine_min_chunks = 2;
  ASSERT_TRUE(spans(op, blocked));
  Run(op, blocked, MvnSchedule::kBlocked, 94);
  // Tensor bytes not a multiple of 16: words.
  ASSERT_FALSE(spans(Mvn1(DataType::kFloat16, {5, 3 * gpu::kMvnChunk + 1}, {1}), o));
}

// FLOAT16 without texels: the chunks of a group that starts in the high
// half of a word start one element early, so that a thread's pairs are
// whole words (SetPairShift in mvn_emitter.cc): N one short of whole chunks
// (the shifted chunks end exactly at the group's last element), one past
// them, a row kernel filled to its last element, and an even N whose odd
// output stride leaves no room for the shift (every other group stored
// through atomics).
TEST_F(MvnScheduleTest, Float16PairsFollowTheOutputsWords) {
  const uint64_t n = 3 * gpu::kMvnChunk;
  OperatorDesc op = Mvn1(DataType::kFloat16, {5, n - 1}, {1});
  op.bias = MakeTensorDesc(DataType::kFloat16, {5, 1});
  Run(op, BlockBudget(1000), MvnSchedule::kTwoPass, 61);
  Run(op, Coop(), MvnSchedule::kCoop, 62);
  Run(Mvn1(DataType::kFloat16, {5, n + 1}, {1}), BlockBudget(2 * (n + 1) * 2),
      MvnSchedule::kBlocked, 63);
  Run(Mvn1(DataType::kFloat16, {7, gpu::kMvnSmallRowChunk - 1}, {1}), {}, MvnSchedule::kRow, 64);
  op = Mvn1(DataType::kFloat16, {5, n}, {1});
  op.output = MakeTensorDesc(DataType::kFloat16, {5, n}, std::vector<uint64_t>{n + 1, 1});
  Run(op, BlockBudget(1000), MvnSchedule::kTwoPass, 65);
}

// ---- 16-byte texels (kMvnVariantVec4): groups that are runs of whole texels ----

TEST_F(MvnScheduleTest, Vec4RowsFloat32) {
  gpu::PlannerOptions o;
  // 1,000 and 4,092: whole texels but not whole runs of a thread's 16
  // elements; 4: one texel per group; 64- and 256-thread workgroups.
  for (uint64_t n : {1000u, 4092u, 4096u, 4u, 100u}) {
    const OperatorDesc op = Mvn1(DataType::kFloat32, {5, n}, {1});
    RunTexels(op, o, true, MvnSchedule::kRow, 40 + static_cast<uint32_t>(n % 97));
  }
  Run(Mvn1(DataType::kFloat32, {5, 904}, {1}), o, MvnSchedule::kRow, 41, 0.05, 1e4);
  o.max_groups = 4;  // 13 groups: a 4 x 4 grid with 3 idle workgroups
  Run(Mvn1(DataType::kFloat32, {13, 100}, {1}), o, MvnSchedule::kRow, 42);
  o.mvn_wide_row = true;  // 1,024 threads of 32 elements
  const OperatorDesc wide = Mvn1(DataType::kFloat32, {3, 30000}, {1});
  RunTexels(wide, o, true, MvnSchedule::kRow, 43);
}

TEST_F(MvnScheduleTest, MediumRowsOf512Threads) {
  // Groups of 4,097 to 8,192 texel-loaded elements: 512 threads of 16
  // (kMvnVariantMediumRow). 4,104: the last 7 of 513 texels of a thread
  // row in use; 8,192: every lane; 6,000 FLOAT16: a part-filled texel run.
  gpu::PlannerOptions o;
  auto medium = [&](const OperatorDesc& op) {
    absl::StatusOr<gpu::DispatchPlan> plan = gpu::PlanExecution(op, false, o);
    ASSERT_TRUE(plan.ok()) << plan.status();
    ASSERT_EQ(plan->dispatches.size(), 1u);
    EXPECT_EQ(plan->dispatches[0].key.variant & gpu::kMvnVariantMediumRow,
              gpu::kMvnVariantMediumRow);
  };
  uint32_t seed = 120;
  for (uint64_t n : {4104u, 8192u}) {
    const OperatorDesc op = Mvn1(DataType::kFloat32, {3, n}, {1});
    medium(op);
    RunTexels(op, o, true, MvnSchedule::kRow, seed++);
  }
  Run(Mvn1(DataType::kFloat32, {2, 8192}, {1}, false), o, MvnSchedule::kRow, seed++, 0.05, 1e4);
  for (uint64_t n : {6000u, 8192u}) {
    OperatorDesc op = Mvn1(DataType::kFloat16, {3, n}, {1});
    op.scale = MakeTensorDesc(DataType::kFloat16, {1, n});
    op.bias = MakeTensorDesc(DataType::kFloat16, {1, n});
    op.fused_activation = Fused(OperatorType::kActivationElu, 0.5f);
    medium(op);
    RunTexels(op, o, true, MvnSchedule::kRow, seed++);
  }
}

TEST_F(MvnScheduleTest, Vec4RowsFloat16WithScaleBiasAndFusedActivation) {
  gpu::PlannerOptions o;
  for (uint64_t n : {1000u, 8u, 336u, 4088u, 1024u}) {  // 1,024: every lane of a small row
    OperatorDesc op = Mvn1(DataType::kFloat16, {4, n}, {1});
    op.scale = MakeTensorDesc(DataType::kFloat16, {1, n});
    op.bias = MakeTensorDesc(DataType::kFloat16, {4, 1});
    op.fused_activation = Fused(OperatorType::kActivationElu, 0.7f);
    RunTexels(op, o, true, MvnSchedule::kRow, 50 + static_cast<uint32_t>(n % 89));
  }
  o.mvn_wide_row = true;
  OperatorDesc op = Mvn1(DataType::kFloat16, {2, gpu::kMvnWideRowChunk}, {1});
  op.scale = MakeTensorDesc(DataType::kFloat16, {1, gpu::kMvnWideRowChunk});
  op.bias = MakeTensorDesc(DataType::kFloat16, {1, gpu::kMvnWideRowChunk});
  op.fused_activation = Fused(OperatorType::kActivationLeakyRelu, 0.1f);
  RunTexels(op, o, true, MvnSchedule::kRow, 51);
}

TEST_F(MvnScheduleTest, Vec4PaddedGroupsAndMvnCrossChannel) {
  // Output rows padded to 1,008 (FLOAT32) and input rows to 1,016
  // (FLOAT16): group starts stay 16-byte aligned.
  OperatorDesc op = Mvn1(DataType::kFloat32, {4, 1000}, {1});
  op.output = MakeTensorDesc(DataType::kFloat32, {4, 1000}, std::vector<uint64_t>{1008, 1});
  RunTexels(op, {}, true, MvnSchedule::kRow, 60);
  op = Mvn1(DataType::kFloat16, {3, 1000}, {1});
  op.input = MakeTensorDesc(DataType::kFloat16, {3, 1000}, std::vector<uint64_t>{1016, 1});
  RunTexels(op, {}, true, MvnSchedule::kRow, 61);
  // MVN over {C, H, W} / {H, W} with Scale/Bias per channel: two inner
  // dimensions for Scale/Bias (rank 2 with cross channel), packed input.
  for (uint32_t cross : {0u, 1u}) {
    op = MvnPerChannel({2, 3, 7, 8}, cross);
    RunTexels(op, {}, true, MvnSchedule::kRow, 62 + cross);
  }
}

TEST_F(MvnScheduleTest, Vec4TwoPassAndBlocked) {
  // Groups of up to 32,768 take the wide row kernel by default: the row
  // schedule is turned off to reach the two passes and blocks with them.
  gpu::PlannerOptions no_row;
  no_row.mvn_row = false;
  // Two passes: 10,000 (3 chunks, the last one partial) and 40,008 FLOAT16
  // (beyond the wide row: two passes by default).
  OperatorDesc op = Mvn1(DataType::kFloat32, {3, 10000}, {1});
  op.scale = MakeTensorDesc(DataType::kFloat32, {3, 10000});
  op.fused_activation = Fused(OperatorType::kActivationSigmoid);
  RunTexels(op, no_row, true, MvnSchedule::kTwoPass, 70);
  // With a Scale the wide row is the planner's choice only when forced.
  RunTexels(op, {}, true, MvnSchedule::kTwoPass, 74);
  gpu::PlannerOptions wide;
  wide.mvn_wide_row = true;
  RunTexels(op, wide, true, MvnSchedule::kRow, 75);
  op = Mvn1(DataType::kFloat16, {2, 40008}, {1});
  op.bias = MakeTensorDesc(DataType::kFloat16, {2, 1});
  RunTexels(op, {}, true, MvnSchedule::kTwoPass, 71);
  op = Mvn1(DataType::kFloat32, {3, 9000}, {1}, /*normalize_variance=*/false);
  Run(op, no_row, MvnSchedule::kTwoPass, 72, 1.0, 1e4);
  // Blocked: blocks of 2 of 7 groups (odd last block), Scale/Bias, fused.
  op = Mvn1(DataType::kFloat16, {7, 8200}, {1});
  op.scale = MakeTensorDesc(DataType::kFloat16, {1, 8200});
  op.bias = MakeTensorDesc(DataType::kFloat16, {1, 8200});
  op.fused_activation = Fused(OperatorType::kActivationCelu, 1.5f);
  gpu::PlannerOptions blocked = BlockBudget(2 * 8200 * 2);
  blocked.mvn_row = false;
  RunTexels(op, blocked, true, MvnSchedule::kBlocked, 73);
  op = Mvn1(DataType::kFloat32, {5, 6000}, {1});
  blocked = BlockBudget(6000 * 4);
  blocked.mvn_row = false;
  RunTexels(op, blocked, true, MvnSchedule::kBlocked, 74, 0.05, 1e4);
}

// Whether every normalising dispatch of `op`'s plan loads Scale/Bias as
// texels (kMvnVariantVec4ScaleBias), or none does.
::testing::AssertionResult TakesScaleBiasTexels(const OperatorDesc& op,
                                                const gpu::PlannerOptions& o, bool want) {
  absl::StatusOr<gpu::DispatchPlan> plan = gpu::PlanExecution(op, false, o);
  if (!plan.ok()) return ::testing::AssertionFailure() << plan.status();
  for (const gpu::Dispatch& d : plan->dispatches) {
    if (d.key.stage == KernelStage::kMvnPartial) continue;
    if (((d.key.variant & gpu::kMvnVariantVec4ScaleBias) != 0) != want) {
      return ::testing::AssertionFailure() << d.key.DebugString();
    }
  }
  return ::testing::AssertionSuccess();
}

TEST_F(MvnScheduleTest, ScaleAndBiasTexels) {
  // Per column (a layer norm's weight and bias) in the 64-, 256- and
  // 1,024-thread row kernels and the two passes, FLOAT32 and FLOAT16, with
  // fused activations; per element (outer stride N); Scale or Bias alone.
  gpu::PlannerOptions no_row;
  no_row.mvn_row = false;
  gpu::PlannerOptions wide;
  wide.mvn_wide_row = true;
  struct Case {
    DataType t;
    std::vector<uint64_t> sizes, scale, bias;  // empty: absent
    gpu::PlannerOptions o;
    MvnSchedule::Kind kind;
    OperatorType fused;
  };
  const Case cases[] = {
      {DataType::kFloat32, {5, 1000}, {1, 1000}, {1, 1000}, {}, MvnSchedule::kRow,
       OperatorType::kInvalid},
      {DataType::kFloat16, {4, 336}, {1, 336}, {1, 336}, {}, MvnSchedule::kRow,
       OperatorType::kActivationElu},
      {DataType::kFloat32, {3, 4092}, {3, 4092}, {}, {}, MvnSchedule::kRow,
       OperatorType::kActivationSigmoid},
      {DataType::kFloat16, {3, 4088}, {}, {3, 4088}, {}, MvnSchedule::kRow,
       OperatorType::kInvalid},
      {DataType::kFloat32, {3, 10000}, {1, 10000}, {1, 10000}, {}, MvnSchedule::kTwoPass,
       OperatorType::kActivationCelu},
      {DataType::kFloat16, {2, 40008}, {2, 40008}, {1, 40008}, {}, MvnSchedule::kTwoPass,
       OperatorType::kInvalid},
      {DataType::kFloat32, {3, 9000}, {1, 9000}, {1, 9000}, no_row, MvnSchedule::kTwoPass,
       OperatorType::kActivationLeakyRelu},
      {DataType::kFloat32, {2, 30000}, {1, 30000}, {1, 30000}, wide, MvnSchedule::kRow,
       OperatorType::kInvalid},
      {DataType::kFloat16, {2, gpu::kMvnWideRowChunk}, {1, gpu::kMvnWideRowChunk},
       {1, gpu::kMvnWideRowChunk}, wide, MvnSchedule::kRow, OperatorType::kActivationGelu},
      // FLOAT16 takes the wide row by default with Scale/Bias texels where
      // its groups fill it (FillsWideRow), and not below.
      {DataType::kFloat16, {2, 32000}, {1, 32000}, {2, 32000}, {}, MvnSchedule::kRow,
       OperatorType::kInvalid},
      {DataType::kFloat16, {2, 30000}, {1, 30000}, {2, 30000}, {}, MvnSchedule::kTwoPass,
       OperatorType::kInvalid},
  };
  uint32_t seed = 90;
  for (const Case& c : cases) {
    OperatorDesc op = Mvn1(c.t, c.sizes, {1});
    if (!c.scale.empty()) op.scale = MakeTensorDesc(c.t, c.scale);
    if (!c.bias.empty()) op.bias = MakeTensorDesc(c.t, c.bias);
    if (c.fused != OperatorType::kInvalid) op.fused_activation = Fused(c.fused, 0.5f);
    ASSERT_TRUE(TakesScaleBiasTexels(op, c.o, true)) << c.sizes[1];
    RunTexels(op, c.o, true, c.kind, seed++);
  }
  // Blocked, with blocks of 2 of 7 groups; Scale per row padded to 8,208
  // FLOAT16 (whole texels), Bias per column.
  OperatorDesc op = Mvn1(DataType::kFloat16, {7, 8200}, {1});
  op.scale = MakeTensorDesc(DataType::kFloat16, {7, 8200}, std::vector<uint64_t>{8208, 1});
  op.bias = MakeTensorDesc(DataType::kFloat16, {1, 8200});
  gpu::PlannerOptions blocked = BlockBudget(2 * 8200 * 2);
  blocked.mvn_row = false;
  ASSERT_TRUE(TakesScaleBiasTexels(op, blocked, true));
  RunTexels(op, blocked, true, MvnSchedule::kBlocked, seed++);
  // Dedicated buffers and views (the request is above half of a 64 KiB
  // arena) instead of the arena's tables: a Scale per element and a Bias
  // per column.
  {
    absl::StatusOr<std::unique_ptr<d3d12::GpuEngine>> engine = MakeEngine({}, 64 << 10);
    ASSERT_TRUE(engine.ok()) << engine.status();
    for (DataType t : {DataType::kFloat32, DataType::kFloat16}) {
      OperatorDesc d = Mvn1(t, {4, 10000}, {1});
      d.scale = MakeTensorDesc(t, {4, 10000});
      d.bias = MakeTensorDesc(t, {1, 10000});
      ASSERT_TRUE(TakesScaleBiasTexels(d, {}, true));
      ExecuteRequest r;
      r.op = d;
      r.input = Payload(*d.input, RandomValues(40000, seed, 3.0));
      r.scale = Payload(*d.scale, RandomValues(40000, seed + 1, 2.0));
      r.bias = Payload(*d.bias, RandomValues(10000, seed + 2, 1.0));
      ++seed;
      EXPECT_TRUE(MatchesCpu(**engine, r));
    }
    EXPECT_EQ((*engine)->stats().dedicated_requests, 2u);
  }
  // Off: a Bias per row beside a Scale per column keeps both on words;
  // so does the option.
  op = Mvn1(DataType::kFloat32, {4, 1000}, {1});
  op.scale = MakeTensorDesc(DataType::kFloat32, {1, 1000});
  op.bias = MakeTensorDesc(DataType::kFloat32, {4, 1});
  ASSERT_TRUE(TakesScaleBiasTexels(op, {}, false));
  RunTexels(op, {}, true, MvnSchedule::kRow, seed++);
  gpu::PlannerOptions off;
  off.mvn_vec4_scale_bias = false;
  op.bias = MakeTensorDesc(DataType::kFloat32, {1, 1000});
  ASSERT_TRUE(TakesScaleBiasTexels(op, off, false));
  RunTexels(op, off, true, MvnSchedule::kRow, seed++);
}

TEST_F(MvnScheduleTest, WordLoadsWhereGroupsAreNotWholeTexels) {
  // N not whole texels; misaligned group starts; the option off.
  OperatorDesc op = Mvn1(DataType::kFloat16, {4, 1004}, {1});
  RunTexels(op, {}, false, MvnSchedule::kRow, 80);
  op = Mvn1(DataType::kFloat32, {4, 1000}, {1});
  op.input = MakeTensorDesc(DataType::kFloat32, {4, 1000}, std::vector<uint64_t>{1002, 1});
  RunTexels(op, {}, false, MvnSchedule::kRow, 81);
  gpu::PlannerOptions o = BlockBudget(2 * 8200 * 2);
  o.mvn_vec4 = false;
  op = Mvn1(DataType::kFloat16, {5, 8200}, {1});
  RunTexels(op, o, false, MvnSchedule::kBlocked, 82);
}

}  // namespace
}  // namespace dmls::mvn_testing
