#include "tests/conformance/tolerance.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "engine/cpu/float16.h"
#include "gtest/gtest.h"

namespace dmls::conformance {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Tolerance Tol(const char* cls, DataType type) {
  absl::StatusOr<Tolerance> t = ToleranceFor(cls, type);
  EXPECT_TRUE(t.ok());
  return *t;
}

double NextFloat(double v, int steps) {
  float f = static_cast<float>(v);
  for (int i = 0; i < steps; ++i) f = std::nextafter(f, INFINITY);
  return f;
}

TEST(Tolerance, TableOfSection8) {
  Tolerance t = Tol("TRANSCENDENTAL", DataType::kFloat32);
  EXPECT_EQ(t.ulp, 4);
  EXPECT_EQ(t.atol, 1e-6);
  EXPECT_EQ(t.rtol, 4e-6);
  t = Tol("NORMALIZATION", DataType::kFloat16);
  EXPECT_EQ(t.ulp, 2);
  EXPECT_EQ(t.atol, 3e-3);
  EXPECT_EQ(t.rtol, 2e-3);
  t = Tol("ARITH", DataType::kFloat16);
  EXPECT_EQ(t.ulp, 1);
  t = Tol("ARITH", DataType::kInt32);  // integers are exact
  EXPECT_EQ(t.ulp, 0);
  EXPECT_EQ(t.atol, 0);
  EXPECT_FALSE(ToleranceFor("LOOSE", DataType::kFloat32).ok());
}

TEST(Tolerance, UlpDistanceCrossesZero) {
  EXPECT_EQ(UlpDistance(1.0, 1.0, DataType::kFloat32), 0);
  EXPECT_EQ(UlpDistance(NextFloat(1.0, 3), 1.0, DataType::kFloat32), 3);
  EXPECT_EQ(UlpDistance(0.0, -0.0, DataType::kFloat32), 0);
  // Smallest denormals on both sides of zero are two steps apart.
  EXPECT_EQ(UlpDistance(1e-45, -1e-45, DataType::kFloat32), 2);
  EXPECT_EQ(UlpDistance(cpu::HalfBitsToDouble(0x3c01), 1.0, DataType::kFloat16),
            1);
  EXPECT_EQ(UlpDistance(cpu::HalfBitsToDouble(0x8001),
                        cpu::HalfBitsToDouble(0x0001), DataType::kFloat16),
            2);
}

TEST(Tolerance, ExactClass) {
  const Tolerance t = Tol("EXACT", DataType::kFloat32);
  EXPECT_TRUE(FloatElementMatches(1.5, 1.5, DataType::kFloat32, t));
  EXPECT_TRUE(FloatElementMatches(-0.0, 0.0, DataType::kFloat32, t));
  EXPECT_FALSE(
      FloatElementMatches(NextFloat(1.5, 1), 1.5, DataType::kFloat32, t));
}

TEST(Tolerance, NanAndInfinityRules) {
  const Tolerance t = Tol("NORMALIZATION", DataType::kFloat32);
  EXPECT_TRUE(FloatElementMatches(kNaN, kNaN, DataType::kFloat32, t));
  EXPECT_FALSE(FloatElementMatches(kNaN, 1.0, DataType::kFloat32, t));
  EXPECT_FALSE(FloatElementMatches(1.0, kNaN, DataType::kFloat32, t));
  EXPECT_TRUE(FloatElementMatches(kInf, kInf, DataType::kFloat32, t));
  EXPECT_FALSE(FloatElementMatches(-kInf, kInf, DataType::kFloat32, t));
  // The largest float is one ULP from inf in bits, but infinities must
  // match exactly.
  EXPECT_FALSE(
      FloatElementMatches(3.4028234663852886e38, kInf, DataType::kFloat32, t));
  EXPECT_FALSE(FloatElementMatches(65504.0, kInf, DataType::kFloat16,
                                   Tol("NORMALIZATION", DataType::kFloat16)));
}

TEST(Tolerance, UlpBudget) {
  const Tolerance arith = Tol("ARITH", DataType::kFloat32);
  EXPECT_TRUE(
      FloatElementMatches(NextFloat(1.0, 2), 1.0, DataType::kFloat32, arith));
  EXPECT_FALSE(
      FloatElementMatches(NextFloat(1.0, 3), 1.0, DataType::kFloat32, arith));
  // oracle self-test: 1.0000001 vs 1.0 passes ARITH, 1.001 does not.
  EXPECT_TRUE(FloatElementMatches(static_cast<float>(1.0000001), 1.0,
                                  DataType::kFloat32, arith));
  EXPECT_FALSE(FloatElementMatches(static_cast<float>(1.001), 1.0,
                                   DataType::kFloat32, arith));
  const Tolerance arith16 = Tol("ARITH", DataType::kFloat16);
  EXPECT_TRUE(FloatElementMatches(cpu::HalfBitsToDouble(0x3c01), 1.0,
                                  DataType::kFloat16, arith16));
  EXPECT_FALSE(FloatElementMatches(cpu::HalfBitsToDouble(0x3c02), 1.0,
                                   DataType::kFloat16, arith16));
}

TEST(Tolerance, AbsoluteAndRelativeBudget) {
  const Tolerance t = Tol("TRANSCENDENTAL", DataType::kFloat32);
  // Near zero, many ULPs apart but within atol 1e-6.
  EXPECT_TRUE(FloatElementMatches(static_cast<float>(5e-7), 0.0,
                                  DataType::kFloat32, t));
  EXPECT_FALSE(FloatElementMatches(static_cast<float>(2e-6), 0.0,
                                   DataType::kFloat32, t));
  // 1000 +- (1e-6 + 4e-3): within rtol.
  EXPECT_TRUE(FloatElementMatches(static_cast<float>(1000.0039), 1000.0,
                                  DataType::kFloat32, t));
  EXPECT_FALSE(FloatElementMatches(static_cast<float>(1000.0050), 1000.0,
                                   DataType::kFloat32, t));
  const Tolerance n16 = Tol("NORMALIZATION", DataType::kFloat16);
  EXPECT_TRUE(FloatElementMatches(cpu::RoundToHalf(0.0029), 0.0,
                                  DataType::kFloat16, n16));
  EXPECT_FALSE(FloatElementMatches(cpu::RoundToHalf(0.0032), 0.0,
                                   DataType::kFloat16, n16));
}

TEST(Tolerance, Float32DenormalFlushIsAccepted) {
  const Tolerance exact = Tol("EXACT", DataType::kFloat32);
  const double denormal = 1e-40;  // representable float32 denormal
  const double expected = static_cast<float>(denormal);
  EXPECT_TRUE(FloatElementMatches(0.0, expected, DataType::kFloat32, exact));
  EXPECT_TRUE(FloatElementMatches(-0.0, expected, DataType::kFloat32, exact));
  // Not for a normal expected value.
  EXPECT_FALSE(FloatElementMatches(0.0, 1.2e-38, DataType::kFloat32, exact));
  // Not for FLOAT16, whose denormals are kept.
  EXPECT_FALSE(FloatElementMatches(0.0, cpu::HalfBitsToDouble(0x0001),
                                   DataType::kFloat16,
                                   Tol("EXACT", DataType::kFloat16)));
}

template <typename T>
std::string Bytes(const std::vector<T>& v) {
  std::string s(v.size() * sizeof(T), '\0');
  std::memcpy(s.data(), v.data(), s.size());
  return s;
}

TEST(Tolerance, CompareElementsReportsTheFirstMismatch) {
  const Tolerance t = Tol("EXACT", DataType::kFloat32);
  EXPECT_FALSE(CompareElements(Bytes<float>({1, 2, 3}), Bytes<float>({1, 2, 3}),
                               DataType::kFloat32, 3, t));
  auto m =
      CompareElements(Bytes<float>({1, 2, 4, 5}), Bytes<float>({1, 2, 3, 6}),
                      DataType::kFloat32, 4, t);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->index, 2u);
  EXPECT_TRUE(CompareElements(Bytes<float>({1}), Bytes<float>({1, 2}),
                              DataType::kFloat32, 2, t));
}

