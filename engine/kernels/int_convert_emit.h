// Integer ScaleBias for THRESHOLD/CLIP on 8/16/32-bit integer tensors
// (OPERATORS.md §4.1 rule 3): g = x*Scale + Bias, then conversion to the
// tensor type with truncation toward zero, saturation and NaN -> 0. vkd3d 1.2
// has no double instructions, so g is evaluated exactly in float32
// expansions (see the .cc for the argument). Not thread-safe (writes to a
// builder).
#ifndef DMLSERVE_ENGINE_KERNELS_INT_CONVERT_EMIT_H_
#define DMLSERVE_ENGINE_KERNELS_INT_CONVERT_EMIT_H_

#include "engine/core/types.h"
#include "engine/kernels/activation_emit.h"

namespace dmls::gpu {

// v (components m.comps(), sign- or zero-extended integers of `type`) is
// replaced by trunc_sat(v * scale + bias); scale/bias are single float cb
// components.
void EmitIntScaleBias(MathEmitter& m, DataType type, Operand v, Operand scale,
                      Operand bias);

}  // namespace dmls::gpu

#endif  // DMLSERVE_ENGINE_KERNELS_INT_CONVERT_EMIT_H_
