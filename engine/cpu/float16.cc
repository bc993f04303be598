#include "engine/cpu/float16.h"

#include <cmath>
#include <cstring>

namespace dmls::cpu {
namespace {

constexpr double kTwoPow24 = 16777216.0;  // 2^24: subnormal unit is 2^-24
constexpr double kSmallestNormal = 6.103515625e-05;  // 2^-14
// The midpoint between the largest finite half (65504) and 2^16: values at or
// above it round (ties-to-even) to infinity.
constexpr double kOverflowThreshold = 65520.0;

}  // namespace

float HalfBitsToFloat(uint16_t bits) {
  if ((bits & 0x7c00u) == 0x7c00u && (bits & 0x3ffu) != 0) {
    // NaN: build the float directly, a double->float conversion would quiet
    // a signalling NaN and change its payload.
    const uint32_t f = (uint32_t{bits & 0x8000u} << 16) | 0x7f800000u |
                       (uint32_t{bits & 0x3ffu} << 13);
    float out;
    std::memcpy(&out, &f, sizeof(out));
    return out;
  }
  return static_cast<float>(HalfBitsToDouble(bits));
}

double HalfBitsToDouble(uint16_t bits) {
  const bool negative = (bits & 0x8000u) != 0;
  const uint32_t exponent = (bits >> 10) & 0x1fu;
  const uint32_t mantissa = bits & 0x3ffu;
  double magnitude;
  if (exponent == 0x1f) {
    if (mantissa == 0) {
      magnitude = INFINITY;
    } else {
      // Keep the payload: it travels into the top mantissa bits of binary64.
      uint64_t d = 0x7ff0000000000000ull | (uint64_t{mantissa} << 42);
      if (negative) d |= 0x8000000000000000ull;
      double out;
      std::memcpy(&out, &d, sizeof(out));
      return out;
    }
  } else if (exponent == 0) {
    magnitude = std::ldexp(static_cast<double>(mantissa), -24);
  } else {
    magnitude = std::ldexp(static_cast<double>(mantissa | 0x400u),
                           static_cast<int>(exponent) - 25);
  }
  return negative ? -magnitude : magnitude;
}

uint16_t DoubleToHalfBits(double value) {
  uint64_t d;
  std::memcpy(&d, &value, sizeof(d));
  const uint16_t sign = static_cast<uint16_t>((d >> 48) & 0x8000u);
  if (std::isnan(value)) {
    uint16_t payload = static_cast<uint16_t>((d >> 42) & 0x3ffu);
    if (payload == 0) payload = 0x200;  // a zero payload would read as inf
    return static_cast<uint16_t>(sign | 0x7c00u | payload);
  }
  const double a = std::fabs(value);
  if (a >= kOverflowThreshold) return static_cast<uint16_t>(sign | 0x7c00u);
  if (a < kSmallestNormal) {
    // Subnormal (or zero): value = m * 2^-24. Scaling by 2^24 is exact, and
    // nearbyint rounds ties to even in the default rounding mode. m == 1024
    // correctly encodes the smallest normal number.
    const double m = std::nearbyint(a * kTwoPow24);
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(m));
  }
  int e2;
  std::frexp(a, &e2);           // a = f * 2^e2, f in [0.5, 1)
  const int exponent = e2 - 1;  // unbiased, in [-14, 15]
  // 11 significant bits: m in [1024, 2048]; 2048 carries into the exponent,
  // which the addition below handles (and never reaches inf: a < 65520).
  const double m = std::nearbyint(std::ldexp(a, 10 - exponent));
  const uint32_t bits = (static_cast<uint32_t>(exponent + 15) << 10) +
                        (static_cast<uint32_t>(m) - 1024u);
  return static_cast<uint16_t>(sign | bits);
}

uint16_t FloatToHalfBits(float value) {
  if (std::isnan(value)) {
    // Take the payload from the float bits (widening could quiet it).
    uint32_t f;
    std::memcpy(&f, &value, sizeof(f));
    uint16_t payload = static_cast<uint16_t>((f >> 13) & 0x3ffu);
    if (payload == 0) payload = 0x200;
    return static_cast<uint16_t>(((f >> 16) & 0x8000u) | 0x7c00u | payload);
  }
  // Widening to double is exact, so this still rounds only once.
  return DoubleToHalfBits(static_cast<double>(value));
}

}  // namespace dmls::cpu
