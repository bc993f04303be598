// Regression tests of the MVN statistics on the Direct3D 12 engine, in
// every planner schedule (row, wide row, blocked, two-pass; 16-byte texel
// loads, and word loads in the row_words and two_pass_words runs):
//  * overflow: groups whose squared deviations exceed FLT_MAX while the
//    double-precision result is finite (a randomized differential check
//    found [9.3e18, -9.3e18] coming back NaN: the square overflows once
//    values differ by sqrt(FLT_MAX)); OPERATORS.md §4.3.1 and §7.4;
//  * tiny groups whose float32 variance is denormal (§7.5: flushed to 0 by
//    the H100 before the statistics were scaled up);
//  * NormalizeVariance FALSE with ±Inf (§4.3.1): finite members give ∓inf,
//    infinite ones NaN, both signs or a NaN make the whole group NaN; with
//    NormalizeVariance TRUE an infinity makes the group NaN.
// Expected values are written out where they are exact, and every case is
// also compared with the CPU engine (binary64).
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <ostream>
#include <vector>

#include "engine/plan/planner.h"
#include "gtest/gtest.h"
#include "tests/mvn/mvn_gpu_test_util.h"

namespace dmls::mvn_testing {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kFltMax = std::numeric_limits<float>::max();

// The schedules, by group length and planner options: groups of up to
// 1,024 take the 64-thread row kernel, up to 32,768 the 1,024-thread one;
// longer ones the blocked plan (budget of one group), the two-pass one
// (budget below one group) or the cooperative one (with waiting, and with
// one poll: the fallback of a normalisation task that stops waiting).
// The cooperative schedule's poll limit in tests: the software adapter runs
// only as many workgroups at once as it has CPU threads, so its
// normalisation tasks may stop waiting; a small limit keeps that quick.
constexpr uint32_t kTestSpinLimit = 4096;
// Groups of these lengths are whole 16-byte texels of either type, so the
// row, blocked and two-pass schedules load texels (kMvnVariantVec4) unless
// `words` turns that off (PlannerOptions::mvn_vec4).
struct Schedule {
  const char* name;
  uint64_t n;
  uint64_t block_bytes;
  bool words = false;
  bool wide = false;  // PlannerOptions::mvn_wide_row: take the 1,024-thread row
  // Runs every case of PreActivationBeyondFloat32, not only those marked
  // `every_schedule`: each case is a kernel of its own for every schedule
  // (the fused activation is part of the key), and on lavapipe with an
  // empty shader cache all of them on every schedule took 360 s of CI.
  bool all_activations = false;
};
void PrintTo(const Schedule& s, std::ostream* os) { *os << s.name; }
const Schedule kSchedules[] = {
    {"row", 1000, 0, /*words=*/false, /*wide=*/false, /*all_activations=*/true},
    {"wide_row", 9000, 0, /*words=*/false, /*wide=*/true},
    {"blocked", 40000, 1},
    {"two_pass", 40000, 2, /*words=*/false, /*wide=*/false, /*all_activations=*/true},
    {"coop", 40000, 3},
    {"coop_alone", 40000, 4},
    {"row_words", 1000, 0, /*words=*/true},
    {"two_pass_words", 40000, 2, /*words=*/true}};

class MvnNumericsTest : public ::testing::TestWithParam<Schedule> {
 protected:
  static uint64_t GroupLength() { return GetParam().n; }

  gpu::PlannerOptions Options(uint64_t group_bytes) const {
    gpu::PlannerOptions o;
    if (GetParam().block_bytes == 1) o.mvn_block_bytes = group_bytes;      // blocks of one
    if (GetParam().block_bytes == 2) o.mvn_block_bytes = group_bytes - 1;  // fallback
    if (GetParam().block_bytes >= 3) o.mvn_coop_max_chunks = gpu::kMvnCoopMaxChunks;
    // Cooperative, a normalisation task that does not find its group's
    // statistic at its one poll computing it alone.
    if (GetParam().block_bytes == 4) o.mvn_coop_spin_limit = 0;
    if (GetParam().block_bytes == 3) o.mvn_coop_spin_limit = kTestSpinLimit;
    o.mvn_vec4 = !GetParam().words;
    // Groups of 9,000 fill too little of the wide row for the planner to
    // take it by itself (FillsWideRow).
    o.mvn_wide_row = GetParam().wide;
    return o;
  }

