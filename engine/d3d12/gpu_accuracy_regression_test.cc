// Accuracy regression cases of the activations through the real GpuEngine
// (the software adapter, or the GPU with DMLS_KERNELS_TEST_ADAPTER=gpu)
// against the binary64 CPU reference, judged on relative terms only: the
// TRANSCENDENTAL class of OPERATORS.md §8 without its absolute allowance
// (FLOAT32: 4 ulp or 4e-6 relative; FLOAT16: 2 ulp). References that are
// denormal in float32 accept a flushed result (§7.5); NaN and infinities
// must match. Each case is a shape that failed somewhere: GELU's 1 + erf
// cancellation (436 ulp on the H100), CELU with Alpha = +-FLT_MAX collapsing
// to 0 (H100, and lavapipe for |x| near FLT_MIN), denormal CELU Alpha /
// SOFTPLUS Steepness that the driver flushed to an illegal 0 (H100), and
// PARAMETRIC_SOFTPLUS with Alpha = FLT_MIN giving NaN for +inf (H100).
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/execute_sync.h"
#include "engine/d3d12/test_adapter.h"
#include "absl/strings/str_cat.h"
#include "engine/cpu/activations.h"
#include "engine/cpu/float16.h"
#include "engine/d3d12/dxbc_engine.h"
#include "engine/ops/validator.h"
#include "gtest/gtest.h"

namespace dmls::d3d12 {
namespace {

constexpr float kDenormMin = 0x1p-149f;  // 1.4e-45

// Inputs for the parameter cases: both signs of values from the smallest
// denormal to the largest float, each binade's ends, 0 and infinities.
std::vector<float> EdgeInputs() {
  std::vector<float> v = {0.0f, -0.0f, INFINITY, -INFINITY};
  for (int e = -149; e <= 127; e += 3) {
    for (float m : {1.0f, 1.5f, 1.99999988f}) {
      const float x = std::ldexp(m, e);
      if (std::isinf(x)) continue;
      v.push_back(x);
      v.push_back(-x);
    }
  }
  for (float x : {FLT_MIN, FLT_MAX, kDenormMin, 20 * kDenormMin, 60 * kDenormMin, 2.35098856e-38f,
                  0.35f, 1.0f, 80.0f, 100.0f}) {
    v.push_back(x);
    v.push_back(-x);
  }
  return v;
}

class GpuAccuracyRegressionTest : public ::testing::Test {
 protected:
  // One engine for the whole program (created on first use, never
  // destroyed: the process exit ends it).
  static GpuEngine* SharedEngine() {
    static GpuEngine* engine = [] {
      GpuEngineOptions o;
      o.device.kind = TestAdapterKind();
      o.poison_outputs = true;
      o.logger = nullptr;
      absl::StatusOr<std::unique_ptr<GpuEngine>> e = CreateGpuEngine(std::move(o));
      EXPECT_TRUE(e.ok()) << e.status();
      return e.ok() ? e->release() : nullptr;
    }();
    return engine;
  }

  // Runs the activation on `xs` (as FLOAT32 or FLOAT16) and returns the
  // outputs as doubles.
  static std::vector<double> Run(OperatorType type, std::optional<float> p0,
                                 std::optional<float> p1, const std::vector<float>& xs,
                                 bool half) {
    OperatorDesc op;
    op.type = static_cast<uint32_t>(type);
    op.activation = {p0, p1};
    op.input = MakeTensorDesc(half ? DataType::kFloat16 : DataType::kFloat32, {1, 1, 1, xs.size()});
    op.output = op.input;
    EXPECT_TRUE(ops::Validate(op, static_cast<uint32_t>(kHighestFeatureLevel), false).ok());
    ExecuteRequest r;
    r.op = op;
    for (float x : xs) {
      if (half) {
        const uint16_t h = cpu::FloatToHalfBits(x);
        r.input.mutable_string().append(reinterpret_cast<const char*>(&h), 2);
      } else {
        r.input.mutable_string().append(reinterpret_cast<const char*>(&x), 4);
      }
    }
    r.input.mutable_string().resize(op.input->total_tensor_size_in_bytes, '\0');
    GpuEngine* engine = SharedEngine();
    if (engine == nullptr) return {};
    absl::StatusOr<ExecuteResult> res = ExecuteSync(*engine, std::move(r));
    EXPECT_TRUE(res.ok()) << res.status();
    std::vector<double> out;
    if (!res.ok()) return out;
    for (size_t i = 0; i < xs.size(); ++i) {
      if (half) {
        uint16_t h;
        std::memcpy(&h, res->output.data() + i * 2, 2);
        out.push_back(cpu::HalfBitsToDouble(h));
      } else {
        float f;
        std::memcpy(&f, res->output.data() + i * 4, 4);
        out.push_back(f);
      }
    }
    return out;
  }

