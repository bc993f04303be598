// Scalar reference math of the activations of OPERATORS.md §6 (standalone
// and fused into MVN/MVN1), evaluated in binary64 exactly as oracle.py does:
// documented max/min use IEEE-754R maxNum/minNum (a NaN operand is ignored,
// §7.3), every other operation propagates NaN, infinities give the limit
// (§7.4) through stable forms (expm1, log1p(exp(-|y|)), erf).
// One function per activation, found through a table keyed by the operator
// type. Pure functions: thread-safe.
#ifndef DMLSERVE_ENGINE_CPU_ACTIVATIONS_H_
#define DMLSERVE_ENGINE_CPU_ACTIVATIONS_H_

#include <cstdint>

namespace dmls::cpu {

// The two compact parameters of OPERATORS.md §5.3 (p0, p1 in the order of
// OperatorSchema::params), already widened from their binary32 values.
struct ActivationArgs {
  double p0 = 0;
  double p1 = 0;
};

using ActivationFn = double (*)(double x, const ActivationArgs& args);

// An activation over `count` consecutive FLOAT32 elements (raw
// little-endian bytes, no alignment asked; `input` may be `output`): each
// element widened, computed and rounded once, the same bits as its
// ActivationFn element by element, with the function inlined into the loop.
using ActivationFloat32Fn = void (*)(const char* input, char* output,
                                     uint64_t count, const ActivationArgs& args);

// nullptr when `raw_type` is not one of the 17 activations.
ActivationFn FindActivation(uint32_t raw_type);
ActivationFloat32Fn FindActivationFloat32(uint32_t raw_type);

// IEEE-754R maxNum/minNum as D3D defines them: one NaN operand is ignored,
// max(-0,+0) = +0, min(-0,+0) = -0.
double MaxNum(double a, double b);
double MinNum(double a, double b);

}  // namespace dmls::cpu

#endif  // DMLSERVE_ENGINE_CPU_ACTIVATIONS_H_