  // Runs MVN1 over the last axis of `groups` rows of GroupLength() elements,
  // row g holding `rows[g]` at its start and `fill[g]` elsewhere. Returns
  // the GPU's rows after checking them against the CPU engine.
  std::vector<std::vector<double>> Run(DataType type, const std::vector<std::vector<double>>& rows,
                                       const std::vector<double>& fill, bool normalize_variance,
                                       float epsilon = 1e-5f) {
    const uint64_t n = GroupLength(), groups = rows.size();
    OperatorDesc op = Mvn1(type, {groups, n}, {1}, normalize_variance);
    op.epsilon = epsilon;
    std::vector<double> x(groups * n);
    for (uint64_t g = 0; g < groups; ++g) {
      for (uint64_t i = 0; i < n; ++i) {
        x[g * n + i] = i < rows[g].size() ? rows[g][i] : fill[g];
      }
    }
    ExecuteRequest r;
    r.op = op;
    r.input = Payload(*op.input, x);
    const gpu::PlannerOptions o = Options(n * ElementBits(type) / 8);
    absl::StatusOr<gpu::DispatchPlan> plan = gpu::PlanExecution(op, false, o);
    EXPECT_TRUE(plan.ok()) << plan.status();
    if (!plan.ok()) return {};
    const bool vec4 = GetParam().block_bytes < 3 && !GetParam().words;
    for (const gpu::Dispatch& d : plan->dispatches) {
      EXPECT_EQ((d.key.variant & gpu::kMvnVariantVec4) != 0, vec4) << d.key.DebugString();
    }
    absl::StatusOr<std::unique_ptr<d3d12::GpuEngine>> engine = MakeEngine(o);
    EXPECT_TRUE(engine.ok()) << engine.status();
    if (!engine.ok()) return {};
    EXPECT_TRUE(MatchesCpu(**engine, r)) << GetParam().name;
    absl::StatusOr<std::vector<double>> got = RunGpu(**engine, r);
    EXPECT_TRUE(got.ok()) << got.status();
    if (!got.ok()) return {};
    std::vector<std::vector<double>> out(groups);
    for (uint64_t g = 0; g < groups; ++g) {
      out[g].assign(got->begin() + g * n, got->begin() + (g + 1) * n);
    }
    return out;
  }

