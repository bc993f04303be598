// Emission of element-wise math into a ShaderBuilder: numerically stable
// float32 forms of the activations (OPERATORS.md §6, §7) and the exact
// integer forms of THRESHOLD/CLIP/RELU/SHRINK. Every routine works on the
// components named by `comps` ("x" for scalar paths, "xyzw" for vector
// paths) and allocates its own temps. Stateless apart from the builder it
// writes to; not thread-safe (the builder is not).
#ifndef DMLSERVE_ENGINE_KERNELS_ACTIVATION_EMIT_H_
#define DMLSERVE_ENGINE_KERNELS_ACTIVATION_EMIT_H_

#include <cstdint>
#include <optional>
#include <string>

#include "engine/core/types.h"
#include "engine/dxbc/operand.h"
#include "engine/dxbc/shader_builder.h"

namespace dmls::gpu {

// Where an activation's float parameters live (single cb components).
struct ActivationParams {
  Operand p0;  // Alpha / Steepness / Bias (SHRINK)
  Operand p1;  // Beta / Gamma / Threshold (SHRINK)
  Operand d0;  // 1/Alpha etc. (unused by the current forms; kept for ABI)
  Operand d1;  // -Threshold (SHRINK)
};

// True for the 17 fusable activations plus nothing else.
bool IsSupportedActivation(OperatorType op);

// MathEmitter::MadIsFused's operands: k = 1 + 2^-12 and c = -(1 + 2^-11).
// k*k + c is 2^-24 rounded once, and 0 when k*k is rounded first (its
// 2^-24 is half an ulp of 1 + 2^-11: a tie, to even).
inline constexpr uint32_t kMadProbeK = 0x3F800800u;
inline constexpr uint32_t kMadProbeC = 0xBF801000u;

class MathEmitter {
 public:
  // `zero` is a constant-block word that is always 0 at run time. Error-free
  // transformations (TwoSum) are laundered through xor with it: SPIR-V from
  // vkd3d 1.2 carries no NoContraction/exactness, so driver compilers
  // (Mesa's NIR, seen on lavapipe) otherwise fold (a + b) - a into b.
  MathEmitter(ShaderBuilder& b, std::string comps, Operand zero)
      : b_(b), comps_(std::move(comps)), zero_(zero) {}

  Operand Tmp() { return b_.NewTemp().Comps(comps_.c_str()); }
  // Half-precision mode, for FLOAT16 tensors (OPERATORS.md §8: 2 binary16
  // ulp, about 1e-3 relative): Exp skips the compensation of x*log2(e)'s
  // rounding and GELU uses a shorter erfc fit. Everything else (overflow,
  // NaN, infinity handling) is the same. Off by default.
  void set_half_precision(bool on) { half_ = on; }
  const std::string& comps() const { return comps_; }
  ShaderBuilder& builder() { return b_; }
  // v ^= zero: an identity the driver compiler cannot see through.
  void Launder(Operand v) { b_.Xor(v, v, zero_); }
  // (s, e_acc) <- (fl(s + a), e_acc + error of that sum), Knuth's TwoSum.
  void TwoSum(Operand s, Operand e_acc, Operand a);
  // The same on four caller-owned scratch temps, for sequences that call it
  // often per element and must stay under the 4096 temps of a shader.
  struct TwoSumScratch {
    Operand sum, bb, err, t;
  };
  void TwoSum(Operand s, Operand e_acc, Operand a, const TwoSumScratch& scratch);

