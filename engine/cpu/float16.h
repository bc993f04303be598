// IEEE 754 binary16 <-> binary32/binary64 conversions used wherever FLOAT16
// tensors are read or produced (CPU engine, conformance comparator, GPU
// engine tests). Rounding is round-to-nearest-even, binary16 subnormals are
// kept, magnitudes that round beyond 65504 become +-inf and NaN stays NaN
// (sign and the upper payload bits are kept, as numpy does).
//
// DoubleToHalfBits rounds *once* from binary64: converting through float
// first would round twice and can differ from the oracle (numpy converts
// float64 -> float16 directly). Pure functions: thread-safe.
#ifndef DMLSERVE_ENGINE_CPU_FLOAT16_H_
#define DMLSERVE_ENGINE_CPU_FLOAT16_H_

#include <cstdint>

namespace dmls::cpu {

// Exact widening conversions (every binary16 value is a binary32 value).
float HalfBitsToFloat(uint16_t bits);
double HalfBitsToDouble(uint16_t bits);

// Rounded narrowing conversions (RNE, overflow to inf, NaN kept).
uint16_t DoubleToHalfBits(double value);
uint16_t FloatToHalfBits(float value);

// The value `value` has after a round trip through binary16.
inline double RoundToHalf(double value) {
  return HalfBitsToDouble(DoubleToHalfBits(value));
}

}  // namespace dmls::cpu

#endif  // DMLSERVE_ENGINE_CPU_FLOAT16_H_