  // MVN1 FLOAT32 with NormalizeVariance FALSE over the last axis of `groups`
  // rows of GroupLength() elements (`x`, row-major), Scale and Bias [1, n]
  // filled with `scale` and `bias`, and `act` fused (kInvalid: none).
  // Returns the GPU's output after checking it against the CPU engine.
  std::vector<double> RunScaleBias(const std::vector<double>& x, uint64_t groups, double scale,
                                   double bias, OperatorType act, float p0 = 0, float p1 = 0) {
    const uint64_t n = GroupLength();
    OperatorDesc op = Mvn1(DataType::kFloat32, {groups, n}, {1}, false);
    op.scale = MakeTensorDesc(DataType::kFloat32, {1, n});
    op.bias = MakeTensorDesc(DataType::kFloat32, {1, n});
    if (act != OperatorType::kInvalid) {
      FusedActivationDesc f;
      f.type = static_cast<uint32_t>(act);
      f.params = {p0, p1};
      op.fused_activation = f;
    }
    ExecuteRequest r;
    r.op = op;
    r.input = Payload(*op.input, x);
    r.scale = Payload(*op.scale, {scale});
    r.bias = Payload(*op.bias, {bias});
    absl::StatusOr<std::unique_ptr<d3d12::GpuEngine>> engine = MakeEngine(Options(n * 4));
    EXPECT_TRUE(engine.ok()) << engine.status();
    if (!engine.ok()) return {};
    EXPECT_TRUE(MatchesCpu(**engine, r)) << GetParam().name;
    absl::StatusOr<std::vector<double>> got = RunGpu(**engine, r);
    EXPECT_TRUE(got.ok()) << got.status();
    return got.ok() ? *got : std::vector<double>();
  }
};

// The value at position i of a two-valued group {a at [0, k), b elsewhere}.
TEST_P(MvnNumericsTest, SquaredDeviationsBeyondFltMaxStayFinite) {
  const uint64_t n = GroupLength(), half = n / 2;
  // Rows: half +v, half -v, for v from 9.2e18 (fine before) to FLT_MAX.
  const std::vector<double> v = {9.2e18, 9.3e18, 1e30, 3e38, kFltMax};
  std::vector<std::vector<double>> rows;
  std::vector<double> fill;
  for (double a : v) {
    rows.push_back(std::vector<double>(half, a));
    fill.push_back(-a);
  }
  const auto out = Run(DataType::kFloat32, rows, fill, true);
  ASSERT_EQ(out.size(), v.size());
  for (size_t g = 0; g < v.size(); ++g) {
    for (uint64_t i = 0; i < n; ++i) {
      ASSERT_NEAR(out[g][i], i < half ? 1.0 : -1.0, 1e-5) << "v=" << v[g] << " i=" << i;
    }
  }
}

TEST_P(MvnNumericsTest, HugeGroupsMixedWithSmallValuesAndConstants) {
  const uint64_t n = GroupLength();
  std::vector<double> noise = RandomValues(n, 5, 1.0);
  std::vector<double> huge = RandomValues(n, 6, 3e38);
  std::vector<double> one_huge = noise;
  one_huge[n - 1] = 1e35;  // small values everywhere but one (other chunk/thread)
  std::vector<double> offset = RandomValues(n, 7, 1e28, 2e38);
  const auto out = Run(DataType::kFloat32, {noise, huge, one_huge, offset, {}},
                       {0, 0, 0, 0, 1e30}, true);
  ASSERT_EQ(out.size(), 5u);
  for (double y : out[4]) ASSERT_EQ(y, 0.0);  // constant huge group: exactly Bias
  for (size_t g = 0; g < 4; ++g) {
    for (double y : out[g]) ASSERT_TRUE(std::isfinite(y)) << "row " << g;
  }
  // The same without Epsilon: a constant group is 0/0 (NaN), others finite.
  const auto out0 = Run(DataType::kFloat32, {huge, {}}, {0, 1e30}, true, 0.0f);
  ASSERT_EQ(out0.size(), 2u);
  for (double y : out0[0]) ASSERT_TRUE(std::isfinite(y));
  for (double y : out0[1]) ASSERT_TRUE(std::isnan(y));
}

TEST_P(MvnNumericsTest, NoNormalizeVarianceWithHugeValues) {
  const uint64_t n = GroupLength(), half = n / 2;
  // x - mean = ±3e38 (finite; its square is not).
  const auto out = Run(DataType::kFloat32, {std::vector<double>(half, 3e38)}, {-3e38}, false);
  ASSERT_EQ(out.size(), 1u);
  for (uint64_t i = 0; i < n; ++i) {
    ASSERT_NEAR(out[0][i], i < half ? 3e38 : -3e38, 3e32) << i;
  }
}

TEST_P(MvnNumericsTest, NoNormalizeVarianceWithInfinities) {
  for (DataType type : {DataType::kFloat32, DataType::kFloat16}) {
    SCOPED_TRACE(type == DataType::kFloat32 ? "FLOAT32" : "FLOAT16");
    const uint64_t n = GroupLength(), last = n - 1;
    // Row 0: +inf in the middle; row 1: -inf first (the reference
    // element); row 2: +inf last; row 3: both signs; row 4: a NaN and an
    // inf; row 5: finite (unaffected by its neighbours).
    std::vector<std::vector<double>> rows(6);
    std::vector<double> fill = {1, 2, -3, 4, 5, 0.5};
    rows[0] = std::vector<double>(n / 2 + 1, 1);
    rows[0][n / 2] = kInf;
    rows[1] = {-kInf};
    rows[2] = std::vector<double>(n, -3);
    rows[2][last] = kInf;
    rows[3] = {kInf, 4, -kInf};
    rows[4] = {5, kNaN, kInf};
    rows[5] = RandomValues(n, 9, 2.0);
    const auto out = Run(type, rows, fill, false);
    ASSERT_EQ(out.size(), rows.size());
    for (uint64_t i = 0; i < n; ++i) {
      if (i == n / 2) {
        EXPECT_TRUE(std::isnan(out[0][i])) << i;
      } else {
        EXPECT_EQ(out[0][i], -kInf) << i;
      }
      if (i == 0) {
        EXPECT_TRUE(std::isnan(out[1][i]));
      } else {
        EXPECT_EQ(out[1][i], kInf) << i;
      }
      if (i == last) {
        EXPECT_TRUE(std::isnan(out[2][i]));
      } else {
        EXPECT_EQ(out[2][i], -kInf) << i;
      }
      EXPECT_TRUE(std::isnan(out[3][i])) << i;
      EXPECT_TRUE(std::isnan(out[4][i])) << i;
      EXPECT_TRUE(std::isfinite(out[5][i])) << i;
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST_P(MvnNumericsTest, InfinityWithNormalizeVarianceMakesTheGroupNaN) {
  const uint64_t n = GroupLength();
  const auto out = Run(DataType::kFloat32, {{1, kInf}, RandomValues(n, 3, 1.0)}, {2, 0}, true);
  ASSERT_EQ(out.size(), 2u);
  for (uint64_t i = 0; i < n; ++i) {
    ASSERT_TRUE(std::isnan(out[0][i])) << i;
    ASSERT_TRUE(std::isfinite(out[1][i])) << i;
  }
}

// Tiny groups (OPERATORS.md §7.5): half +v, half -v with Epsilon 0 is ±1
// exactly, but for v below about 1e-19 the float32 variance v^2 is denormal
// and hardware that flushes denormals (the H100) made it 0 (random/0449,
// random/2173: 0/0 or Bias). The statistics scale such groups up by a power
// of two; in the blocked and two-pass schedules the per-chunk partials, and
// the empty statistics of the apply kernel's idle threads, combine at the
// group's scale. Row 0 is a mix (one chunk of tiny values, zeros
// elsewhere); the last row is all zeros (0/0: NaN).
TEST_P(MvnNumericsTest, TinyGroupsDoNotUnderflow) {
  const uint64_t n = GroupLength(), half = n / 2;
  const std::vector<double> v = {1e-15, 1e-21, 3e-27, 1e-30, 1e-35, 1e-37};
  std::vector<std::vector<double>> rows;
  std::vector<double> fill;
  for (double a : v) {
    rows.push_back(std::vector<double>(half, a));
    fill.push_back(-a);
  }
  const auto out = Run(DataType::kFloat32, rows, fill, true, 0.0f);
  ASSERT_EQ(out.size(), v.size());
  for (size_t g = 0; g < v.size(); ++g) {
    for (uint64_t i = 0; i < n; ++i) {
      ASSERT_NEAR(out[g][i], i < half ? 1.0 : -1.0, 1e-5) << "v=" << v[g] << " i=" << i;
    }
  }
  // Tiny values in a group's first elements only, zeros after them, and
  // Epsilon FLT_MIN (random/2173): still the CPU engine's result (checked
  // by Run); a group of zeros is 0/sqrt(FLT_MIN) = 0.
  std::vector<double> first(5);
  for (size_t i = 0; i < first.size(); ++i) first[i] = (i % 2 ? -1e-30 : 3.7e-27) * (i + 1);
  const auto mixed = Run(DataType::kFloat32, {first, {}}, {0, 0}, true,
                         std::numeric_limits<float>::min());
  ASSERT_EQ(mixed.size(), 2u);
  for (double y : mixed[0]) ASSERT_TRUE(std::isfinite(y));
  for (double y : mixed[1]) ASSERT_EQ(y, 0.0);
  // NormalizeVariance FALSE: x - mean, tiny and exact.
  const auto nv = Run(DataType::kFloat32, {std::vector<double>(half, 1e-30)}, {-1e-30}, false);
  ASSERT_EQ(nv.size(), 1u);
  for (uint64_t i = 0; i < n; ++i) {
    ASSERT_NEAR(nv[0][i], i < half ? 1e-30 : -1e-30, 1e-35) << i;
  }
}

// Epsilon FLT_MAX with values near 0.1 (random/0674): eps/s^2 overflows
// in the scaled statistics, yet the result is x/1.8e19, not 0 (a fused
// LEAKY_RELU with Alpha = inf turned 0 into -0 instead of -inf).
TEST_P(MvnNumericsTest, HugeEpsilonWithSmallValues) {
  const uint64_t n = GroupLength(), half = n / 2;
  const auto out = Run(DataType::kFloat32, {std::vector<double>(half, 0.1)}, {-0.1}, true,
                       std::numeric_limits<float>::max());
  ASSERT_EQ(out.size(), 1u);
  const double want = 0.1 / std::sqrt(0.01 + kFltMax);
  for (uint64_t i = 0; i < n; ++i) {
    ASSERT_NEAR(out[0][i] / want, i < half ? 1.0 : -1.0, 1e-5) << i;
  }
}

// A constant group with a denormal Epsilon: deviations 0, so outputs 0
// (the H100 flushed Epsilon and made 0 * inf = NaN; a fresh seed's
// random/2997, with values 0 and Epsilon 1.4e-45). Values 0 (the scale is
// 2^-126: eps/s^2 is normal) and 5 (eps/s^2 is denormal too).
TEST_P(MvnNumericsTest, ConstantGroupWithDenormalEpsilon) {
  const float eps = std::numeric_limits<float>::denorm_min();
  const auto out = Run(DataType::kFloat32, {{0}, {5}}, {0, 5}, true, eps);
  ASSERT_EQ(out.size(), 2u);
  for (uint64_t i = 0; i < GroupLength(); ++i) {
    ASSERT_EQ(out[0][i], 0.0) << i;
    ASSERT_EQ(out[1][i], 0.0) << i;
  }
}

// Pre-activations (x - mean)*Scale + Bias beyond FLT_MAX for finite
// terms: the fused activation's value, not that of a spurious inf
// (OPERATORS.md §7.4; the randomized corpus's random/1271 was
// PARAMETRIC_SOFTPLUS with Alpha = Beta = 0.5 of 3.7e38: 9.2e37, not inf).
// Row 0 is +-3e38 about a mean of 0, so that y = +-3.6e38 with Scale 1.2;
// row 1 is small values (y in range: the fast path). Each case is compared
// with the CPU engine (binary64); the values written out are those of
// the formulas. Every case runs on the row and two-pass schedules; the
// others run the cases marked `every_schedule` (an activation with a
// finite result, one with an infinite one, none), since one function
// (MvnEmitter::Affine, mvn_emitter_normalise.cc) fuses the activation and
// what differs between schedules is how the pre-activation reaches it.
struct BeyondRangeCase {
  const char* name;
  OperatorType act;
  float p0, p1;
  float bias;
  double want_pos, want_neg;  // row 0's results for y = +3.6e38 and -3.6e38
  bool every_schedule = false;
};

TEST_P(MvnNumericsTest, PreActivationBeyondFloat32) {
  const double y = 3.6e38;
  const BeyondRangeCase cases[] = {
      {"parametric_softplus", OperatorType::kActivationParametricSoftplus, 0.5f, 0.5f, 0,
       0.25 * y, 0, /*every_schedule=*/true},
      {"linear", OperatorType::kActivationLinear, 0.25f, 1.0f, 0, 0.25 * y + 1, -0.25 * y + 1},
      {"leaky_relu", OperatorType::kActivationLeakyRelu, 0.01f, 0, 0, kInf, -0.01 * y,
       /*every_schedule=*/true},
      {"scaled_elu", OperatorType::kActivationScaledElu, 1.0f, 0.1f, 0, 0.1 * y, -0.1},
      {"scaled_tanh", OperatorType::kActivationScaledTanh, 2.0f, 1e-38f, 0,
       2 * std::tanh(1e-38 * y), -2 * std::tanh(1e-38 * y)},
      {"hard_sigmoid", OperatorType::kActivationHardSigmoid, 1.2e-38f, 0.5f, 0, 1, 0},
      {"celu", OperatorType::kActivationCelu, 1e38f, 0, 0, kInf,
       1e38 * std::expm1(-y / 1e38)},
      {"softplus", OperatorType::kActivationSoftplus, 1e-38f, 0, 0, kInf,
       std::log1p(std::exp(-1e-38 * y)) / 1e-38},
      {"shrink", OperatorType::kActivationShrink, 3e38f, 1.0f, 0, y - 3e38, -y + 3e38},
      {"gelu", OperatorType::kActivationGelu, 0, 0, 0, kInf, 0},
      // The sum brings the product back: 3.6e38 - 2e38.
      {"identity_bias", OperatorType::kActivationIdentity, 0, 0, -2e38f, y - 2e38, -kInf},
      {"none_bias", OperatorType::kInvalid, 0, 0, 2e38f, kInf, -y + 2e38,
       /*every_schedule=*/true},
  };
  const uint64_t n = GroupLength(), half = n / 2;
  std::vector<double> x(2 * n);
  for (uint64_t i = 0; i < n; ++i) x[i] = i < half ? 3e38 : -3e38;
  const std::vector<double> small = RandomValues(n, 5, 2.0);
  std::copy(small.begin(), small.end(), x.begin() + n);
  for (const BeyondRangeCase& c : cases) {
    if (!GetParam().all_activations && !c.every_schedule) continue;
    SCOPED_TRACE(c.name);
    const std::vector<double> got = RunScaleBias(x, 2, 1.2, c.bias, c.act, c.p0, c.p1);
    ASSERT_EQ(got.size(), 2 * n);
    for (uint64_t i = 0; i < n; ++i) {
      const double want = i < half ? c.want_pos : c.want_neg;
      if (std::isinf(want)) {
        ASSERT_EQ(got[i], want) << i;
      } else {
        ASSERT_NEAR(got[i], want, std::abs(want) * 1e-5 + 1e-30) << i;
      }
      ASSERT_TRUE(std::isfinite(got[n + i])) << i;
    }
  }
}

// A Bias that cancels all but a fraction of (x - mean)*Scale: the result is
// that fraction (the oracle rounds once), not the float32 product's
// rounding error (a randomized run found 0 for 0.41 and -0.49 for -6.6e13).
// x - mean = +-3e7 exactly, Scale = 1.1f, Bias = -float(3e7 * 1.1f).
TEST_P(MvnNumericsTest, BiasCancellingTheProduct) {
  const uint64_t n = GroupLength(), half = n / 2;
  const float scale = 1.1f;
  const float bias = -static_cast<float>(3e7 * static_cast<double>(scale));
  const double want_pos = 3e7 * static_cast<double>(scale) + bias;
  const double want_neg = -3e7 * static_cast<double>(scale) + bias;
  ASSERT_GT(std::abs(want_pos), 0.25);  // not what float32 alone gives
  std::vector<double> x(n);
  for (uint64_t i = 0; i < n; ++i) x[i] = i < half ? 3e7 : -3e7;
  for (OperatorType act : {OperatorType::kInvalid, OperatorType::kActivationSigmoid}) {
    SCOPED_TRACE(act == OperatorType::kInvalid ? "none" : "sigmoid");
    const std::vector<double> got = RunScaleBias(x, 1, scale, bias, act);
    ASSERT_EQ(got.size(), n);
    for (uint64_t i = 0; i < n; ++i) {
      double want = i < half ? want_pos : want_neg;
      if (act != OperatorType::kInvalid) want = 1 / (1 + std::exp(-want));
      ASSERT_NEAR(got[i], want, std::abs(want) * 1e-5) << i;
    }
  }
}

// NormalizeVariance FALSE shows the mean's rounding error unscaled: the
// members q, -4q, -2q, 2q, -4q, -4q, -q, -4q (q = float(2.325e18), all
// exact floats; their float32 partial sums are not) have the mean -2q
// exactly, and the members equal to it must give Bias, not the float32
// mean's error (2^37) times Scale (the randomized run's random/1448 gave 0
// for 0.2177 = sigmoid(Bias)). Exact-mean statistics (mvn_stats_emit.h).
TEST_P(MvnNumericsTest, NoNormalizeVarianceMeanIsExact) {
  const uint64_t n = GroupLength();
  ASSERT_EQ(n % 8, 0u);
  const double q = static_cast<float>(2.325e18);
  const double pattern[8] = {q, -4 * q, -2 * q, 2 * q, -4 * q, -4 * q, -q, -4 * q};
  std::vector<double> x(n);
  for (uint64_t i = 0; i < n; ++i) x[i] = pattern[i % 8];
  const float scale = 1.2616739f, bias = -1.2793217f;
  for (OperatorType act : {OperatorType::kInvalid, OperatorType::kActivationSigmoid}) {
    SCOPED_TRACE(act == OperatorType::kInvalid ? "none" : "sigmoid");
    const std::vector<double> got = RunScaleBias(x, 1, scale, bias, act);
    ASSERT_EQ(got.size(), n);
    for (uint64_t i = 2; i < n; i += 8) {  // -2q: the mean
      const double want = act == OperatorType::kInvalid ? bias : 1 / (1 + std::exp(-bias));
      ASSERT_NEAR(got[i], want, 1e-6) << i;
    }
  }
}

// NormalizeVariance FALSE, group {1, 0, ..., 0}: the deviation of the 1 is
// 1 - 1/n, which float32 rounds (by 1.3e-8 for n = 1,000), and a Bias of
// -float(1 - 1/n) cancels all but that rounding error, which only the
// deviation's low part (DeviationLow, exact-mean mode) carries into the
// exact sum (ExactMad): without it the result is 0 (or an ulp of 1).
TEST_P(MvnNumericsTest, BiasCancellingTheDeviation) {
  const uint64_t n = GroupLength();
  const double d = 1 - 1.0 / static_cast<double>(n);
  const float bias = -static_cast<float>(d);
  const double want = d + bias;
  ASSERT_GT(std::abs(want), 1e-9);  // 1 - 1/n is not a float32
  std::vector<double> x(n, 0.0);
  x[0] = 1;
  const std::vector<double> got = RunScaleBias(x, 1, 1.0, bias, OperatorType::kInvalid);
  ASSERT_EQ(got.size(), n);
  ASSERT_NEAR(got[0], want, std::abs(want) * 1e-3);
  for (uint64_t i = 1; i < n; ++i) {
    const double rest = -1.0 / static_cast<double>(n) + bias;
    ASSERT_NEAR(got[i], rest, std::abs(rest) * 1e-6) << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Schedules, MvnNumericsTest, ::testing::ValuesIn(kSchedules),
                         [](const ::testing::TestParamInfo<Schedule>& p) {
                           return std::string(p.param.name);
                         });

}  // namespace
}  // namespace dmls::mvn_testing