  // d = e^x via exp2 with the rounding error of x*log2(e) compensated when
  // `mad` is fused (H200; on drivers where it is not, the correction is 0
  // and the result is plain exp2 accuracy); never NaN for infinite x.
  void Exp(Operand d, Operand x);
  // d = exp(x) * 2^k, computed as exp2(x*log2(e) + k): normal (and as
  // accurate as Exp) where exp(x) alone would be denormal or zero.
  void ExpScaled(Operand d, Operand x, int k);
  // d = e^x - 1, accurate near 0 (Taylor series for |x| < 0.35).
  void Expm1(Operand d, Operand x);
  // d = e^x - 1 by its Taylor series: accurate for |x| < 0.35 only.
  void Expm1Series(Operand d, Operand x);
  // d = ln(1 + z) for z >= 0, accurate near 0 (atanh series for z < 0.5).
  void Log1p(Operand d, Operand z);
  // d = ln(1 + e^y), stable: max(y,0) + log1p(e^-|y|).
  void Softplus(Operand d, Operand y);
  void Sigmoid(Operand d, Operand x);
  void Tanh(Operand d, Operand x);
  // v = GELU(v) = 0.5 v erfc(-v/sqrt2), accurate in relative terms on both
  // sides: erfc(|v|/sqrt2) is evaluated as t*exp(P(t) - v*v/2) with
  // t = 1/(1 + |v|/(2 sqrt2)) and P a fit of our own (relative error about
  // 6e-7 up to |v| = 14), v*v/2 exact as a sum of two floats; x >= 0 takes
  // 2 - erfc. No 1 + erf(x) cancellation (that was 436 ulp for x < 0).
  void Gelu(Operand v);
  // p = expm1(q)/q by its Taylor series (1 at q = 0): accurate for
  // |q| < 0.35 only. x*p is expm1(q) scaled by x/q without dividing.
  void Expm1OverX(Operand p, Operand q);
  // d = a*b + c rounded (nearly) once. Where the device's `mad` is fused
  // (MadIsFused), that is `mad` itself: vkd3d 1.2 emits GLSLstd450Fma,
  // one FFMA on NVIDIA, with no intermediate to overflow or to flush.
  // Elsewhere (lavapipe's is not fused) exact products of 12-bit halves
  // (Dekker) and TwoSum, falling back to the plain result when that is
  // not finite. The two are chosen by a branch that is uniform.
  void FusedMad(Operand d, Operand a, Operand b, Operand c);
  // cond.x = ~0 when `mad` rounds once: mad(k, k, c) with the bits of
  // kMadProbeK and kMadProbeC (laundered, so no compiler folds them).
  void MadIsFused(Operand cond);
  // Emits that probe once for every later FusedMad: call it at the
  // kernel's top level (not inside a branch), before the loop over the
  // thread's elements. Without it each FusedMad probes on its own.
  void PrepareFusedMad();
  // Whether Activation(op) uses FusedMad.
  static bool UsesFusedMad(OperatorType op) {
    return op == OperatorType::kActivationLinear || op == OperatorType::kActivationHardSigmoid;
  }
  // FusedMad without a fused `mad`.
  void EmulatedMad(Operand d, Operand a, Operand b, Operand c);
  // The exact part of EmulatedMad, for finite results only; with `lo`,
  // d = a*b + c + lo (lo small beside a*b: added to the error terms).
  void ExactMad(Operand d, Operand a, Operand b, Operand c, const Operand* lo = nullptr);
  // Classification and ordering on the integer bits. NVIDIA's compiler may
  // assume no Inf/NaN (vkd3d 1.2 sets no SignedZeroInfNanPreserve), which
  // folds float compares with inf/NaN; integer tests cannot be folded.
  void IsNan(Operand d, Operand x);
  void IsInf(Operand d, Operand x);
  void IsFinite(Operand d, Operand x);
  // D3D max/min (IEEE maxNum/minNum): a NaN operand yields the other one.
  void MaxNum(Operand d, Operand a, Operand b);
  void MinNum(Operand d, Operand a, Operand b);
  // d = a < b via an order-preserving integer key (immune to denormal
  // flushing of the operands); false when either operand is NaN, as IEEE
  // a < b (a NaN parameter, e.g. THRESHOLDED_RELU's Alpha, must not compare).
  void OrderedLess(Operand d, Operand a, Operand b);
  // d = magnitude (>= 0) with the sign bit of `sign`.
  void CopySign(Operand d, Operand magnitude, Operand sign);

  // d = a*b with a denormal factor taken exactly ((a*2^32)*b*2^-32), so
  // a driver flushing it cannot turn a normal product into 0.
  void ScaledProduct(Operand d, Operand a, Operand b);
  // v = f(v) for one of the 17 activations (float32).
  void Activation(OperatorType op, Operand v, const ActivationParams& p);