TEST(Tolerance, IntegersAreExactWhateverTheClass) {
  const Tolerance t = Tol("NORMALIZATION", DataType::kInt8);
  EXPECT_FALSE(CompareElements(Bytes<int8_t>({-1, 2}), Bytes<int8_t>({-1, 2}),
                               DataType::kInt8, 2, t));
  auto m = CompareElements(Bytes<int8_t>({-1, 3}), Bytes<int8_t>({-1, 2}),
                           DataType::kInt8, 2, t);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->index, 1u);
  m = CompareElements(Bytes<int64_t>({-5}), Bytes<int64_t>({-6}),
                      DataType::kInt64, 1, t);
  ASSERT_TRUE(m);
  EXPECT_NE(m->message.find("-5"), std::string::npos) << m->message;
  EXPECT_NE(m->message.find("-6"), std::string::npos) << m->message;
}

TEST(Tolerance, RelaxedNanAcceptsANanResult) {
  const Tolerance t = Tol("EXACT", DataType::kFloat32);
  const std::string actual = Bytes<float>({NAN, 1});
  const std::string expected = Bytes<float>({0.5, 1});
  EXPECT_TRUE(CompareElements(actual, expected, DataType::kFloat32, 2, t));
  EXPECT_FALSE(CompareElements(actual, expected, DataType::kFloat32, 2, t,
                               /*allow_nan_actual=*/true));
}

