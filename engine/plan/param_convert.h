// Host-side conversions of operator parameters into the form kernels read
// from their constant block: binary16 rounding for FLOAT16 tensors and the
// trunc/saturate/NaN->0 conversion of float parameters to integer tensor
// types (OPERATORS.md §4.1, §6.1). Pure functions; thread-safe.
#ifndef DMLSERVE_ENGINE_PLAN_PARAM_CONVERT_H_
#define DMLSERVE_ENGINE_PLAN_PARAM_CONVERT_H_

#include <cstdint>

#include "engine/core/types.h"

namespace dmls::gpu {

// The binary16 value nearest to f (ties to even), as a float; overflow to
// +-inf from 65520 on; NaN stays NaN.
float RoundToHalf(float f);

// f converted to integer type `t` (8/16/32-bit): NaN -> 0, truncation toward
// zero, saturation to the type's range. Returned as the 32-bit register
// pattern kernels use (sign-extended for signed types).
int32_t ConvertToIntParam(float f, DataType t);

// The 64-bit form for INT64/UINT64 (same rules), as the two's-complement
// bit pattern.
uint64_t ConvertToInt64Param(float f, DataType t);

}  // namespace dmls::gpu

#endif  // DMLSERVE_ENGINE_PLAN_PARAM_CONVERT_H_
