#include "engine/plan/param_convert.h"

#include <cmath>
#include <cstring>

namespace dmls::gpu {

float RoundToHalf(float f) {
  if (std::isnan(f) || std::isinf(f)) return f;
  const float a = std::fabs(f);
  if (a < 0x1p-14f) {
    // Subnormal range: multiples of 2^-24; scaling by 2^24 is exact and
    // nearbyint rounds ties to even in the default rounding mode.
    return std::nearbyint(f * 0x1p24f) * 0x1p-24f;
  }
  uint32_t b;
  std::memcpy(&b, &f, 4);
  const uint32_t lsb = (b >> 13) & 1;
  b += 0xfff + lsb;
  b &= ~0x1fffu;
  float r;
  std::memcpy(&r, &b, 4);
  if (std::fabs(r) > 65504.0f) return std::copysign(INFINITY, f);
  return r;
}

int32_t ConvertToIntParam(float f, DataType t) {
  if (std::isnan(f)) return 0;
  int64_t lo = 0, hi = 0;
  switch (t) {
    case DataType::kInt8: lo = -128; hi = 127; break;
    case DataType::kInt16: lo = -32768; hi = 32767; break;
    case DataType::kInt32: lo = INT32_MIN; hi = INT32_MAX; break;
    case DataType::kUint8: hi = 255; break;
    case DataType::kUint16: hi = 65535; break;
    case DataType::kUint32: hi = UINT32_MAX; break;
    default: return 0;
  }
  const double d = std::trunc(static_cast<double>(f));
  int64_t v;
  if (d <= static_cast<double>(lo)) {
    v = lo;
  } else if (d >= static_cast<double>(hi)) {
    v = hi;
  } else {
    v = static_cast<int64_t>(d);
  }
  return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
}

uint64_t ConvertToInt64Param(float f, DataType t) {
  if (std::isnan(f)) return 0;
  const double d = std::trunc(static_cast<double>(f));
  if (t == DataType::kUint64) {
    if (d <= 0) return 0;
    if (d >= 18446744073709551616.0) return UINT64_MAX;
    return static_cast<uint64_t>(d);
  }
  if (d <= -9223372036854775808.0) return static_cast<uint64_t>(INT64_MIN);
  if (d >= 9223372036854775808.0) return static_cast<uint64_t>(INT64_MAX);
  return static_cast<uint64_t>(static_cast<int64_t>(d));
}

}  // namespace dmls::gpu
