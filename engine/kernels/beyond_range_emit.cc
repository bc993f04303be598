// Activations of an affine pre-activation y = d*r*s + b that float32
// cannot hold (MVN's normalised value times Scale plus Bias; OPERATORS.md
// §7.4: intermediate overflow must not create a spurious inf). Part of
// MathEmitter (activation_emit.h); same ownership and thread-safety.
//
// y is formed from its terms' mantissas and exponents as m * 2^e (m in
// [1, 2), e an integer of any size). Where e <= 127, y is a float (the sum
// cancelled what the product overflowed) and the activation takes it.
// Beyond that, an activation's value is one of:
//  * its limit at +-inf (IDENTITY, RELU, ELU, SIGMOID, TANH, SOFTSIGN,
//    GELU, THRESHOLDED_RELU, and the sides of the others not below): it
//    takes +-inf;
//  * c*y, where a parameter c multiplies the input first (LINEAR and
//    HARD_SIGMOID: Alpha; SCALED_TANH and PARAMETRIC_SOFTPLUS: Beta;
//    LEAKY_RELU, y < 0: Alpha; SCALED_ELU, y > 0: Gamma): it takes
//    x' = m * 2^127 and c' = c * 2^(e - 127), c'*x' being c*y, so that
//    its own float32 form (and its handling of huge finite inputs) applies;
//  * computed here: CELU with Alpha > 0 and y < 0 (Alpha*expm1(y/Alpha),
//    finite whatever y is), SOFTPLUS where Steepness*y < 0
//    (softplus(S*y)/S, finite for a tiny S) and SHRINK (y -+ Bias, finite
//    for y just beyond FLT_MAX).
#include "engine/kernels/activation_emit.h"