  // Every element within the relative TRANSCENDENTAL budget; reports the
  // failures (at most 10).
  static void Check(OperatorType type, std::optional<float> p0, std::optional<float> p1,
                    std::vector<float> xs, bool half) {
    if (half) {
      for (float& x : xs) x = cpu::HalfBitsToFloat(cpu::FloatToHalfBits(x));
    }
    const std::vector<double> got = Run(type, p0, p1, xs, half);
    ASSERT_EQ(got.size(), xs.size());
    const cpu::ActivationFn fn = cpu::FindActivation(static_cast<uint32_t>(type));
    const cpu::ActivationArgs args{p0.value_or(0.0f), p1.value_or(0.0f)};
    int failures = 0;
    // Within budget of the reference for x as given, or (FLOAT32) for a
    // denormal x flushed to a zero of its sign: OPERATORS.md §7.5 lets the
    // device flush denormal inputs before arithmetic (the H100 does).
    const auto matches = [half](double g, double ref) {
      const double want = half ? cpu::RoundToHalf(ref) : static_cast<double>(static_cast<float>(ref));
      if (std::isnan(want) || std::isnan(g)) return std::isnan(want) && std::isnan(g);
      if (std::isinf(want) || std::isinf(g)) return want == g;
      int e2;
      std::frexp(want, &e2);
      const double ulp = std::ldexp(1.0, std::max(e2 - 1, half ? -14 : -126) - (half ? 10 : 23));
      const double diff = std::fabs(g - ref);
      // A denormal result may also be flushed (the H100's Alpha*x + FLT_MIN
      // with a denormal product flushed gave FLT_MIN: 0.6 ulp off).
      if (!half && std::fabs(want) < FLT_MIN && std::fabs(g) < FLT_MIN) return true;
      return diff <= (half ? 2 : 4) * ulp || (!half && diff <= 4e-6 * std::fabs(ref)) || g == want;
    };
    for (size_t i = 0; i < xs.size() && failures < 10; ++i) {
      const double ref = fn(xs[i], args);
      const double g = got[i];
      bool ok = matches(g, ref);
      if (!ok && !half && xs[i] != 0.0f && std::fabs(xs[i]) < FLT_MIN) {
        ok = matches(g, fn(std::copysign(0.0f, xs[i]), args));
      }
      if (!ok) {
        ++failures;
        ADD_FAILURE() << (half ? "FLOAT16 " : "FLOAT32 ") << "x=" << xs[i] << " got " << g
                      << " want " << ref;
      }
    }
  }
};

TEST_F(GpuAccuracyRegressionTest, GeluNegativeInputsAreRelativelyAccurate) {
  // 436 ulp on the H100 and 2e7 ulp near -5.5 on lavapipe from 1 + erf(x).
  std::vector<float> xs;
  for (float x = -14.0f; x < 0.0f; x += 0.0137f) xs.push_back(x);
  for (float x = -1e-3f; x > -1e-30f; x *= 0.37f) xs.push_back(x);
  for (float x = 1e-30f; x < 20.0f; x *= 1.7f) xs.push_back(x);
  Check(OperatorType::kActivationGelu, {}, {}, xs, false);
  Check(OperatorType::kActivationGelu, {}, {}, xs, true);
}

TEST_F(GpuAccuracyRegressionTest, CeluHugeAlpha) {
  // Alpha*(exp(x/Alpha) - 1) collapsed to 0 (H100: 14 cases, FLOAT32 and
  // FLOAT16; lavapipe for x near -FLT_MIN).
  for (float alpha : {FLT_MAX, -FLT_MAX, 0x1p126f, -0x1p125f, 1e30f}) {
    SCOPED_TRACE(alpha);
    Check(OperatorType::kActivationCelu, alpha, {}, EdgeInputs(), false);
    Check(OperatorType::kActivationCelu, alpha, {}, EdgeInputs(), true);
  }
}

TEST_F(GpuAccuracyRegressionTest, CeluDenormalAlpha) {
  // A driver flushing Alpha = -1.4e-45 to -0 took the Alpha > 0 path and
  // gave 0 where -inf is right (H100).
  for (float alpha : {-kDenormMin, kDenormMin, -FLT_MIN / 3, FLT_MIN / 3, -FLT_MIN, FLT_MIN}) {
    SCOPED_TRACE(alpha);
    Check(OperatorType::kActivationCelu, alpha, {}, EdgeInputs(), false);
    Check(OperatorType::kActivationCelu, alpha, {}, EdgeInputs(), true);
  }
}

TEST_F(GpuAccuracyRegressionTest, SoftplusDenormalSteepness) {
  // Steepness = -1.4e-45 flushed to -0: -0 * inf = NaN for infinite x.
  for (float s : {-kDenormMin, kDenormMin, -FLT_MIN / 5, FLT_MIN / 5}) {
    SCOPED_TRACE(s);
    Check(OperatorType::kActivationSoftplus, s, {}, EdgeInputs(), false);
    Check(OperatorType::kActivationSoftplus, s, {}, EdgeInputs(), true);
  }
}

TEST_F(GpuAccuracyRegressionTest, SoftplusHugeSteepness) {
  // softplus(S*x)/S with S beyond 2^126: NVIDIA's division gives 0 there.
  for (float s : {FLT_MAX, -FLT_MAX, 0x1p126f}) {
    SCOPED_TRACE(s);
    Check(OperatorType::kActivationSoftplus, s, {}, EdgeInputs(), false);
    Check(OperatorType::kActivationSoftplus, s, {}, EdgeInputs(), true);
  }
}

TEST_F(GpuAccuracyRegressionTest, ParametricSoftplusFltMinAlpha) {
  // Alpha*Beta flushed to 0 made (Alpha*Beta)*inf = NaN (H100).
  for (float beta : {1.0f, 0.5f, 1e-10f, 1e30f}) {
    SCOPED_TRACE(beta);
    Check(OperatorType::kActivationParametricSoftplus, FLT_MIN, beta, EdgeInputs(), false);
    Check(OperatorType::kActivationParametricSoftplus, FLT_MIN, beta, EdgeInputs(), true);
    Check(OperatorType::kActivationParametricSoftplus, -FLT_MIN, beta, EdgeInputs(), false);
  }
}

TEST_F(GpuAccuracyRegressionTest, SmallParameterTimesLargeParameter) {
  // A denormal intermediate (Alpha*expm1(x), Beta*x) flushed to 0 where the
  // result is normal.
  Check(OperatorType::kActivationScaledElu, FLT_MIN, 1e30f, EdgeInputs(), false);
  Check(OperatorType::kActivationScaledElu, 1e-40f, 1e35f, EdgeInputs(), false);
  Check(OperatorType::kActivationScaledTanh, 1e30f, FLT_MIN, EdgeInputs(), false);
  Check(OperatorType::kActivationScaledTanh, 1e35f, 1e-40f, EdgeInputs(), false);
}

TEST_F(GpuAccuracyRegressionTest, EluAndScaledEluExtremeAlpha) {
  for (float alpha : {FLT_MAX, -FLT_MAX, 1e-30f, FLT_MIN}) {
    SCOPED_TRACE(alpha);
    Check(OperatorType::kActivationElu, alpha, {}, EdgeInputs(), false);
    Check(OperatorType::kActivationScaledElu, alpha, 1.0507f, EdgeInputs(), false);
  }
}

}  // namespace
}  // namespace dmls::d3d12
