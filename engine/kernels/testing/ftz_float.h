// FtzFloat: float32 arithmetic on the CPU as a GPU that flushes denormals
// does it (OPERATORS.md §7.5; the H100): with `ftz` on, every input and
// every result of an arithmetic operation that is a denormal becomes a zero
// of the same sign. Bit operations (the integer exponent arithmetic of the
// kernels) go through Bits/FromBits and are never flushed. Used by the CPU
// models of the emitted kernels' arithmetic (mvn_stats_ftz_test.cc):
// no FTZ hardware is at hand in CI, and lavapipe keeps denormals.
// Test-only; stateless apart from the flag, thread-safe.
#ifndef DMLSERVE_ENGINE_KERNELS_TESTING_FTZ_FLOAT_H_
#define DMLSERVE_ENGINE_KERNELS_TESTING_FTZ_FLOAT_H_

#include <cmath>
#include <cstdint>
#include <cstring>

namespace dmls::gpu::testing {

inline uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

inline float FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// True for a float32 denormal (not zero).
inline bool IsDenormal(float f) { return f != 0 && std::fabs(f) < 0x1p-126f; }

class FtzFloat {
 public:
  explicit FtzFloat(bool ftz) : ftz_(ftz) {}

  float Flush(float f) const { return ftz_ && IsDenormal(f) ? std::copysign(0.0f, f) : f; }

  float Add(float a, float b) const { return Flush(Flush(a) + Flush(b)); }
  float Sub(float a, float b) const { return Flush(Flush(a) - Flush(b)); }
  float Mul(float a, float b) const { return Flush(Flush(a) * Flush(b)); }
  float Div(float a, float b) const { return Flush(Flush(a) / Flush(b)); }
  float Sqrt(float a) const { return Flush(std::sqrt(Flush(a))); }
  // D3D max (IEEE maxNum: a NaN operand yields the other one).
  float Max(float a, float b) const {
    a = Flush(a);
    b = Flush(b);
    if (std::isnan(a)) return b;
    if (std::isnan(b)) return a;
    return a > b ? a : b;
  }
  // `mad` unfused (lavapipe's; the worse case for the kernels, which never
  // rely on fusion): a*b rounded and flushed, then the sum.
  float Mad(float a, float b, float c) const { return Add(Mul(a, b), c); }

 private:
  bool ftz_;
};

}  // namespace dmls::gpu::testing

#endif  // DMLSERVE_ENGINE_KERNELS_TESTING_FTZ_FLOAT_H_