namespace dmls::gpu {
namespace {

constexpr uint32_t kExpMask = 0x7f800000u;

}  // namespace

int MathEmitter::BeyondRangeParam(OperatorType op) {
  switch (op) {
    case OperatorType::kActivationLinear:
    case OperatorType::kActivationHardSigmoid:
    case OperatorType::kActivationLeakyRelu:
      return 0;
    case OperatorType::kActivationScaledElu:
    case OperatorType::kActivationScaledTanh:
    case OperatorType::kActivationParametricSoftplus:
      return 1;
    default:
      return -1;
  }
}

bool MathEmitter::BeyondRangeResult(OperatorType op) {
  return op == OperatorType::kActivationCelu || op == OperatorType::kActivationSoftplus ||
         op == OperatorType::kActivationShrink;
}

void MathEmitter::Frexp(Operand m, Operand e, Operand f) {
  Operand tiny = Tmp(), fs = Tmp(), adj = Tmp(), zero = Tmp();
  IsTiny(tiny, f);
  ScaleUp32(fs, f);
  b_.Movc(fs, tiny, fs, f);
  b_.UShr(e, fs, U(23));
  b_.And(e, e, U(0xffu));
  b_.Movc(adj, tiny, I(-127 - 32), I(-127));
  b_.IAdd(e, e, adj);
  b_.And(m, fs, U(0x807fffffu));
  b_.Or(m, m, U(0x3f800000u));
  b_.And(zero, f, U(0x7fffffffu));
  b_.IEq(zero, zero, U(0));
  b_.Movc(m, zero, F(0.0f), m);
  b_.Movc(e, zero, I(-512), e);
}

void MathEmitter::Ldexp(Operand d, Operand f, Operand n) {
  // m * 2^(e + n) in three factors of 2^-126..2^127 (exact powers built
  // from their bits): the exponent sum stays within +-530, so what the
  // three cannot reach is 0 or inf anyway. The factors share a sign, so
  // only the last product can round (to a denormal or to inf).
  Operand m = Tmp(), rest = Tmp(), k = Tmp(), p = Tmp();
  Frexp(m, rest, f);
  b_.IAdd(rest, rest, n);
  b_.Mov(d, m);
  for (int i = 0; i < 3; ++i) {
    b_.IMin(k, rest, I(127));
    b_.IMax(k, k, I(-126));
    b_.IAdd(p, k, I(127));
    b_.IShl(p, p, U(23));
    b_.Mul(d, d, p);
    Launder(d);  // no compiler may multiply the factors first (2^254: inf)
    b_.INeg(k, k);
    b_.IAdd(rest, rest, k);
  }
}

void MathEmitter::SplitAffine(Operand m, Operand e, const AffineTerms& t) {
  // The product's mantissa (in [1, 8)) and exponent, then the sum aligned
  // to the larger exponent (the smaller term underflows harmlessly), then
  // normalised.
  Operand pm = Tmp(), pe = Tmp(), fm = Tmp(), fe = Tmp();
  Frexp(pm, pe, t.d);
  Frexp(fm, fe, t.r);
  b_.Mul(pm, pm, fm);
  b_.IAdd(pe, pe, fe);
  if (t.s != nullptr) {
    Frexp(fm, fe, *t.s);
    b_.Mul(pm, pm, fm);
    b_.IAdd(pe, pe, fe);
  }
  if (t.b != nullptr) {
    Operand top = Tmp(), n = Tmp(), sum = Tmp();
    Frexp(fm, fe, *t.b);
    b_.IMax(top, pe, fe);
    b_.INeg(n, top);
    b_.IAdd(n, n, pe);
    Ldexp(sum, pm, n);
    b_.INeg(n, top);
    b_.IAdd(n, n, fe);
    Ldexp(fm, fm, n);
    b_.Add(sum, sum, fm);
    b_.Mov(pm, sum);
    b_.Mov(pe, top);
  }
  Frexp(m, fe, pm);
  b_.IAdd(e, pe, fe);
}

void MathEmitter::AffineBeyondRange(OperatorType op, const AffineTerms& t, BeyondRangeIo& io) {
  Operand finite = Tmp(), f = Tmp();
  IsFinite(finite, t.d);
  IsFinite(f, t.r);
  b_.And(finite, finite, f);
  for (const Operand* o : {t.s, t.b}) {
    if (o == nullptr) continue;
    IsFinite(f, *o);
    b_.And(finite, finite, f);
  }
  if (t.b != nullptr) {
    // An infinite Bias beside a finite product gives y = Bias, however far
    // the product overflowed in float32 (+inf + -inf was NaN: random/4269
    // of a fresh set, MVN1 with Scale -9.2e24 and Bias -inf, on lavapipe and
    // the H200).
    Operand bias_wins = Tmp();
    IsFinite(bias_wins, t.d);
    IsFinite(f, t.r);
    b_.And(bias_wins, bias_wins, f);
    if (t.s != nullptr) {
      IsFinite(f, *t.s);
      b_.And(bias_wins, bias_wins, f);
    }
    IsFinite(f, *t.b);
    b_.Not(f, f);
    b_.And(bias_wins, bias_wins, f);
    b_.Movc(io.v, bias_wins, *t.b, io.v);
  }
  b_.IfNz(finite.x());
  Operand m = Tmp(), e = Tmp(), huge = Tmp();
  SplitAffine(m, e, t);
  Ldexp(io.v, m, e);
  b_.ILt(huge, I(127), e);  // |y| >= 2^128: io.v is +-inf
  const int param = BeyondRangeParam(op);
  if (param >= 0 || BeyondRangeResult(op)) b_.IfNz(huge.x());
  if (param >= 0) {
    // The side of y where c multiplies it (both, y < 0, or y > 0).
    Operand side = Tmp(), x = Tmp(), n = Tmp();
    Operand& c = param == 0 ? io.params.p0 : io.params.p1;
    if (op == OperatorType::kActivationLeakyRelu) {
      b_.ILt(side, m, I(0));
    } else if (op == OperatorType::kActivationScaledElu) {
      b_.IGe(side, m, I(0));
    } else {
      b_.Mov(side, U(~0u));
    }
    b_.Mul(x, m, F(0x1p127f));
    b_.IAdd(n, e, I(-127));
    Ldexp(f, c, n);
    b_.Movc(io.v, side, x, io.v);
    b_.Movc(c, side, f, c);
  }
  if (op == OperatorType::kActivationCelu) CeluBeyondRange(m, e, io.params.p0, io);
  if (op == OperatorType::kActivationSoftplus) SoftplusBeyondRange(m, e, io.params.p0, io);
  if (op == OperatorType::kActivationShrink) {
    ShrinkBeyondRange(m, e, io.params.p0, io.params.p1, io);
  }
  if (param >= 0 || BeyondRangeResult(op)) b_.EndIf();
  b_.EndIf();
}

void MathEmitter::CeluBeyondRange(Operand m, Operand e, Operand alpha, BeyondRangeIo& io) {
  // y < 0 and 0 < Alpha < inf: q = y/Alpha <= -1 (|y| >= 2^128 > Alpha)
  // from mantissas and exponents, Alpha*exp(q) - Alpha (no cancellation
  // for q <= -1; -Alpha where exp(q) underflows). Elsewhere -inf or +inf
  // is CELU's own limit (Alpha < 0 and y < 0: -inf, as Alpha*expm1(q) for
  // q >= 1 and Alpha < 2^128 cannot be finite).
  Operand use = Tmp(), t = Tmp(), am = Tmp(), ae = Tmp(), q = Tmp(), z = Tmp();
  b_.ILt(use, m, I(0));
  b_.ILt(t, I(0), alpha);  // > +0 and not NaN: the bits as an integer
  b_.And(use, use, t);
  b_.ULt(t, alpha, U(kExpMask));  // finite
  b_.And(use, use, t);
  Frexp(am, ae, alpha);
  b_.Div(q, m, am);
  b_.INeg(ae, ae);
  b_.IAdd(ae, ae, e);
  Ldexp(q, q, ae);
  Exp(z, q);
  b_.Mad(z, z, alpha, alpha.Neg());
  b_.Movc(io.result, use, z, io.result);
  b_.Or(io.done, io.done, use);
}

void MathEmitter::SoftplusBeyondRange(Operand m, Operand e, Operand steepness,
                                      BeyondRangeIo& io) {
  // S*y = u <= 0 (S and y of opposite signs): softplus(u)/S = ln(1 + z)/S
  // with z = e^u, as (ln(1 + z)/z) * (z/S), z/S = e^u * 2^-es / ms for
  // S = ms * 2^es: by Ldexp of e^u where that is normal (u >= -80), else
  // by adding -es to u*log2(e) before exp2 (exact there, |u*log2(e)| >=
  // 115, as in CELU). Nonzero only for a tiny S (u >= -104 needs
  // |S| <= 2^-121); where S*y > 0 the result is y's limit.
  Operand use = Tmp(), sm = Tmp(), se = Tmp(), u = Tmp(), n = Tmp();
  b_.Xor(use, m, steepness);
  b_.ILt(use, use, I(0));
  b_.And(n, steepness, U(0x7fffffffu));
  b_.ULt(sm, n, U(kExpMask));
  b_.And(use, use, sm);
  b_.ULt(sm, U(0), n);
  b_.And(use, use, sm);
  Frexp(sm, se, steepness);
  b_.Mul(u, m, sm);
  b_.IAdd(n, e, se);
  Ldexp(u, u, n);
  Operand z = Tmp(), ratio = Tmp(), far = Tmp(), zs = Tmp(), alt = Tmp(), hi = Tmp(), lo = Tmp();
  Exp(z, u);
  Log1p(ratio, z);
  b_.Div(ratio, ratio, z);
  b_.Lt(far, u, F(-20.0f));  // ln(1 + z)/z = 1 - z/2 + ...: 1 in float32
  b_.Movc(ratio, far, F(1.0f), ratio);
  b_.INeg(n, se);
  Ldexp(zs, z, n);
  ExpArgument(hi, lo, u, nullptr);
  b_.Itof(n, n);
  b_.Add(hi, hi, n);
  ExpFinish(alt, hi, lo, 0);
  b_.Lt(far, u, F(-80.0f));
  b_.Movc(zs, far, alt, zs);
  b_.Div(zs, zs, sm);
  b_.Mul(zs, zs, ratio);
  b_.Movc(io.result, use, zs, io.result);
  b_.Or(io.done, io.done, use);
}

void MathEmitter::ShrinkBeyondRange(Operand m, Operand e, Operand bias, Operand threshold,
                                    BeyondRangeIo& io) {
  // |y| >= 2^128 exceeds any finite Threshold: y - Bias (y > 0) or
  // y + Bias (y < 0), as ((m * 2^(e - 126)) -+ Bias * 2^-126) * 2^126,
  // finite where y is within Bias of FLT_MAX. An infinite (or NaN)
  // Threshold keeps SHRINK's own result. (2^-127 would be a denormal
  // immediate: the H100 flushed it, and Bias with it.)
  Operand use = Tmp(), w = Tmp(), n = Tmp(), bb = Tmp(), nb = Tmp(), neg = Tmp();
  IsFinite(use, threshold);
  b_.IAdd(n, e, I(-126));
  Ldexp(w, m, n);
  b_.Mul(bb, bias, F(0x1p-126f));
  Launder(bb);
  b_.ILt(neg, m, I(0));
  b_.Mov(nb, bb.Neg());
  b_.Movc(bb, neg, bb, nb);
  b_.Add(w, w, bb);
  // Laundered, so that no compiler distributes the product.
  Launder(w);
  b_.Mul(w, w, F(0x1p126f));
  b_.Movc(io.result, use, w, io.result);
  b_.Or(io.done, io.done, use);
}

}  // namespace dmls::gpu
