#include "tests/conformance/tolerance.h"

#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "engine/cpu/float16.h"

namespace dmls::conformance {
namespace {

struct ClassRow {
  absl::string_view name;
  Tolerance f32;
  Tolerance f16;
};

// OPERATORS.md §8.
constexpr ClassRow kClasses[] = {
    {"EXACT", {0, 0, 0}, {0, 0, 0}},
    {"ARITH", {2, 0, 0}, {1, 0, 0}},
    {"TRANSCENDENTAL", {4, 1e-6, 4e-6}, {2, 1e-4, 0}},
    {"NORMALIZATION", {4, 1e-4, 1e-4}, {2, 3e-3, 2e-3}},
};

constexpr double kFloat32MinNormal = 1.1754943508222875e-38;  // 2^-126

int64_t OrderedBits(double v, DataType type) {
  if (type == DataType::kFloat16) {
    const int16_t i = static_cast<int16_t>(cpu::DoubleToHalfBits(v));
    return i >= 0 ? i : -static_cast<int64_t>(i & 0x7fff);
  }
  const float f = static_cast<float>(v);
  int32_t i;
  std::memcpy(&i, &f, sizeof(i));
  return i >= 0 ? i : -static_cast<int64_t>(i & 0x7fffffff);
}

// Element `index` of a buffer of consecutive `type` values, widened.
double FloatAt(const std::string& bytes, uint64_t index, DataType type) {
  if (type == DataType::kFloat16) {
    uint16_t h;
    std::memcpy(&h, bytes.data() + index * 2, 2);
    return cpu::HalfBitsToDouble(h);
  }
  float f;
  std::memcpy(&f, bytes.data() + index * 4, 4);
  return f;
}

// Integer element as a 128-bit-free pair: compare raw bytes, print signed
// or unsigned.
std::string IntToString(const std::string& bytes, uint64_t index,
                        DataType type) {
  const uint32_t size = ElementBytes(type);
  uint64_t raw = 0;
  std::memcpy(&raw, bytes.data() + index * size, size);
  if (!IsSigned(type)) return absl::StrCat(raw);
  const int shift = 64 - 8 * static_cast<int>(size);
  const int64_t value = static_cast<int64_t>(raw << shift) >> shift;
  return absl::StrCat(value);
}

}  // namespace

absl::StatusOr<Tolerance> ToleranceFor(absl::string_view tolerance_class,
                                       DataType type) {
  for (const ClassRow& row : kClasses) {
    if (row.name != tolerance_class) continue;
    if (type == DataType::kFloat32) return row.f32;
    if (type == DataType::kFloat16) return row.f16;
    return Tolerance{};
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown tolerance class '", tolerance_class, "'"));
}

int64_t UlpDistance(double a, double e, DataType type) {
  const int64_t d = OrderedBits(a, type) - OrderedBits(e, type);
  return d < 0 ? -d : d;
}

bool FloatElementMatches(double actual, double expected, DataType type,
                         const Tolerance& tolerance) {
  if (std::isnan(actual) || std::isnan(expected)) {
    return std::isnan(actual) && std::isnan(expected);
  }
  if (actual == expected) return true;  // +0 == -0
  if (std::isinf(actual) || std::isinf(expected)) return false;
  if (type == DataType::kFloat32 && std::fabs(expected) < kFloat32MinNormal &&
      (actual == 0 || std::fabs(actual) < kFloat32MinNormal) &&
      std::fabs(actual - expected) < kFloat32MinNormal) {
    return true;  // D3D may flush float32 denormals (§7.5)
  }
  if (tolerance.ulp > 0 &&
      UlpDistance(actual, expected, type) <= tolerance.ulp) {
    return true;
  }
  return std::fabs(actual - expected) <=
         tolerance.atol + tolerance.rtol * std::fabs(expected);
}

namespace {

// CompareElements with an optional second acceptable expectation
// (`alternative`, null when there is none).
std::optional<Mismatch> Compare(const std::string& actual,
                                const std::string& expected,
                                const std::string* alternative, DataType type,
                                uint64_t count, const Tolerance& tolerance,
                                bool allow_nan_actual) {
  const uint32_t size = ElementBytes(type);
  if (size == 0 || actual.size() != count * size ||
      expected.size() != count * size ||
      (alternative && alternative->size() != count * size)) {
    return Mismatch{
        0, absl::StrCat("size mismatch: actual ", actual.size(),
                        " bytes, expected ", expected.size(), " bytes",
                        alternative ? absl::StrCat(" (alternative ",
                                                   alternative->size(), ")")
                                    : "",
                        " for ", count, " elements of ",
                        std::string(DataTypeName(type)))};
  }
  const bool is_float =
      type == DataType::kFloat32 || type == DataType::kFloat16;
  for (uint64_t i = 0; i < count; ++i) {
    if (!is_float) {
      const char* a = actual.data() + i * size;
      if (std::memcmp(a, expected.data() + i * size, size) == 0 ||
          (alternative &&
           std::memcmp(a, alternative->data() + i * size, size) == 0)) {
        continue;
      }
      return Mismatch{
          i, absl::StrCat("[", i, "] ", IntToString(actual, i, type),
                          " != expected ", IntToString(expected, i, type),
                          alternative ? absl::StrCat(" or flushed-input ",
                                                     IntToString(*alternative,
                                                                 i, type))
                                      : "")};
    }
    const double a = FloatAt(actual, i, type);
    const double e = FloatAt(expected, i, type);
    if (allow_nan_actual && std::isnan(a)) continue;
    if (FloatElementMatches(a, e, type, tolerance)) continue;
    std::string also;
    if (alternative) {
      const double f = FloatAt(*alternative, i, type);
      if (FloatElementMatches(a, f, type, tolerance)) continue;
      also = absl::StrFormat("; or flushed-input expected %.9g, ulp=%d", f,
                             UlpDistance(a, f, type));
    }
    return Mismatch{
        i, absl::StrFormat("[%d] %.9g vs expected %.9g (ulp=%d%s, budget "
                           "ulp=%d atol=%g rtol=%g)",
                           i, a, e, UlpDistance(a, e, type), also,
                           tolerance.ulp, tolerance.atol, tolerance.rtol)};
  }
  return std::nullopt;
}

}  // namespace

std::optional<Mismatch> CompareElements(const std::string& actual,
                                        const std::string& expected,
                                        DataType type, uint64_t count,
                                        const Tolerance& tolerance,
                                        bool allow_nan_actual) {
  return Compare(actual, expected, nullptr, type, count, tolerance,
                 allow_nan_actual);
}

std::optional<Mismatch> CompareElementsWithAlternative(
    const std::string& actual, const std::string& expected,
    const std::string& alternative, DataType type, uint64_t count,
    const Tolerance& tolerance, bool allow_nan_actual) {
  return Compare(actual, expected, &alternative, type, count, tolerance,
                 allow_nan_actual);
}

}  // namespace dmls::conformance