// §7.5: each element may match the exact or the flushed-input expectation.
TEST(Tolerance, FlushedInputAlternativeIsAcceptedPerElement) {
  const Tolerance t = Tol("ARITH", DataType::kFloat32);
  const std::string expected = Bytes<float>({3.0f, -2.0f, 5.0f});
  const std::string flushed = Bytes<float>({1.0f, -2.0f, 7.0f});
  // Exact, flushed, and a mix of both.
  EXPECT_FALSE(CompareElementsWithAlternative(expected, expected, flushed,
                                              DataType::kFloat32, 3, t));
  EXPECT_FALSE(CompareElementsWithAlternative(flushed, expected, flushed,
                                              DataType::kFloat32, 3, t));
  EXPECT_FALSE(CompareElementsWithAlternative(Bytes<float>({1, -2, 5}),
                                              expected, flushed,
                                              DataType::kFloat32, 3, t));
  // Neither: the message names both expectations.
  auto m = CompareElementsWithAlternative(Bytes<float>({3, -2, 6}), expected,
                                          flushed, DataType::kFloat32, 3, t);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->index, 2u);
  EXPECT_NE(m->message.find("flushed-input"), std::string::npos)
      << m->message;
  // Without the alternative the flushed result fails.
  EXPECT_TRUE(CompareElements(flushed, expected, DataType::kFloat32, 3, t));
  // Integers: either value, exactly.
  EXPECT_FALSE(CompareElementsWithAlternative(
      Bytes<int32_t>({4, 9}), Bytes<int32_t>({4, 8}), Bytes<int32_t>({5, 9}),
      DataType::kInt32, 2, t));
  EXPECT_TRUE(CompareElementsWithAlternative(
      Bytes<int32_t>({4, 7}), Bytes<int32_t>({4, 8}), Bytes<int32_t>({5, 9}),
      DataType::kInt32, 2, t));
  // An alternative of the wrong size is a corrupt case.
  EXPECT_TRUE(CompareElementsWithAlternative(expected, expected,
                                             Bytes<float>({1}),
                                             DataType::kFloat32, 3, t));
}

}  // namespace
}  // namespace dmls::conformance