  // An affine pre-activation y = d*r*s + b (s, b optional; MVN's
  // normalised value times Scale plus Bias) whose float32 evaluation
  // overflowed although the activation may bring it back into range
  // (OPERATORS.md §7.4: PARAMETRIC_SOFTPLUS with Alpha = Beta = 0.5 of
  // y = 3.7e38 is 9.2e37, not inf; random/1271), or although the sum is in
  // range (d*r*s beyond FLT_MAX, b = -FLT_MAX). beyond_range_emit.cc.
  struct AffineTerms {
    Operand d, r;
    const Operand* s = nullptr;
    const Operand* b = nullptr;
  };
  // Activation(op, in.v, in.params), then v = result where done, is act(y).
  // Callers set v to the overflowed value, params to op's own and, where
  // BeyondRangeResult(op), done to 0 beforehand; AffineBeyondRange
  // rewrites them where every term is finite, and sets v to an infinite b
  // where the other terms are finite (elsewhere the IEEE result of the
  // overflowed value stands). BeyondRangeParam(op) names the one
  // parameter (0: p0, 1: p1, -1: none) it may replace: callers give it a
  // temp of its own.
  struct BeyondRangeIo {
    Operand v;
    ActivationParams params;
    Operand done, result;
  };
  void AffineBeyondRange(OperatorType op, const AffineTerms& t, BeyondRangeIo& io);
  static int BeyondRangeParam(OperatorType op);
  static bool BeyondRangeResult(OperatorType op);

 private:
  void MinMaxNum(Operand d, Operand a, Operand b, bool max);
  // exp(x + x_lo) * 2^k; x_lo (a small correction of x) may be null.
  void ExpImpl(Operand d, Operand x, const Operand* x_lo, int k);
  // (x + x_lo) * log2(e) as hi + lo, lo carrying hi's rounding error.
  void ExpArgument(Operand hi, Operand lo, Operand x, const Operand* x_lo);
  // d = 2^(hi + k) * (1 + lo*ln2); leaves hi and lo unchanged.
  void ExpFinish(Operand d, Operand hi, Operand lo, int k);
  // CELU, SOFTPLUS and PARAMETRIC_SOFTPLUS (activation_params_emit.cc).
  void Celu(Operand v, Operand alpha);
  void SoftplusOp(Operand v, Operand steepness);
  void ParametricSoftplus(Operand v, Operand alpha, Operand beta);
  // d = f * 2^32 exactly for any finite f, denormals included (integer
  // bits, so no flushing); d is +-inf where f*2^32 overflows.
  void ScaleUp32(Operand d, Operand f);
  // d = all ones where f is zero or denormal (exponent field 0), else 0.
  void IsTiny(Operand d, Operand f);
  // d = all ones where f is a normal float (not 0, denormal, inf or NaN).
  void IsNormal(Operand d, Operand f);
  // f = m * 2^e for a finite f (e an integer, |m| in [1, 2) with f's
  // sign; denormals exact); f = +-0 gives m = 0, e = -512.
  void Frexp(Operand m, Operand e, Operand f);
  // d = f * 2^n for a finite f and an integer n, rounded once: +-inf
  // where it overflows, 0 (or a denormal) where it underflows.
  void Ldexp(Operand d, Operand f, Operand n);
  // y = t.d*t.r*t.s + t.b as m * 2^e (m as Frexp's, e an integer; any
  // magnitude) for finite terms.
  void SplitAffine(Operand m, Operand e, const AffineTerms& t);
  // AffineBeyondRange's own results for |y| >= 2^128, y = m * 2^e.
  void CeluBeyondRange(Operand m, Operand e, Operand alpha, BeyondRangeIo& io);
  void SoftplusBeyondRange(Operand m, Operand e, Operand steepness, BeyondRangeIo& io);
  void ShrinkBeyondRange(Operand m, Operand e, Operand bias, Operand threshold,
                         BeyondRangeIo& io);
  ShaderBuilder& b_;
  std::string comps_;
  Operand zero_;
  bool half_ = false;
  std::optional<Operand> fused_;  // PrepareFusedMad's probe (.x)
};

// Integer forms. `v` holds sign-extended (signed types) or zero-extended
// (unsigned types) values of `type`; params are single cb components
// holding already-converted integers.
void EmitIntThreshold(ShaderBuilder& b, DataType type, Operand v, Operand min_i);
void EmitIntClip(ShaderBuilder& b, DataType type, Operand v, Operand min_i, Operand max_i);
void EmitIntRelu(ShaderBuilder& b, Operand v);
void EmitIntShrink(MathEmitter& m, DataType type, Operand v, Operand bias_i,
                   Operand threshold_i, Operand neg_threshold_i);

}  // namespace dmls::gpu

#endif  // DMLSERVE_ENGINE_KERNELS_ACTIVATION_EMIT_H_
